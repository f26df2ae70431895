#!/usr/bin/env node
// Builds the standalone host agent (issue 28) from src/agent alone:
//   dist-agent/controlgraph-agent.cjs              one JavaScript file, no runtime dependencies (node >= 20.12)
//   dist-agent/controlgraph-agent-linux-x64        a Node single executable application (no Node needed on the host)
//   dist-agent/controlgraph-agent-linux-arm64      the same for arm64, when --node-arm64 names an arm64 node binary
//   dist-agent/SHA256SUMS
// Usage: node scripts/build-agent.mjs [--js-only] [--node-x64 PATH] [--node-arm64 PATH] [--out DIR]
// --node-x64 defaults to the node running this script when it is linux-x64. The SEA blob carries the
// script only (no code cache, no snapshot), so one blob serves every architecture of the same Node
// version: the node binaries given must be the version that runs this script.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const option = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const out = option('--out') ? resolve(option('--out')) : join(root, 'dist-agent');
const jsOnly = args.includes('--js-only');
const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
const sha256 = (path) => createHash('sha256').update(readFileSync(path)).digest('hex');

/** Fails the build if anything outside src/agent (or node_modules) went into the bundle. */
function checkInputs(metafile) {
  // (node_modules may be a symlink, so a library's path can lie outside the checkout.)
  const foreign = Object.keys(metafile.inputs).filter((p) => !p.startsWith('src/agent/') && !p.startsWith('precompiled:') && !/(^|\/)node_modules\//.test(p));
  if (foreign.length) throw new Error(`the agent bundle must hold src/agent and libraries only, but it includes: ${foreign.slice(0, 10).join(', ')}`);
}

/**
 * The item checks compiled now, not on every host every cycle (src/agent/item-checks.ts): the
 * schemas are compiled by Ajv into standalone code, which replaces that module's `itemChecks`.
 */
async function precompiledItemChecks() {
  const generator = await build({
    absWorkingDir: root,
    stdin: {
      contents: `import standaloneCode from 'ajv/dist/standalone/index.js';
        import { itemAjv } from './src/agent/item-checks.ts';
        import { COLLECTIONS } from './src/agent/report-schema.ts';
        const ajv = itemAjv({ code: { source: true } });
        process.stdout.write(standaloneCode(ajv, Object.fromEntries(COLLECTIONS.map((c) => [c, c]))));`,
      resolveDir: root,
      loader: 'ts',
    },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    write: false,
    logLevel: 'warning',
  });
  const code = execFileSync(process.execPath, ['-'], { input: generator.outputFiles[0].text, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return `const checks = (() => { const module = { exports: {} }; const exports = module.exports; ${code}; return module.exports; })();
    export function itemChecks() {
      return new Map(Object.keys(checks).filter((k) => k !== 'default').map((k) => [k, checks[k]]));
    }`;
}

const itemChecksPlugin = (contents) => ({
  name: 'precompiled-item-checks',
  setup(b) {
    b.onResolve({ filter: /^\.\/item-checks\.js$/ }, (args) =>
      args.importer.endsWith(join('src', 'agent', 'cycle.ts')) ? { path: 'item-checks', namespace: 'precompiled' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'precompiled' }, () => ({ contents, loader: 'js', resolveDir: root }));
  },
});

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const bundle = join(out, 'controlgraph-agent.cjs');
const result = await build({
  plugins: [itemChecksPlugin(await precompiledItemChecks())],
  absWorkingDir: root,
  entryPoints: ['src/agent/main.ts'],
  outfile: bundle,
  bundle: true,
  platform: 'node',
  // CommonJS: a Node 20 single executable application runs a CommonJS script.
  format: 'cjs',
  target: 'node20',
  minify: true,
  legalComments: 'eof',
  metafile: true,
  banner: { js: '#!/usr/bin/env node' },
  define: { __CONTROLGRAPH_AGENT_VERSION__: JSON.stringify(version) },
  logLevel: 'warning',
});
checkInputs(result.metafile);
chmodSync(bundle, 0o755);
writeFileSync(join(out, 'meta.json'), JSON.stringify(result.metafile));
const built = [bundle];
console.log(`${relative(root, bundle)}: ${statSync(bundle).size} bytes, ${Object.keys(result.metafile.inputs).length} inputs`);

if (!jsOnly) {
  const targets = [];
  const x64 = option('--node-x64') ?? (process.platform === 'linux' && process.arch === 'x64' ? process.execPath : undefined);
  if (x64) targets.push(['linux-x64', x64]);
  if (option('--node-arm64')) targets.push(['linux-arm64', option('--node-arm64')]);
  if (targets.length) {
    const blob = join(out, 'sea-prep.blob');
    const config = join(out, 'sea-config.json');
    writeFileSync(config, JSON.stringify({ main: bundle, output: blob, disableExperimentalSEAWarning: true, useSnapshot: false, useCodeCache: false }));
    execFileSync(process.execPath, ['--experimental-sea-config', config], { stdio: 'inherit' });
    for (const [name, node] of targets) {
      const exe = join(out, `controlgraph-agent-${name}`);
      copyFileSync(node, exe);
      chmodSync(exe, 0o755);
      execFileSync(
        process.execPath,
        [join(root, 'node_modules', 'postject', 'dist', 'cli.js'), exe, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2'],
        { stdio: ['ignore', 'ignore', 'inherit'] },
      );
      built.push(exe);
      console.log(`${relative(root, exe)}: ${statSync(exe).size} bytes (node ${node})`);
    }
    rmSync(blob);
    rmSync(config);
  } else {
    console.log('no linux-x64 node here and no --node-x64/--node-arm64 given: only the JavaScript bundle was built');
  }
}

const sums = built.map((p) => `${sha256(p)}  ${relative(out, p)}`).join('\n');
writeFileSync(join(out, 'SHA256SUMS'), `${sums}\n`);
console.log(sums);
