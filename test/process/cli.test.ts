import { execFile } from 'node:child_process';
import http from 'node:http';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { CLI, ensureDistBuilt, startServiceProcess, type ServiceProcess } from '../harness/service-process.js';
import { createDatabaseForChild } from '../harness/database.js';
import { openDatabase } from '../../src/platform/db/database.js';
import '../../src/modules/compliance/rollups/tables.js';

const run = promisify(execFile);

describe('controlgraph CLI', () => {
  it('is built', () => ensureDistBuilt(), 300_000);

  it('prints usage and per-command help', async () => {
    const usage = await run(process.execPath, [CLI, '--help']);
    expect(usage.stdout).toMatch(/Usage: controlgraph <command>/);
    expect(usage.stdout).toMatch(/serve/);
    expect(usage.stdout).toMatch(/migrate/);
    const serveHelp = await run(process.execPath, [CLI, 'serve', '--help']);
    expect(serveHelp.stdout).toMatch(/--role api\|worker\|scheduler/);
  });

  it('refuses an unknown command with exit code 2', async () => {
    await expect(run(process.execPath, [CLI, 'frobnicate'])).rejects.toMatchObject({ code: 2 });
  });

  it('migrate brings an empty database up to date, then reports it current', async () => {
    const db = await createDatabaseForChild();
    try {
      const again = await run(process.execPath, [CLI, 'migrate'], { env: { ...process.env, DATABASE_URL: db.url } });
      // The test database is already migrated from the template.
      expect(again.stdout.trim()).toBe('database is up to date');
    } finally {
      await db.dispose();
    }
  });
});

describe('controlgraph check', () => {
  // Five CLI processes in turn, each opening the embedded database: minutes under CI's load.
  it('compares the read model with the findings: exit 0 when equal, 1 naming a difference, --repair rebuilds it', { timeout: 300_000 }, async () => {
    const db = await createDatabaseForChild();
    const env = { ...process.env, DATABASE_URL: db.url, CONTROLGRAPH_ADMIN_USERNAME: ADMIN.username, CONTROLGRAPH_ADMIN_PASSWORD: ADMIN.password };
    try {
      // `user create` bootstraps the default tenant and workspace on the files.
      await run(process.execPath, [CLI, 'user', 'create', '--username', 'checker', '--password', 'correct-horse-battery', '--tenant', 'default', '--role', 'read-only'], { env });
      const clean = await run(process.execPath, [CLI, 'check'], { env });
      expect(clean.stdout).toMatch(/read model: 1 workspace\(s\) compared, 0 difference\(s\)/);
      // A count no write made: what a write path that skipped the read model would leave.
      const handle = await openDatabase(db.url);
      const ws = await handle.db.selectFrom('workspaces').select('id').executeTakeFirstOrThrow();
      await handle.db.insertInto('unknown_workspace_rollup').values({ workspace_id: ws.id, resources: 3 }).execute();
      await handle.close();
      const broken = await run(process.execPath, [CLI, 'check'], { env }).catch((error: { code: number; stdout: string }) => error);
      expect(broken).toMatchObject({ code: 1 });
      expect(broken.stdout).toContain(`unknown_workspace_rollup workspace ${ws.id} {}: stored 3, recomputed 0`);
      const repaired = await run(process.execPath, [CLI, 'check', '--repair'], { env });
      expect(repaired.stdout).toContain('repaired: 1 workspace(s) rebuilt from their findings');
      expect((await run(process.execPath, [CLI, 'check'], { env })).stdout).toContain('0 difference(s)');
    } finally {
      await db.dispose();
    }
  });
});

describe('controlgraph serve', () => {
  let db: { url: string; dispose(): Promise<void> };
  let service: ServiceProcess;
  beforeAll(async () => {
    db = await createDatabaseForChild();
    service = await startServiceProcess({
      DATABASE_URL: db.url,
      CONTROLGRAPH_ADMIN_USERNAME: ADMIN.username,
      CONTROLGRAPH_ADMIN_PASSWORD: ADMIN.password,
    });
  });
  afterAll(async () => {
    await service?.stop('SIGKILL');
    await db?.dispose();
  });

  it('serves /healthz and the OpenAPI document over a real port', async () => {
    const health = await fetch(`${service.base}/healthz`);
    expect(await health.json()).toEqual({ status: 'ok', db_connected: true });
    const doc = YAML.parse(await (await fetch(`${service.base}/api/v1/openapi.yaml`)).text());
    expect(doc.openapi).toBe('3.0.3');
    expect(doc.paths['/healthz']).toBeDefined();
  });

  it('logs structured JSON lines', () => {
    const first = service
      .output()
      .split('\n')
      .find((line) => line.startsWith('{'));
    expect(JSON.parse(first!)).toMatchObject({ service: 'controlgraph', level: expect.any(Number) });
  });

  it('shuts down gracefully on SIGTERM: finishes the request in flight, stops listening and exits 0', async () => {
    const login = await fetch(`${service.base}/api/v1/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(ADMIN),
    });
    const { token, tenant_id: tenantId } = (await login.json()) as { token: string; tenant_id: string };
    // A batch large enough to still be in the handler when the signal arrives.
    const nodes = Array.from({ length: 5_000 }, (_, i) => ({
      provider: 'aws',
      region: 'eu-west-1',
      type: 'aws.s3.bucket',
      native_id: `shutdown-${i}`,
      name: `shutdown-${i}`,
      properties: { configuration: { name: `shutdown-${i}`, padding: 'x'.repeat(200) } },
    }));
    const response = postJson(`${service.base}/api/v1/tenants/${tenantId}/nodes`, token, { nodes }, () => service.child.kill('SIGTERM'));
    const { status, body } = await response;
    expect(status).toBe(201);
    expect(JSON.parse(body)).toMatchObject({ created: 5_000 });
    const code = await service.exited;
    expect(code).toBe(0);
    expect(service.output()).toMatch(/"msg":"shutting down"/);
    await expect(fetch(`${service.base}/healthz`)).rejects.toThrow();
  });
});

const ADMIN = { username: 'shutdown-admin', password: 'a long enough password' };

/**
 * POSTs JSON over node:http and calls `sent` once the whole body is on the wire. The request asks
 * `Expect: 100-continue` and sends its body only after the service answered 100 Continue, which
 * Node does as it hands the request to the router: only then is the request the service's, in
 * flight. (Without it, on a loaded machine the service could read the request only after the
 * signal, and rightly answer 503: it had stopped taking requests.)
 */
function postJson(url: string, token: string, payload: unknown, sent: () => void): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify(payload);
    const req = http.request(
      url,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: `Bearer ${token}`, expect: '100-continue' },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.on('continue', () => req.end(body, sent));
  });
}
