import { chmodSync, chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabaseForChild } from '../harness/database.js';
import { CLI, freePort, startServiceProcess, type ServiceProcess } from '../harness/service-process.js';
import { runProcess, type ProcessRun } from '../harness/run-process.js';

/**
 * End to end: `controlgraph agent --once` as its own process, against `controlgraph serve` as its own
 * process over a real port. When the tests run as root the agent runs as `nobody`, as the agent is
 * meant to run: unprivileged, reporting what it could not read.
 */

const ADMIN = { username: 'agent-e2e-admin', password: 'agent-e2e-admin-password' };
const NOBODY = 65534;
const asRoot = process.getuid?.() === 0;

let db: { url: string; dispose(): Promise<void> };
let service: ServiceProcess;
let tenantId: string;
let token: string;
let apiKey: string;
let dir: string;

async function api(method: string, path: string, body?: unknown) {
  const res = await fetch(`${service.base}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

type Run = ProcessRun;

/** Runs the agent CLI (as nobody when root); the key goes through the environment, not argv. */
function agent(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return runProcess(process.execPath, [CLI, 'agent', ...args], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, CONTROLGRAPH_AGENT_API_KEY: apiKey, ...env },
    ...(asRoot ? { uid: NOBODY, gid: NOBODY } : {}),
    timeoutMs: 120_000,
  });
}

/** A state directory the agent's user owns. */
function stateDir(name: string): string {
  const path = mkdtempSync(join(dir, `${name}-`));
  if (asRoot) chownSync(path, NOBODY, NOBODY);
  return path;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cg-agent-e2e-'));
  chmodSync(dir, 0o755);
  db = await createDatabaseForChild();
  service = await startServiceProcess({
    DATABASE_URL: db.url,
    CONTROLGRAPH_ADMIN_USERNAME: ADMIN.username,
    CONTROLGRAPH_ADMIN_PASSWORD: ADMIN.password,
    CONTROLGRAPH_VULNDB_SEED: 'off',
    LOG_LEVEL: 'warn',
  });
  const login = await api('POST', '/api/v1/auth/token', ADMIN);
  expect(login.status).toBe(200);
  token = login.body.token;
  tenantId = login.body.tenant_id;
  const created = await api('POST', `/api/v1/tenants/${tenantId}/api-keys`, { name: 'host agents', permissions: ['agents:write'] });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  apiKey = created.body.key;
  // Building dist/ for the child processes takes minutes on a busy machine.
}, 600_000);
afterAll(async () => {
  await service?.stop('SIGKILL');
  await db?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('controlgraph agent', () => {
  it('--once on this machine produces a report the server accepts, and says what it skipped', async () => {
    const monitored = join(dir, 'app.conf');
    writeFileSync(monitored, 'listen = 127.0.0.1\n');
    chmodSync(monitored, 0o644);
    const state = stateDir('once');
    const run = await agent(['--server', service.base, '--once', '--state-dir', state, '--fim', monitored]);
    expect(run.code, run.stderr).toBe(0);
    const summary = JSON.parse(run.stdout);
    expect(summary).toMatchObject({ delivered: true, spool: { pending: 0 }, server_response: { ignored: false, node: 'created' } });
    expect(summary.node_id).toMatch(/^host:local:host\.os\.instance:[0-9a-f]{32}$/);
    expect(summary.cpu_ms).toBeGreaterThan(0);
    expect(summary.max_rss_mb).toBeGreaterThan(0);
    // Every collector ran; whatever was not fully read says why, on stderr too.
    expect(Object.keys(summary.collectors)).toHaveLength(13);
    for (const [name, c] of Object.entries(summary.collectors) as Array<[string, { status: string; reason: string | null }]>) {
      if (c.status !== 'ok') {
        expect(c.reason, name).toBeTruthy();
        expect(run.stderr).toContain(`collector ${name}: ${c.status} (`);
      }
    }
    if (asRoot) {
      expect(run.stderr).toMatch(/running as uid 65534, not root/);
      expect(summary.collectors.local_users).toMatchObject({ status: 'partial', reason: expect.stringMatching(/\/etc\/shadow is not readable/) });
    }
    expect(run.stderr).toMatch(/cycle [0-9a-f-]{36}: delivered \(host:local:host\.os\.instance:/);

    const node = await api('GET', `/api/v1/tenants/${tenantId}/nodes/${encodeURIComponent(summary.node_id)}`);
    expect(node.status).toBe(200);
    expect(node.body).toMatchObject({ type: 'host.os.instance', provider: 'host', region: 'local' });
    const sbom = await api('GET', `/api/v1/tenants/${tenantId}/nodes/${encodeURIComponent(summary.node_id)}/sbom`);
    expect(sbom.status).toBe(200);
    expect(sbom.body.components.length).toBe(summary.collectors.packages.items + (sbom.body.components.some((c: { type: string }) => c.type === 'operating-system') ? 1 : 0));
  });

  it('keeps the report in its spool while the server is down (exit 1), and sends it on the next run', async () => {
    const state = stateDir('outage');
    const closed = `http://127.0.0.1:${await freePort()}`;
    const down = await agent(['--server', closed, '--once', '--retries', '0', '--state-dir', state, '--agent-id', 'e2e-outage', '--disable', 'processes,connections']);
    expect(down.code).toBe(1);
    expect(JSON.parse(down.stdout)).toMatchObject({ delivered: false, spool: { pending: 1 } });
    expect(down.stderr).toMatch(/the server is not reachable: cannot reach http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED; 1 report\(s\) kept in the spool/);
    const up = await agent(['--server', service.base, '--once', '--state-dir', state, '--agent-id', 'e2e-outage', '--disable', 'processes,connections']);
    expect(up.code, up.stderr).toBe(0);
    expect(JSON.parse(up.stdout)).toMatchObject({ delivered: true, spool: { delivered: 2, pending: 0 } });
  });

  it('refuses bad arguments with exit 2 and the usage', async () => {
    const run = await agent(['--once'], { CONTROLGRAPH_AGENT_API_KEY: '' });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^--server is required\n\nUsage: controlgraph agent --server URL --api-key-file FILE/);
    const help = await agent(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/--fim PATH…/);
  });
});
