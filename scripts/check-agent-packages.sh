#!/bin/sh
# CI's check of the agent as it ships (issue 28): builds the bundle and the linux-x64 executable,
# packages them (.deb, and .rpm where rpmbuild is installed), then checks what a host would get: the
# executable runs without a checkout and says its version, each package holds the executable, the
# config file and the unit, and the unit's hardening scores within the threshold of
# `systemd-analyze security` (where systemd-analyze exists). Prints one line per check; exits
# non-zero on the first that fails.
set -eu
cd "$(dirname "$0")/.."
VERSION=$(node -p "require('./package.json').version")
UNIT=packaging/agent/controlgraph-agent.service

node scripts/build-agent.mjs >/dev/null
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
