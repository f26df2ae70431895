#!/usr/bin/env node
// Builds the web console (web/ -> web/dist) when its sources changed since the last build.
// `npm start` and the browser tests call it; `--force` always builds. The inputs' hash is kept in
// web/dist/.build-hash, so an unchanged console costs one hash of its sources (well under a second).
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const web = join(root, 'web');
const stampFile = join(web, 'dist', '.build-hash');
const inputs = ['src', 'public', 'build', 'index.html', 'preloaded-routes.json', 'vite.config.ts', 'tsconfig.json'];

function files(path) {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .sort()
    .flatMap((name) => files(join(path, name)));
}

/** A hash of every source of the build, and of the installed dependencies (the lock file). */
export function consoleSourceHash() {
  const hash = createHash('sha256');
  for (const file of [...inputs.flatMap((input) => files(join(web, input))), join(root, 'package-lock.json')]) {
    hash.update(relative(root, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
}

async function viteBuild(outDir, quiet) {
  const { build } = await import('vite');
  await build({ configFile: join(web, 'vite.config.ts'), logLevel: quiet ? 'error' : 'warn', build: { outDir, emptyOutDir: true } });
}

/** Builds web/dist (what `npm start` serves) when stale, or when forced. Returns whether it built. */
export async function buildConsoleIfStale({ force = false, quiet = false } = {}) {
  const wanted = consoleSourceHash();
  const built = existsSync(stampFile) ? readFileSync(stampFile, 'utf8').trim() : null;
  if (!force && built === wanted && existsSync(join(web, 'dist', 'index.html'))) return false;
  if (!quiet) console.error('building the web console (web/ -> web/dist) ...');
  await viteBuild(join(web, 'dist'), quiet);
  writeFileSync(stampFile, wanted + '\n');
  return true;
}

/**
 * A build of the current sources in .cache/web-build/<hash>, made once per distinct source: test runs
 * serve their own copy, so a run never sees another run rebuild the files under it. Built beside the
 * final name and renamed into place, so a concurrent run finds a whole build or none.
 */
export async function cachedConsoleBuild() {
  const hash = consoleSourceHash();
  const cache = join(root, '.cache', 'web-build');
  const dir = join(cache, hash.slice(0, 16));
  if (existsSync(join(dir, 'index.html'))) return dir;
  const partial = `${dir}.${process.pid}.partial`;
  await viteBuild(partial, true);
  try {
    renameSync(partial, dir);
  } catch (error) {
    // Another run finished the same build first: theirs is as good as ours.
    rmSync(partial, { recursive: true, force: true });
    if (!existsSync(join(dir, 'index.html'))) throw error;
  }
  for (const name of readdirSync(cache)) {
    const path = join(cache, name);
    if (path !== dir && Date.now() - statSync(path).mtimeMs > 86_400_000) rmSync(path, { recursive: true, force: true });
  }
  return dir;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  buildConsoleIfStale({ force: process.argv.includes('--force') }).catch((error) => {
    console.error(`the web console did not build: ${error.message}`);
    process.exit(1);
  });
}
