import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import { projectPath } from '../../src/platform/paths.js';

const run = promisify(execFile);
const DIR = projectPath('.cache', 'dist-build');
const STALE_LOCK_MS = 10 * 60_000;

/**
 * Process-level tests spawn bin/controlgraph.js, which runs dist/. The build (tsc, tens of seconds on
 * a busy machine) happens once per test run and only when such a test runs: the first test to ask
 * builds under a lock directory, the rest of the run reads the recorded outcome.
 */
export async function ensureDistBuilt(): Promise<void> {
  const stamp = join(DIR, `${inject('testRunId')}.result`);
  const lock = join(DIR, 'lock');
  mkdirSync(DIR, { recursive: true });
  for (;;) {
    if (existsSync(stamp)) {
      const error = readFileSync(stamp, 'utf8');
      if (error) throw new Error(error);
      return;
    }
    try {
      mkdirSync(lock);
    } catch {
      // A build killed half-way leaves its lock behind.
      if (existsSync(lock) && Date.now() - statSync(lock).mtimeMs > STALE_LOCK_MS) rmSync(lock, { recursive: true, force: true });
      await new Promise((resolve) => setTimeout(resolve, 250));
      continue;
    }
    try {
      if (!existsSync(stamp)) writeFileSync(stamp, await build());
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
}

async function build(): Promise<string> {
  try {
    await run(process.execPath, [projectPath('node_modules', 'typescript', 'bin', 'tsc'), '-p', projectPath('tsconfig.build.json')]);
    return '';
  } catch (error) {
    const output = error as { stdout?: string; stderr?: string };
    return `tsc -p tsconfig.build.json failed:\n${output.stdout ?? ''}${output.stderr ?? ''}`;
  }
}
