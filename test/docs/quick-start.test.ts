import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectPath } from '../../src/platform/paths.js';
import { dbKind } from '../harness/database.js';
import { CLI, startServiceProcess, type ServiceProcess } from '../harness/service-process.js';
import { pngSize } from '../exports/helpers.js';
import { runProcess, type ProcessRun } from '../harness/run-process.js';

/**
 * The README's quick start, run as written (issue 21 item 6): its first block starts the service, its
 * second is the session a newcomer pastes. The service is the real process on an empty embedded
 * database in a temporary directory, on a free loopback port, so its first start (migrations, the
 * bootstrap admin from the block's password) is the newcomer's. Two substitutions only: the address
 * (the README's 127.0.0.1:8080 is the started service's port) and `npx controlgraph`, which npx
 * resolves from the checkout's directory while the session runs in a temporary one.
 */

const README = readFileSync(projectPath('README.md'), 'utf8');
const README_ADDRESS = 'http://127.0.0.1:8080';

function quickStartBlocks(): string[] {
  const start = README.indexOf('\n## Quick start\n');
  expect(start, 'the README has a "Quick start" section').toBeGreaterThan(0);
  const body = README.slice(start + 1);
  const section = body.slice(0, body.indexOf('\n## ', 1));
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

/** The start block: environment assignments, then `npm start`. */
function startEnvironment(block: string): Record<string, string> {
  const lines = block.split('\n').filter((l) => l.trim() && !l.trim().startsWith('#'));
  expect(lines).toHaveLength(1);
  const match = /^((?:[A-Z_][A-Z0-9_]*=\S+\s+)*)npm start$/.exec(lines[0]!.trim());
  expect(match, `"${lines[0]}" is assignments then npm start`).not.toBeNull();
  return Object.fromEntries(
    match![1]!
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map((a) => [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)]),
  );
}

function runSession(script: string, cwd: string): Promise<ProcessRun> {
  // A clean environment: nothing of the test process (CONTROLGRAPH_*, AWS_*) leaks into the session.
  // stdin from /dev/null: a socket there makes Debian's bash read /etc/bash.bashrc, as under sshd.
  return runProcess('bash', ['-euo', 'pipefail', '-c', script], { cwd, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cwd, LANG: 'C.UTF-8' } });
}

describe.runIf(dbKind() === 'pglite')('README quick start', () => {
  let service: ServiceProcess;
  let dataDir: string;
  let workDir: string;
  let blocks: string[];

  beforeAll(async () => {
    blocks = quickStartBlocks();
    dataDir = mkdtempSync(join(tmpdir(), 'cg-quick-start-data-'));
    workDir = mkdtempSync(join(tmpdir(), 'cg-quick-start-work-'));
    service = await startServiceProcess({ ...startEnvironment(blocks[0] ?? ''), DATABASE_URL: `pglite://${join(dataDir, 'db')}` });
  }, 300_000);
  afterAll(async () => {
    await service?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(workDir, { recursive: true, force: true });
  });

  it('runs: logs in, creates a tenant, loads the demo estate, audits it, lists findings and draws the diagram', async () => {
    expect(blocks).toHaveLength(2);
    const session = blocks[1]!;
    expect(session).toContain(README_ADDRESS);
    expect(session).toContain('npx controlgraph demo');
    const script = session.replaceAll(README_ADDRESS, service.base).replaceAll('npx controlgraph', `"${process.execPath}" "${CLI}"`);

    const result = await runSession(script, workDir);
    expect(result.code, `${result.stderr}\n${result.stdout}\n--- service ---\n${service.output().slice(-4000)}`).toBe(0);

    expect(result.stdout).toMatch(/loaded the demo estate into tenant [0-9a-f-]{36}: \d+ nodes \(\d+ new, 0 updated\)/);
    const nodes = Number(/: (\d+) nodes/.exec(result.stdout)![1]);
    expect(nodes).toBeGreaterThan(30);
    // The audit's summary, as jq printed it.
    expect(result.stdout).toMatch(/"status": "succeeded"/);
    const evaluated = Number(/"resources": (\d+)/.exec(result.stdout)?.[1]);
    expect(evaluated).toBeGreaterThan(0);
    expect(evaluated).toBeLessThanOrEqual(nodes);
    expect(Number(/"new_findings": (\d+)/.exec(result.stdout)?.[1])).toBeGreaterThan(0);
    // The most severe findings: one line each, "SEVERITY  title  resource".
    const findings = result.stdout.split('\n').filter((l) => /^(CRITICAL|HIGH) {2}.+ {2}aws:/.test(l));
    expect(findings.length).toBeGreaterThan(0);

    if (process.env.QUICK_START_PRINT) console.log(result.stdout, result.stderr);
    const png = readFileSync(join(workDir, 'demo-estate.png'));
    expect(pngSize(png).width).toBeGreaterThan(500);
  }, 300_000);
});
