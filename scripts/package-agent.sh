#!/bin/sh
# Packages the built agent (scripts/build-agent.mjs) as a .deb and an .rpm for each architecture
# whose executable is in dist-agent/: dist-agent/packages/controlgraph-agent_<v>_<arch>.deb and
# controlgraph-agent-<v>-1.<arch>.rpm. Needs dpkg-deb (dpkg) and rpmbuild (Debian: apt-get install rpm);
# a missing rpmbuild skips the .rpm with a message. The executables are packaged as built: never
# stripped (the agent is in an ELF note of the Node binary).
set -eu
cd "$(dirname "$0")/.."
DIST=dist-agent
OUT=$DIST/packages
SRC=packaging/agent
VERSION=$(node -p "require('./package.json').version")
rm -rf "$OUT" "$DIST/pkgroot"
mkdir -p "$OUT"

payload() { # payload ROOT EXECUTABLE: the installed files, as they land on the host
  install -D -m 0755 "$2" "$1/usr/bin/controlgraph-agent"
  install -D -m 0644 "$SRC/controlgraph-agent.service" "$1/usr/lib/systemd/system/controlgraph-agent.service"
  install -D -m 0644 "$SRC/agent.conf" "$1/etc/controlgraph-agent/agent.conf"
  install -D -m 0644 "$SRC/README" "$1/usr/share/doc/controlgraph-agent/README"
  install -d -m 0700 "$1/var/lib/controlgraph-agent"
}

built=0
for arch in x64 arm64; do
  exe=$DIST/controlgraph-agent-linux-$arch
  [ -f "$exe" ] || { echo "no $exe: skipping linux-$arch"; continue; }
  case $arch in x64) deb_arch=amd64; rpm_arch=x86_64 ;; arm64) deb_arch=arm64; rpm_arch=aarch64 ;; esac

  root=$DIST/pkgroot/deb-$arch
  payload "$root" "$exe"
  mkdir -p "$root/DEBIAN"
  cp "$SRC/deb/postinst" "$SRC/deb/prerm" "$SRC/deb/postrm" "$root/DEBIAN/"
  echo /etc/controlgraph-agent/agent.conf > "$root/DEBIAN/conffiles"
  cat > "$root/DEBIAN/control" <<CONTROL
Package: controlgraph-agent
Version: $VERSION
Architecture: $deb_arch
Maintainer: ControlGraph <agent@controlgraph.example.com>
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Depends: passwd
Section: admin
Priority: optional
Description: ControlGraph host agent
 Scans this host (packages, processes, sockets, users, sudoers, firewall,
 services, file hashes) every cycle and sends the report to a ControlGraph
 service. One executable with Node.js built in: no runtime dependencies.
CONTROL
  dpkg-deb --root-owner-group -Zxz --build "$root" "$OUT/controlgraph-agent_${VERSION}_${deb_arch}.deb" >/dev/null
  echo "built $OUT/controlgraph-agent_${VERSION}_${deb_arch}.deb"

  if command -v rpmbuild >/dev/null; then
    rroot=$(pwd)/$DIST/pkgroot/rpm-$arch
    payload "$rroot/payload" "$exe"
    rpmbuild -bb --quiet --target "$rpm_arch" \
      --define "_topdir $rroot/top" --define "agent_version $VERSION" --define "payload $rroot/payload" \
      --define "_rpmdir $(pwd)/$OUT" --define "_build_name_fmt %%{NAME}-%%{VERSION}-%%{RELEASE}.%%{ARCH}.rpm" \
      --define "_binary_payload w6.xzdio" \
      "$SRC/rpm/controlgraph-agent.spec"
    echo "built $OUT/controlgraph-agent-$VERSION-1.$rpm_arch.rpm"
  else
    echo "rpmbuild not found (apt-get install rpm): no .rpm for linux-$arch"
  fi
  built=$((built + 1))
done
rm -rf "$DIST/pkgroot"
[ "$built" -gt 0 ] || { echo "no executable in $DIST: run npm run build:agent first" >&2; exit 1; }
