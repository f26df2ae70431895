import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { agentCommand, agentHelp } from './cli.js';

/**
 * Entry point of the standalone agent (`controlgraph-agent`), the one file scripts/build-agent.mjs
 * bundles: the JavaScript bundle and the single executable application are both built from here.
 * The version is put in by the build (esbuild's `define`), not read from a package.json the host
 * does not have.
 */

declare const __CONTROLGRAPH_AGENT_VERSION__: string | undefined;
const VERSION = typeof __CONTROLGRAPH_AGENT_VERSION__ === 'string' ? __CONTROLGRAPH_AGENT_VERSION__ : '0.0.0-unbuilt';

async function isSingleExecutable(): Promise<boolean> {
  try {
    const sea = await import('node:sea');
    return sea.isSea();
  } catch {
    return false;
  }
}

function sha256Of(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(path)
      .on('data', (chunk) => hash.update(chunk))
      .on('error', reject)
      .on('end', () => resolve(hash.digest('hex')));
  });
}

/**
 * `controlgraph-agent <version> sha256:<hex> <file>`: the hash of the file that is running (the
 * executable, or the bundle under node), computed now, so it can be compared with the release's
 * SHA256SUMS and catches a binary changed after the build.
 */
async function versionLine(): Promise<string> {
  const file = (await isSingleExecutable()) ? process.execPath : process.argv[1];
  if (!file) return `controlgraph-agent ${VERSION}`;
  return `controlgraph-agent ${VERSION} sha256:${await sha256Of(file)} ${file}`;
}

const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('-h')) {
  console.log(agentHelp('controlgraph-agent'));
} else {
  agentCommand(args, { name: 'controlgraph-agent', version: VERSION, versionLine }).catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
