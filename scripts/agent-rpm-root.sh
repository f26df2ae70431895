#!/bin/sh
# Installs, upgrades and removes the agent's .rpm with its scriptlets in a Debian root made with
# debootstrap, through the host's rpm (`rpm --root` runs the scriptlets chrooted into the root, where
# groupadd, useradd and getent exist; systemctl does not, and the scriptlets skip it without
# /run/systemd/system, as on any host without systemd). No RPM distribution runs here: this checks
# what the package does, not a RHEL host. Needs root and the rpm package.
#
#   debootstrap --variant=minbase bookworm /tmp/debroot http://deb.debian.org/debian   # once
#   scripts/agent-rpm-root.sh /tmp/debroot dist-agent/packages/controlgraph-agent-<v>-1.x86_64.rpm
set -eu
ROOT=$1 RPM=$(realpath "$2")
[ "$(id -u)" = 0 ] || { echo "run as root (chroot)" >&2; exit 1; }
step() { printf '\n== %s\n' "$*"; }
in_root() { env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin chroot "$ROOT" "$@"; }
# Debian's rpm warns that it is not Debian's package manager; the warning is not the test's.
rpm_root() { rpm --root "$ROOT" --dbpath /var/lib/rpm "$@" 2>&1 | grep -v -e 'should not be used directly' -e 'assuming you know what you are doing' || true; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

step "install $(basename "$RPM") (with its scriptlets)"
rpm_root -i --nodeps "$RPM"
rpm --root "$ROOT" --dbpath /var/lib/rpm -q controlgraph-agent 2>/dev/null
in_root getent passwd controlgraph-agent
in_root sh -c 'ls -l /usr/bin/controlgraph-agent /usr/lib/systemd/system/controlgraph-agent.service /etc/controlgraph-agent/agent.conf; ls -ld /var/lib/controlgraph-agent'
in_root /usr/bin/controlgraph-agent --version

step "upgrade to the same files as version <v>.1 (a configuration the operator changed is kept)"
echo '# changed by the operator' >> "$ROOT/etc/controlgraph-agent/agent.conf"
# The package's own files, rebuilt from the same spec under a higher version: what an upgrade does to the files.
VERSION=$(rpm -qp --qf '%{VERSION}' "$RPM" 2>/dev/null) ARCH=$(rpm -qp --qf '%{ARCH}' "$RPM" 2>/dev/null)
mkdir -p "$WORK/payload"
(cd "$WORK/payload" && rpm2cpio "$RPM" | cpio -idm --quiet)
rpmbuild -bb --quiet --target "$ARCH" --define "_topdir $WORK/top" --define "agent_version $VERSION.1" \
  --define "payload $WORK/payload" --define "_rpmdir $WORK" --define "_build_name_fmt upgrade.rpm" \
  "$(dirname "$0")/../packaging/agent/rpm/controlgraph-agent.spec"
rpm_root -U --nodeps "$WORK/upgrade.rpm"
rpm --root "$ROOT" --dbpath /var/lib/rpm -q controlgraph-agent 2>/dev/null
grep -q 'changed by the operator' "$ROOT/etc/controlgraph-agent/agent.conf" || { echo "FAIL the upgrade replaced the operator's config"; exit 1; }
echo "the operator's change is kept"
in_root getent passwd controlgraph-agent >/dev/null && echo "the agent's user is still there"

step "remove"
rpm_root -e --nodeps controlgraph-agent
for f in /usr/bin/controlgraph-agent /usr/lib/systemd/system/controlgraph-agent.service; do
  [ ! -e "$ROOT$f" ] || { echo "FAIL $f is still there after rpm -e"; exit 1; }
done
echo "the executable and the unit are gone"
# rpm keeps a changed config file as .rpmsave on removal; an unchanged one goes.
ls "$ROOT/etc/controlgraph-agent/" 2>/dev/null || true
echo "ok"
