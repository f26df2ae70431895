#!/bin/sh
# Installs, runs, upgrades, removes and purges the agent's .deb in a Debian root made with debootstrap
# (no container, no systemd: the agent runs as its user through chroot --userspec, as the unit would).
# Needs root. Makes nothing on the network itself except the agent's reports to --server.
#
#   debootstrap --variant=minbase bookworm /tmp/debroot http://deb.debian.org/debian   # once
#   scripts/agent-deb-chroot.sh /tmp/debroot dist-agent/packages/controlgraph-agent_<v>_amd64.deb \
#       http://127.0.0.1:8080 /path/to/key-file
#
# The server must listen on loopback (the chroot shares the host's network). The upgrade installs the
# same package rebuilt as version <v>+upgrade, which is what an upgrade does to the files.
set -eu
ROOT=$1 DEB=$2 SERVER=$3 KEY=$4
[ "$(id -u)" = 0 ] || { echo "run as root (chroot, mount)" >&2; exit 1; }
WORK=$(mktemp -d)
cleanup() {
  umount "$ROOT/proc" 2>/dev/null || true
  rm -rf "$WORK" "$ROOT/tmp/agent-test"
}
trap cleanup EXIT
step() { printf '\n== %s\n' "$*"; }
# A clean environment, as systemd gives a service: nothing of the caller's (NODE_OPTIONS, CA files) leaks in.
in_root() { env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin chroot "$ROOT" "$@"; }
as_agent() { env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin chroot --userspec=controlgraph-agent:controlgraph-agent "$ROOT" "$@"; }

mount -t proc proc "$ROOT/proc"
mkdir -p "$ROOT/tmp/agent-test"

step "the root has no Node.js"
if in_root sh -c 'command -v node || command -v nodejs'; then echo "node is installed in $ROOT: not a fair test" >&2; exit 1; fi
echo "no node in $ROOT"; in_root sh -c '. /etc/os-release; echo "$PRETTY_NAME"'

step "install $(basename "$DEB")"
cp "$DEB" "$ROOT/tmp/agent-test/agent.deb"
in_root dpkg -i /tmp/agent-test/agent.deb
in_root dpkg -s controlgraph-agent | grep -E '^(Status|Version|Architecture):'
in_root sh -c 'getent passwd controlgraph-agent; ls -ld /etc/controlgraph-agent /var/lib/controlgraph-agent; ls -l /usr/bin/controlgraph-agent /usr/lib/systemd/system/controlgraph-agent.service /etc/controlgraph-agent/agent.conf'
in_root /usr/bin/controlgraph-agent --version

step "configure: server, and a key file readable by the agent only"
in_root sed -i "s#^server = .*#server = $SERVER#" /etc/controlgraph-agent/agent.conf
cp "$KEY" "$ROOT/etc/controlgraph-agent/api-key"
in_root chown controlgraph-agent:controlgraph-agent /etc/controlgraph-agent/api-key
in_root chmod 640 /etc/controlgraph-agent/api-key
echo "a key file the group can read is refused:"
set +e; as_agent /usr/bin/controlgraph-agent --config /etc/controlgraph-agent/agent.conf --once > "$WORK/refused.txt" 2>&1; code=$?; set -e
head -1 "$WORK/refused.txt"; echo "exit status $code"
[ "$code" = 2 ] || { echo "expected exit status 2" >&2; exit 1; }
in_root chmod 600 /etc/controlgraph-agent/api-key

step "one cycle as controlgraph-agent"
as_agent /usr/bin/controlgraph-agent --config /etc/controlgraph-agent/agent.conf --once > "$WORK/first.json"
node -e "const s=require('$WORK/first.json'); console.log(JSON.stringify({agent_id:s.agent_id,delivered:s.delivered,node_id:s.node_id,packages:s.collectors.packages,cpu_ms:s.cpu_ms,process_cpu_ms:s.process_cpu_ms,max_rss_mb:s.max_rss_mb,statuses:Object.fromEntries(Object.entries(s.collectors).map(([k,v])=>[k,v.status]))}, null, 1))"

step "upgrade to the same package as version +upgrade (configuration edited by the admin is kept)"
dpkg-deb -R "$DEB" "$WORK/pkg"
sed -i 's/^Version: \(.*\)$/Version: \1+upgrade/' "$WORK/pkg/DEBIAN/control"
dpkg-deb --root-owner-group -Znone -b "$WORK/pkg" "$ROOT/tmp/agent-test/agent-upgrade.deb" >/dev/null
in_root dpkg -i /tmp/agent-test/agent-upgrade.deb
in_root dpkg -s controlgraph-agent | grep -E '^Version:'
in_root grep '^server' /etc/controlgraph-agent/agent.conf
as_agent /usr/bin/controlgraph-agent --config /etc/controlgraph-agent/agent.conf --once > "$WORK/second.json"
node -e "const a=require('$WORK/first.json'), b=require('$WORK/second.json'); console.log('after upgrade: delivered', b.delivered, '; same agent id', a.agent_id===b.agent_id, '; same node', a.node_id===b.node_id)"

step "remove (configuration and state stay), then purge"
in_root dpkg -r controlgraph-agent
in_root sh -c 'ls /usr/bin/controlgraph-agent 2>&1; ls /etc/controlgraph-agent /var/lib/controlgraph-agent'
in_root dpkg -P controlgraph-agent
in_root sh -c 'ls -d /etc/controlgraph-agent /var/lib/controlgraph-agent 2>&1; dpkg -s controlgraph-agent 2>&1 | head -1; getent passwd controlgraph-agent'
echo; echo "done"
