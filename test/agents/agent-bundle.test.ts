import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, createApiKey, type TenantFixture } from '../harness/identity.js';
import { projectPath } from '../../src/platform/paths.js';
import { fixture, nodePath } from './helpers.js';
import { runProcess, type ProcessRun } from '../harness/run-process.js';

/**
 * The packaged agent's code as it ships: scripts/build-agent.mjs bundles src/agent into one file
 * (the same file the single executable carries), and that file alone, run by node from a temporary
 * directory with no node_modules, reports the fixture host to a real app over a real port. The key
 * comes from a 0600 file named in a configuration file, as the package installs it; a key file
 * others can read is refused with exit 2.
 */

const run = promisify(execFile);
let t: TestApp;
let tenant: TenantFixture;
let key: string;
let base: string;
let dir: string;
let bundle: string;

type Run = ProcessRun;

function agent(args: string[]): Promise<Run> {
  // No inherited environment: the key must come from the file, not CONTROLGRAPH_AGENT_API_KEY.
  return runProcess(process.execPath, [bundle, ...args], { cwd: dir, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, timeoutMs: 120_000 });
}

function keyFile(name: string, mode: number): string {
  const path = join(dir, name);
  writeFileSync(path, `${key}\n`);
  chmodSync(path, mode);
  return path;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cg-agent-bundle-'));
  await run(process.execPath, [projectPath('scripts', 'build-agent.mjs'), '--js-only', '--out', join(dir, 'dist')], { cwd: projectPath() });
  bundle = join(dir, 'dist', 'controlgraph-agent.cjs');
  t = await createTestApp({ clockStart: new Date(Date.now() + 60_000).toISOString() });
  tenant = await buildTenant(t);
  key = (await createApiKey(t, tenant, { permissions: ['agents:write'] })).key;
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
}, 300_000);
afterAll(async () => {
  await t?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the bundled agent', () => {
  it('holds src/agent and its libraries only', () => {
    const meta = JSON.parse(readFileSync(join(dir, 'dist', 'meta.json'), 'utf8')) as { inputs: Record<string, unknown> };
    const inputs = Object.keys(meta.inputs);
    expect(inputs).toContain('src/agent/main.ts');
    expect(inputs.filter((p) => !p.startsWith('src/agent/') && !p.startsWith('precompiled:') && !/(^|\/)node_modules\//.test(p))).toEqual([]);
    // The item checks are compiled by the build: Ajv's compiler does not ship, only its runtime helpers.
    expect(inputs).toContain('precompiled:item-checks');
    expect(inputs.filter((p) => /ajv\/dist\/(core|compile\/index)\.js$/.test(p))).toEqual([]);
  });

  it('--version prints the version and the SHA-256 of the file that runs', async () => {
    const res = await agent(['--version']);
    expect(res.code, res.stderr).toBe(0);
    const digest = createHash('sha256').update(readFileSync(bundle)).digest('hex');
    const version = (JSON.parse(readFileSync(projectPath('package.json'), 'utf8')) as { version: string }).version;
    expect(res.stdout.trim()).toBe(`controlgraph-agent ${version} sha256:${digest} ${bundle}`);
  });

  it('refuses a key file that group or others can read (exit 2), and a key on the command line', async () => {
    for (const mode of [0o644, 0o640, 0o604]) {
      const path = keyFile(`key-${mode.toString(8)}`, mode);
      const res = await agent(['--server', base, '--api-key-file', path, '--once', '--state-dir', join(dir, 'refused')]);
      expect(res.code, res.stderr).toBe(2);
      expect(res.stderr).toContain(
        `refusing the API key file ${path}: its mode 0${mode.toString(8)} lets group or others read it; make it readable by the agent's user only (chmod 600 ${path})`,
      );
      expect(res.stdout).toBe('');
    }
    const onArgv = await agent(['--server', base, '--api-key', key, '--once']);
    expect(onArgv.code).toBe(2);
    expect(onArgv.stderr).toMatch(/^--api-key is not accepted: a key on the command line is visible to every user/);
  });

  it('reports the host from its configuration file, and the host appears with its packages', async () => {
    const conf = join(dir, 'agent.conf');
    writeFileSync(
      conf,
      [
        `server = ${base}`,
        `api_key_file = ${keyFile('api-key', 0o600)}`,
        'interval = 5m',
        'collectors = all',
        `state_dir = ${join(dir, 'state')}`,
        `root = ${fixture('root')}`,
        'spool_max_mb = 16',
        'spool_max_age = 2d',
        '',
      ].join('\n'),
    );
    const res = await agent(['--config', conf, '--once', '--agent-id', 'bundled-agent']);
    expect(res.code, res.stderr).toBe(0);
    const summary = JSON.parse(res.stdout);
    expect(summary).toMatchObject({ agent_id: 'bundled-agent', delivered: true, spool: { pending: 0 }, server_response: { ignored: false, node: 'created' } });
    expect(summary.collectors.packages).toMatchObject({ status: 'ok' });
    expect(summary.collectors.packages.items).toBeGreaterThan(0);
    const node = await call(t.app, tenant.admin.token, { method: 'GET', url: nodePath(tenant.id, summary.node_id), expect: 200 });
    expect(node.json()).toMatchObject({ type: 'host.os.instance', provider: 'host' });
    const sbom = await call(t.app, tenant.admin.token, { method: 'GET', url: `${nodePath(tenant.id, summary.node_id)}/sbom`, expect: 200 });
    const libraries = (sbom.json() as { components: Array<{ type: string }> }).components.filter((c) => c.type !== 'operating-system');
    expect(libraries).toHaveLength(summary.collectors.packages.items);
  });
});
