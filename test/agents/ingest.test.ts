import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, createApiKey, type TenantFixture } from '../harness/identity.js';
import pino from 'pino';
import { buildReport, nodePath, OSV_DEBIAN, sendReport } from './helpers.js';
import { OSV_NPM } from '../vulndb/helpers.js';
import { importLocation } from '../../src/modules/vulndb/import/importer.js';

let t: TestApp;
let tenant: TenantFixture;
let other: TenantFixture;
let key: string;

beforeAll(async () => {
  t = await createTestApp({ clockStart: '2026-11-23T13:00:00.000Z' });
  tenant = await buildTenant(t);
  other = await buildTenant(t);
  key = (await createApiKey(t, tenant, { permissions: ['agents:write'] })).key;
});
afterAll(() => t.close());

const NODE_ID = 'host:local:host.os.instance:a1b2c3d4e5f60718293a4b5c6d7e8f90';

describe('POST /api/v1/agents/{agentID}/report', () => {
  it('accepts a gzip report with an agents:write key and upserts the host node with the facts only', async () => {
    const report = buildReport({ agent_id: 'agent-ingest-1' });
    const res = await sendReport(t, key, 'agent-ingest-1', report);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      agent_id: 'agent-ingest-1',
      node_id: NODE_ID,
      scan_id: report.scan_id,
      ignored: false,
      reason: null,
      node: 'created',
      packages: { total: 2, added: 2, updated: 0, removed: 0, vulnerable: 0 },
      sbom_version: 1,
    });
    expect(body.collectors.packages).toEqual({ status: 'ok', reason: null, items: 2 });
    expect(body.collectors.windows_firewall_rules.status).toBe('skipped');

    const node = (await call(t.app, tenant.admin.token, { method: 'GET', url: nodePath(tenant.id, NODE_ID), expect: 200 })).json();
    expect(node).toMatchObject({ id: NODE_ID, provider: 'host', region: 'local', type: 'host.os.instance', native_id: 'a1b2c3d4e5f60718293a4b5c6d7e8f90', name: 'web-1' });
    expect(node.properties.os).toMatchObject({ id: 'debian', version_id: '12', pretty_name: 'Debian GNU/Linux 12 (bookworm)' });
    expect(node.properties.kernel).toBe('6.1.0-26-amd64');
    expect(node.properties.listening_ports).toEqual([{ port: 22, protocol: 'tcp', address: '10.0.0.5', process: 'sshd' }]);
    expect(node.properties.packages_summary).toEqual({ count: 2, managers: ['dpkg'] });
    // The collections stay in the agent tables, not in the node.
    for (const collection of ['packages', 'processes', 'connections', 'local_users', 'file_integrity', 'system_services']) {
      expect(node.properties[collection], collection).toBeUndefined();
    }
    const stored = await sql<{ collection: string; item_count: number }>`
      SELECT collection, item_count FROM agent_host_collections WHERE node_id = ${NODE_ID} ORDER BY collection`.execute(t.deps.database.db);
    expect(Object.fromEntries(stored.rows.map((r) => [r.collection, r.item_count]))).toEqual({
      config_checks: 2,
      connections: 1,
      file_integrity: 2,
      firewall_policies: 2,
      firewall_rules: 1,
      listening_ports: 1,
      local_users: 2,
      network_interfaces: 2,
      processes: 2,
      sudo_access: 1,
      system_services: 2,
    });
    const packages = await sql<{ name: string; purl: string }>`SELECT name, purl FROM agent_host_packages WHERE node_id = ${NODE_ID} ORDER BY name`.execute(t.deps.database.db);
    expect(packages.rows).toEqual([
      { name: 'bash', purl: 'pkg:deb/debian/bash@5.2.15-2+b7?arch=amd64&distro=debian-12' },
      { name: 'openssh-server', purl: 'pkg:deb/debian/openssh-server@1:9.2p1-2+deb12u3?arch=amd64&distro=debian-12&upstream=openssh' },
    ]);
  });

  it('accepts plain JSON too, and leaves an unchanged node untouched', async () => {
    const report = buildReport({ agent_id: 'agent-ingest-1' }, '2026-11-23T12:05:00.000Z');
    const res = await sendReport(t, key, 'agent-ingest-1', report, { gzip: false });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ ignored: false, node: 'unchanged', packages: { added: 0, updated: 0, removed: 0 }, sbom_version: 1 });
  });

  it('ignores a report older than the last processed one of the host (out of order), and a repeated scan', async () => {
    const newer = buildReport({ agent_id: 'agent-ingest-1' }, '2026-11-23T12:10:00.000Z');
    expect((await sendReport(t, key, 'agent-ingest-1', newer)).statusCode).toBe(200);
    const older = buildReport({ agent_id: 'agent-ingest-1', packages: [] }, '2026-11-23T12:07:00.000Z');
    const res = await sendReport(t, key, 'agent-ingest-1', older);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      ignored: true,
      reason: 'out_of_order',
      message: 'scanned at 2026-11-23T12:07:00.000Z, before the last processed report of this host (2026-11-23T12:10:00.000Z)',
    });
    // Nothing of the older report was applied: the packages are still there.
    const n = await sql<{ n: number }>`SELECT count(*)::int AS n FROM agent_host_packages WHERE node_id = ${NODE_ID}`.execute(t.deps.database.db);
    expect(n.rows[0]!.n).toBe(2);
    const again = await sendReport(t, key, 'agent-ingest-1', newer);
    expect(again.json()).toMatchObject({ ignored: true, reason: 'duplicate' });
    const log = await sql<{ outcome: string; reason: string | null; scanned_at: Date }>`
      SELECT outcome, reason, scanned_at FROM agent_reports WHERE agent_id = 'agent-ingest-1'`.execute(t.deps.database.db);
    expect(log.rows.map((r) => `${new Date(r.scanned_at).toISOString().slice(11, 16)} ${r.outcome}:${r.reason}`).sort()).toEqual([
      '12:00 processed:null',
      '12:05 processed:null',
      '12:07 ignored:out_of_order',
      '12:10 ignored:duplicate',
      '12:10 processed:null',
    ]);
    const agent = await sql<{ reports_processed: number; reports_ignored: number }>`
      SELECT reports_processed, reports_ignored FROM agents WHERE agent_id = 'agent-ingest-1'`.execute(t.deps.database.db);
    expect(agent.rows[0]).toEqual({ reports_processed: 3, reports_ignored: 2 });
  });

  it('refuses an invalid report with 400 naming the failing path', async () => {
    const cases: Array<[unknown, string]> = [
      [{ ...buildReport({ agent_id: 'agent-bad' }), packages: [{ name: 'x', version: { major: 1 }, source: 'dpkg', installed_at: null, cves: [] }] }, '/packages/0/version'],
      [{ ...buildReport({ agent_id: 'agent-bad' }), schema_version: '9.9' }, '/schema_version'],
      [{ ...buildReport({ agent_id: 'agent-bad' }), surprise: true }, '/surprise'],
      [
        { ...buildReport({ agent_id: 'agent-bad' }), local_users: [{ username: 'x', uid: 1, gid: 1, home: '/', shell: '/bin/sh', last_login: null }] },
        '/local_users/0/password_status',
      ],
      [
        {
          ...buildReport({ agent_id: 'agent-bad' }),
          file_integrity: [{ path: 'relative', sha256: null, size_bytes: 1, modified_at: null, permissions: '0644', owner: null, group: null }],
        },
        '/file_integrity/0/path',
      ],
      [
        { ...buildReport({ agent_id: 'agent-bad' }), connections: [{ local_address: 'a', remote_address: 'b', state: 'DANCING', pid: null, process: null }] },
        '/connections/0/state',
      ],
    ];
    for (const [report, path] of cases) {
      const res = await sendReport(t, key, 'agent-bad', report);
      expect(res.statusCode, path).toBe(400);
      expect(res.json().error.code).toBe('BAD_REQUEST');
      expect(res.json().error.message, path).toContain(path);
      expect(res.json().error.details.errors[0].path).toBe(path);
    }
    const mismatch = await sendReport(t, key, 'agent-bad', buildReport({ agent_id: 'agent-other' }));
    expect(mismatch.statusCode).toBe(400);
    expect(mismatch.json().error.message).toBe('invalid body: /agent_id "agent-other" does not match the agent id of the path ("agent-bad")');
    const future = await sendReport(t, key, 'agent-bad', buildReport({ agent_id: 'agent-bad' }, '2026-11-23T13:30:00.000Z'));
    expect(future.statusCode).toBe(400);
    expect(future.json().error.message).toMatch(/^invalid body: \/scanned_at 2026-11-23T13:30:00.000Z is more than 10 minutes ahead/);
    const notJson = await sendReport(t, key, 'agent-bad', '{"schema_version": ', {});
    expect(notJson.statusCode).toBe(400);
    expect(notJson.json().error.message).toMatch(/^the report is not valid JSON/);
    const notGzip = await sendReport(t, key, 'agent-bad', buildReport(), { body: Buffer.from('plainly not gzip') });
    expect(notGzip.statusCode).toBe(400);
    expect(notGzip.json().error.message).toMatch(/^the report is not valid gzip/);
    const brotli = await sendReport(t, key, 'agent-bad', buildReport(), { headers: { 'content-encoding': 'br' } });
    expect(brotli.statusCode).toBe(400);
    expect(brotli.json().error.message).toContain('unsupported Content-Encoding "br"');
    const empty = await t.app.inject({ method: 'POST', url: '/api/v1/agents/agent-bad/report', headers: { authorization: `Bearer ${key}` } });
    expect(empty.statusCode).toBe(400);
    // None of them registered the agent.
    const agents = await sql<{ n: number }>`SELECT count(*)::int AS n FROM agents WHERE agent_id = 'agent-bad'`.execute(t.deps.database.db);
    expect(agents.rows[0]!.n).toBe(0);
  });

  it('needs a credential with agents:write', async () => {
    const report = buildReport({ agent_id: 'agent-auth' });
    expect((await sendReport(t, null, 'agent-auth', report)).statusCode).toBe(401);
    expect((await sendReport(t, 'cg_not-a-real-key', 'agent-auth', report)).statusCode).toBe(401);
    const readKey = (await createApiKey(t, tenant, { permissions: ['nodes:read'] })).key;
    const denied = await sendReport(t, readKey, 'agent-auth', report);
    expect(denied.statusCode).toBe(403);
    expect(denied.json().error.message).toBe('missing permission agents:write');
    expect((await sendReport(t, tenant.users['security-analyst'].token, 'agent-auth', report)).statusCode).toBe(403);
    // A tenant admin's own token carries agents:write.
    expect((await sendReport(t, tenant.admin.token, 'agent-auth', report)).statusCode).toBe(200);
  });

  it('binds an agent id to its tenant and workspace: another tenant gets 409, its data is untouched', async () => {
    const report = buildReport({ agent_id: 'agent-owned', host: { ...buildReport().host, machine_id: 'owned0000000000000000000000000001' } });
    expect((await sendReport(t, key, 'agent-owned', report)).statusCode).toBe(200);
    const otherKey = (await createApiKey(t, other, { permissions: ['agents:write'] })).key;
    const res = await sendReport(t, otherKey, 'agent-owned', buildReport({ agent_id: 'agent-owned' }, '2026-11-23T12:30:00.000Z'));
    expect(res.statusCode).toBe(409);
    expect(res.json().error).toMatchObject({ code: 'CONFLICT', message: 'agent id "agent-owned" belongs to another tenant' });
    const otherNodes = await sql<{ n: number }>`SELECT count(*)::int AS n FROM nodes WHERE tenant_id = ${other.id}`.execute(t.deps.database.db);
    expect(otherNodes.rows[0]!.n).toBe(0);

    // A key bound to another workspace of the same tenant: the report lands there, the id is refused.
    const workspace = (await call(t.app, tenant.admin.token, { method: 'POST', url: '/api/v1/workspaces', payload: { name: 'agents-ws' }, expect: 201 })).json();
    const wsKey = (await createApiKey(t, tenant, { permissions: ['agents:write'], workspace_id: workspace.id })).key;
    const moved = await sendReport(t, wsKey, 'agent-owned', buildReport({ agent_id: 'agent-owned' }, '2026-11-23T12:31:00.000Z'));
    expect(moved.statusCode).toBe(409);
    expect(moved.json().error.message).toBe('agent id "agent-owned" belongs to another workspace of this tenant');
    const fresh = await sendReport(t, wsKey, 'agent-ws', buildReport({ agent_id: 'agent-ws' }));
    expect(fresh.statusCode).toBe(200);
    const row = await sql<{ workspace_id: string }>`SELECT workspace_id FROM agents WHERE agent_id = 'agent-ws'`.execute(t.deps.database.db);
    expect(row.rows[0]!.workspace_id).toBe(workspace.id);
  });

  it('records the registration of a new agent in the audit log', async () => {
    const rows = await sql<{ action: string; target_id: string; actor_type: string }>`
      SELECT action, target_id, actor_type FROM audit_logs WHERE action = 'agent.registered' AND target_id = 'agent-ingest-1'`.execute(t.deps.database.db);
    expect(rows.rows).toEqual([{ action: 'agent.registered', target_id: 'agent-ingest-1', actor_type: 'api_key' }]);
  });
});

describe('the report format in the OpenAPI document', () => {
  it('is the AgentReport schema, versioned, with one array per collection of the spec and exactly its fields', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const operation = doc.paths['/api/v1/agents/{agentID}/report'].post;
    expect(operation.operationId).toBe('submitAgentReport');
    const bodySchema = operation.requestBody.content['application/json'].schema;
    const ref = bodySchema.$ref as string | undefined;
    const report = ref ? doc.components.schemas[ref.split('/').pop()!] : bodySchema;
    expect(report.properties.schema_version.enum).toEqual(['1.0']);
    for (const top of ['schema_version', 'agent_id', 'agent_version', 'scan_id', 'scanned_at', 'host', 'os', 'collectors']) expect(report.required).toContain(top);
    const spec: Record<string, string[]> = {
      packages: ['name', 'version', 'source', 'installed_at', 'cves'],
      processes: ['pid', 'name', 'user', 'cmdline', 'cpu_percent', 'memory_mb', 'status', 'parent_pid', 'start_time'],
      system_services: ['name', 'status', 'enabled', 'description'],
      listening_ports: ['port', 'protocol', 'address', 'pid', 'process'],
      connections: ['local_address', 'remote_address', 'state', 'pid', 'process'],
      network_interfaces: ['name', 'mac', 'ipv4', 'ipv6', 'mtu', 'state'],
      firewall_rules: ['chain', 'action', 'protocol', 'source', 'destination', 'dport', 'comment'],
      windows_firewall_rules: ['name', 'direction', 'action', 'protocol', 'local_port', 'enabled', 'profile'],
      local_users: ['username', 'uid', 'gid', 'home', 'shell', 'last_login', 'password_status'],
      sudo_access: ['user', 'sudo_rules'],
      file_integrity: ['path', 'sha256', 'size_bytes', 'modified_at', 'permissions', 'owner', 'group'],
    };
    for (const [collection, fields] of Object.entries(spec)) {
      const items = report.properties[collection].items;
      expect([...items.required].sort(), collection).toEqual([...fields].sort());
      expect(items.additionalProperties, collection).toBe(false);
    }
    expect(report.properties.connections.items.properties.state.enum).toEqual(expect.arrayContaining(['ESTABLISHED', 'TIME_WAIT', 'CLOSE_WAIT', 'LISTEN', 'SYN_SENT']));
    expect(report.properties.local_users.items.properties).not.toHaveProperty('password');
  });
});

describe('the report response says whether the packages could be checked at all', () => {
  // Last in this file: it loads advisories into the store the other tests run without.
  it('no package advisories: package matching is off, said plainly; advisories of another ecosystem only: that host is not checked', async () => {
    const machine = { machine_id: 'c0ffee00c0ffee00c0ffee00c0ffee00', hostname: 'matching-1' };
    const send = async (at: string) => {
      const report = buildReport({ agent_id: 'agent-matching-1' }, at);
      report.host = { ...report.host, ...machine };
      const res = await sendReport(t, key, 'agent-matching-1', report);
      expect(res.statusCode, res.body).toBe(200);
      return res.json();
    };
    const none = await send('2026-11-23T12:10:00.000Z');
    expect(none.packages).toMatchObject({ total: 2, vulnerable: 0 });
    expect(none.package_matching).toEqual({
      enabled: false,
      ecosystems: [{ ecosystem: 'Debian:12', advisories_loaded: false }],
      message: expect.stringMatching(/^no package advisories are loaded \(OSV data\), so package matching is off: packages are not checked/),
    });

    const log = pino({ level: 'silent' });
    expect((await importLocation({ db: t.deps.database.db, clock: t.clock, log }, OSV_NPM, { trigger: 'cli' })).status).toBe('succeeded');
    const npmOnly = await send('2026-11-23T12:11:00.000Z');
    expect(npmOnly.package_matching).toEqual({
      enabled: true,
      ecosystems: [{ ecosystem: 'Debian:12', advisories_loaded: false }],
      message: 'no package advisories are loaded for Debian:12: packages of that ecosystem are not checked (import the OSV data of it)',
    });

    expect((await importLocation({ db: t.deps.database.db, clock: t.clock, log }, OSV_DEBIAN, { trigger: 'cli' })).status).toBe('succeeded');
    const covered = await send('2026-11-23T12:12:00.000Z');
    expect(covered.package_matching).toEqual({ enabled: true, ecosystems: [{ ecosystem: 'Debian:12', advisories_loaded: true }], message: null });
  });
});
