import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, startServiceProcess, type ServiceProcess } from '../harness/service-process.js';
import { createDatabaseForChild } from '../harness/database.js';
import { api } from '../harness/remote.js';

const run = promisify(execFile);
const ADMIN = { username: 'demo-admin', password: 'demo-admin-password-1' };

/** `controlgraph demo` against a real service process: what it loads, again, and what it refuses. */
describe('controlgraph demo', () => {
  let db: { url: string; dispose(): Promise<void> };
  let service: ServiceProcess;
  let token: string;
  let tenant: string;
  let emptyDir: string;

  // A clean environment for the CLI: no DATABASE_URL, CONTROLGRAPH_URL or token of the test process.
  const demo = (args: string[], env: Record<string, string> = {}) =>
    run(process.execPath, [CLI, 'demo', ...args], { env: { PATH: process.env.PATH ?? '', DATABASE_URL: `pglite://${emptyDir}`, ...env } });

  beforeAll(async () => {
    emptyDir = mkdtempSync(join(tmpdir(), 'cg-demo-nodb-'));
    db = await createDatabaseForChild();
    service = await startServiceProcess({ DATABASE_URL: db.url, CONTROLGRAPH_ADMIN_USERNAME: ADMIN.username, CONTROLGRAPH_ADMIN_PASSWORD: ADMIN.password });
    const admin = await api(service.base, null, 'POST', '/api/v1/auth/token', ADMIN);
    tenant = (await api(service.base, admin.token, 'POST', '/api/v1/account/tenants', { name: 'Demo command' })).id;
    token = (await api(service.base, admin.token, 'POST', '/api/v1/auth/select-tenant', { tenant_id: tenant })).token;
  }, 300_000);
  afterAll(async () => {
    await service?.stop('SIGKILL');
    await db?.dispose();
    rmSync(emptyDir, { recursive: true, force: true });
  });

  it("loads CloudMapper's demo account into the tenant, read by the aws plugin; loading again adds nothing", async () => {
    const first = await demo(['--server', service.base, '--tenant', tenant], { CONTROLGRAPH_TOKEN: token });
    const loaded = /: (\d+) nodes \((\d+) new, 0 updated\) and (\d+) edges \((\d+) new, 0 updated\)/.exec(first.stdout);
    expect(loaded, first.stdout).not.toBeNull();
    const [nodes, newNodes, edges, newEdges] = loaded!.slice(1, 5).map(Number) as [number, number, number, number];
    expect(newNodes).toBe(nodes);
    expect(newEdges).toBe(edges);

    const listed = await api(service.base, token, 'GET', `/api/v1/tenants/${tenant}/nodes?per_page=500`);
    expect(listed.total).toBe(nodes);
    const types = new Set((listed.items as Array<{ type: string; account_id: string }>).map((n) => n.type));
    for (const type of ['aws.ec2.vpc', 'aws.ec2.subnet', 'aws.ec2.security_group', 'aws.ec2.instance', 'aws.rds.db_instance', 'aws.s3.bucket', 'aws.lambda.function']) {
      expect(types, type).toContain(type);
    }
    expect((listed.items as Array<{ account_id: string | null }>).filter((n) => n.account_id === '123456789012').length).toBeGreaterThan(nodes / 2);

    const again = await demo(['--server', service.base, '--tenant', tenant], { CONTROLGRAPH_TOKEN: token });
    expect(again.stdout).toContain(`: ${nodes} nodes (0 new, ${nodes} updated) and ${edges} edges (0 new, ${edges} updated)`);
    expect((await api(service.base, token, 'GET', `/api/v1/tenants/${tenant}/nodes?per_page=1`)).total).toBe(nodes);
  }, 120_000);

  it('refuses with exit status 2, saying what is missing: no service, no credential, a credential without nodes:write', async () => {
    await expect(demo(['--tenant', tenant])).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining('start the service (npm start) and run this again beside it, or name it with --server URL'),
    });
    await expect(demo(['--server', service.base, '--tenant', tenant])).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining('set CONTROLGRAPH_TOKEN or pass --token-file FILE'),
    });
    await expect(demo(['--server', service.base, '--tenant', 'demo'])).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining(`--tenant takes the tenant's id (a UUID), not "demo"`),
    });
    await expect(demo(['--server', service.base])).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('--tenant is required') });
    const reader = await api(service.base, token, 'POST', `/api/v1/tenants/${tenant}/api-keys`, { name: 'reader', permissions: ['nodes:read'] });
    await expect(demo(['--server', service.base, '--tenant', tenant], { CONTROLGRAPH_TOKEN: reader.key })).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/refused \(.*nodes:write.*\); this command needs an access token or API key with nodes:write in the tenant/),
    });
  }, 120_000);
});
