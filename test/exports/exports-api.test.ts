import { existsSync, writeFileSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, createApiKey, fresh, type Session, type TenantFixture } from '../harness/identity.js';
import { Scheduler } from '../../src/platform/jobs/scheduler.js';
import { estate, loadEstate, parseDrawio, pngSize } from './helpers.js';

let t: TestApp;
let tenant: TenantFixture;
let other: TenantFixture;
const RETENTION_MS = 60 * 60_000;

const url = (tenantId: string, path = '') => `/api/v1/tenants/${tenantId}/exports${path}`;

beforeAll(async () => {
  // Retention shortened to an hour (CONTROLGRAPH_EXPORT_RETENTION=1h) to test expiry.
  t = await createTestApp({ env: { CONTROLGRAPH_EXPORT_RETENTION: '1h' } });
  tenant = await buildTenant(t);
  other = await buildTenant(t);
  await loadEstate(t, tenant.admin.token, tenant.id, estate(60));
});
afterAll(() => t.close());

async function start(session: Session, tenantId: string, payload: Record<string, unknown>, expect = 202) {
  return (await call(t.app, session.token, { method: 'POST', url: url(tenantId), payload, expect })).json();
}

describe('POST /exports', () => {
  it('starts a job (202) and returns an identical queued job with already_active', async () => {
    const first = await start(tenant.users['read-only'], tenant.id, { kind: 'drawio' });
    expect(first).toMatchObject({ status: 'queued', already_active: false, reason: '', attempts: 0, kind: 'drawio' });
    expect(first.status_url).toBe(url(tenant.id, `/${first.job_id}`));
    const again = await start(tenant.admin, tenant.id, { kind: 'drawio', params: {} });
    expect(again).toMatchObject({ job_id: first.job_id, already_active: true, status: 'queued' });
    expect(again.reason).toMatch(/already queued or running/);
    // format png is the default: both spellings are one job; svg is another.
    const png = await start(tenant.admin, tenant.id, { kind: 'architecture_diagram' });
    expect((await start(tenant.admin, tenant.id, { kind: 'architecture_diagram', params: { format: 'png' } })).job_id).toBe(png.job_id);
    const svg = await start(tenant.admin, tenant.id, { kind: 'architecture_diagram', params: { format: 'svg' } });
    expect(svg.job_id).not.toBe(png.job_id);
    // Another tenant's identical export is its own job.
    await loadEstate(t, other.admin.token, other.id, estate(5));
    expect((await start(other.admin, other.id, { kind: 'drawio' })).already_active).toBe(false);
    await t.drain();
    const done = (await call(t.app, tenant.admin.token, { url: first.status_url, expect: 200 })).json();
    expect(done).toMatchObject({ status: 'succeeded', attempts: 1, node_count: 60, content_type: 'application/vnd.jgraph.mxfile+xml' });
    // Once finished, the same request starts a new job.
    expect((await start(tenant.admin, tenant.id, { kind: 'drawio' })).job_id).not.toBe(first.job_id);
    await t.drain();
  });

  it('refuses unknown kinds and params with 400', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ kind: 'visio' }, /unknown export kind "visio"/],
      [{ kind: 'drawio', params: { format: 'png' } }, /unknown params for drawio: format/],
      [{ kind: 'architecture_diagram', params: { format: 'png', dpi: 300 } }, /unknown params for architecture_diagram: dpi/],
      [{ kind: 'architecture_diagram', params: { format: 'jpeg' } }, /params.format must be one of png, svg/],
      [{ kind: 'drawio', extra: 1 }, /./],
      [{}, /./],
    ];
    for (const [payload, message] of cases) {
      const res = await call(t.app, tenant.admin.token, { method: 'POST', url: url(tenant.id), payload, expect: 400 });
      expect(res.json().error.code).toBe('BAD_REQUEST');
      expect(res.json().error.message).toMatch(message);
    }
  });
});

describe('access', () => {
  it('needs a token (401) and nodes:read (403) on every export endpoint', async () => {
    const job = await start(tenant.admin, tenant.id, { kind: 'drawio' });
    const key = await createApiKey(t, tenant, { permissions: ['jobs:read'] });
    const requests = [
      { method: 'POST' as const, url: url(tenant.id), payload: { kind: 'drawio' } },
      { method: 'GET' as const, url: url(tenant.id) },
      { method: 'GET' as const, url: job.status_url },
      { method: 'GET' as const, url: `${job.status_url}/download` },
      { method: 'GET' as const, url: `/api/v1/tenants/${tenant.id}/topology/export/diagram` },
      { method: 'GET' as const, url: `/api/v1/tenants/${tenant.id}/topology/export/drawio` },
    ];
    for (const r of requests) {
      expect((await call(t.app, null, r)).statusCode, r.url).toBe(401);
      const denied = await call(t.app, key.key, r);
      expect(denied.statusCode, r.url).toBe(403);
      expect(denied.json().error.message).toBe('missing permission nodes:read');
    }
    const reader = await createApiKey(t, tenant, { permissions: ['nodes:read'] });
    expect((await call(t.app, reader.key, { url: job.status_url })).statusCode).toBe(200);
    await t.drain();
  });
});

describe('job status and download', () => {
  it('reports every field, streams the finished file, and keeps it for the retention period', async () => {
    const job = await start(tenant.admin, tenant.id, { kind: 'architecture_diagram', params: { format: 'png' } });
    const queued = await call(t.app, tenant.admin.token, { url: `${job.status_url}/download` });
    expect(queued.statusCode).toBe(409);
    expect(queued.json().error.message).toBe('export is not finished (status queued)');
    await t.drain();
    const status = (await call(t.app, tenant.admin.token, { url: job.status_url, expect: 200 })).json();
    expect(status).toMatchObject({ job_id: job.job_id, status: 'succeeded', attempts: 1, max_attempts: 3, node_count: 60, content_type: 'image/png' });
    expect(status.error).toBeUndefined();
    expect(status.size_bytes).toBeGreaterThan(1000);
    expect(new Date(status.expires_at).getTime() - new Date(status.finished_at).getTime()).toBe(RETENTION_MS);
    expect(status.started_at).not.toBeNull();
    const file = await call(t.app, tenant.users['read-only'].token, { url: status.download_url, expect: 200 });
    expect(file.headers['content-type']).toBe('image/png');
    expect(file.headers['content-disposition']).toMatch(/^attachment; filename="architecture-diagram-\d{8}-\d{6}-[0-9a-f]{8}\.png"$/);
    expect(file.rawPayload.length).toBe(status.size_bytes);
    expect(pngSize(file.rawPayload).width).toBeGreaterThan(500);
  });

  it('answers 404 for an unknown job and for a job of another tenant or workspace', async () => {
    const job = await start(tenant.admin, tenant.id, { kind: 'architecture_diagram', params: { format: 'svg' } });
    await t.drain();
    const unknown = '00000000-0000-4000-8000-000000000000';
    for (const path of [`/${unknown}`, `/${unknown}/download`]) {
      expect((await call(t.app, tenant.admin.token, { url: url(tenant.id, path) })).statusCode).toBe(404);
    }
    // The other tenant, in its own tenant path, asking for this tenant's job.
    for (const path of [`/${job.job_id}`, `/${job.job_id}/download`]) {
      const res = await call(t.app, other.admin.token, { url: url(other.id, path) });
      expect(res.statusCode).toBe(404);
      expect(res.json().error.message).toBe('export not found');
    }
    // Another workspace of the same tenant.
    const ws = (await call(t.app, tenant.admin.token, { method: 'POST', url: '/api/v1/workspaces', payload: { name: 'second' }, expect: 201 })).json();
    const switched = (await call(t.app, tenant.admin.token, { method: 'POST', url: '/api/v1/auth/switch-workspace', payload: { workspace_id: ws.id }, expect: 200 })).json();
    for (const path of [`/${job.job_id}`, `/${job.job_id}/download`]) {
      expect((await call(t.app, switched.token, { url: url(tenant.id, path) })).statusCode).toBe(404);
    }
    const list = (await call(t.app, switched.token, { url: url(tenant.id), expect: 200 })).json();
    expect(list).toEqual({ items: [], total: 0, limit: null, offset: 0, has_more: false });
  });

  it('expires after the retention: 410 at once, and the sweeper deletes the file', async () => {
    const job = await start(tenant.admin, tenant.id, { kind: 'drawio' });
    await t.drain();
    const done = (await call(t.app, tenant.admin.token, { url: job.status_url, expect: 200 })).json();
    const artifactRoot = (t.deps.artifacts as unknown as { root: string }).root;
    const key = join(artifactRoot, 'tenants', tenant.id, 'exports', `${job.job_id}.drawio`);
    expect(existsSync(key)).toBe(true);
    t.clock.advance(RETENTION_MS - 1000);
    let session = await fresh(t, tenant.admin);
    expect((await call(t.app, session.token, { url: done.download_url })).statusCode).toBe(200);
    t.clock.advance(1000);
    session = await fresh(t, tenant.admin);
    const expiredStatus = (await call(t.app, session.token, { url: job.status_url, expect: 200 })).json();
    expect(expiredStatus.status).toBe('expired');
    expect(expiredStatus.download_url).toBeNull();
    const gone = await call(t.app, session.token, { url: done.download_url });
    expect(gone.statusCode).toBe(410);
    expect(gone.json().error.code).toBe('GONE');
    // The scheduled sweeper, through the queue.
    const scheduler = new Scheduler({ db: t.deps.database.db, clock: t.clock, log: t.deps.log, schedules: t.modules.flatMap((m) => m.schedules?.(t.deps) ?? []) });
    await scheduler.register();
    expect(await scheduler.tick()).toContain('exports-retention-sweeper');
    await t.drain();
    expect(existsSync(key)).toBe(false);
    const row = await t.deps.database.db.selectFrom('exports').select(['status', 'expired_at']).where('id', '=', job.job_id).executeTakeFirstOrThrow();
    expect(row.status).toBe('expired');
    expect((await call(t.app, session.token, { url: done.download_url })).statusCode).toBe(410);
  });
});

describe('GET /exports', () => {
  it('returns every export without a limit, never caps a supplied limit, and pages with offset', async () => {
    const session = await fresh(t, tenant.admin);
    const all = (await call(t.app, session.token, { url: url(tenant.id), expect: 200 })).json();
    expect(all.total).toBeGreaterThanOrEqual(6);
    expect(all.items).toHaveLength(all.total);
    expect(all).toMatchObject({ limit: null, offset: 0, has_more: false });
    expect(all.items[0]).toHaveProperty('job_id');
    expect(all.items[0]).toHaveProperty('status');
    const created = all.items.map((i: { created_at: string }) => i.created_at);
    expect([...created].sort().reverse()).toEqual(created);
    const one = (await call(t.app, session.token, { url: `${url(tenant.id)}?limit=1`, expect: 200 })).json();
    expect(one).toMatchObject({ total: all.total, limit: 1, offset: 0, has_more: true });
    expect(one.items).toEqual([all.items[0]]);
    const page = (await call(t.app, session.token, { url: `${url(tenant.id)}?limit=2&offset=1`, expect: 200 })).json();
    expect(page.items.map((i: { job_id: string }) => i.job_id)).toEqual(all.items.slice(1, 3).map((i: { job_id: string }) => i.job_id));
    const big = (await call(t.app, session.token, { url: `${url(tenant.id)}?limit=100000`, expect: 200 })).json();
    expect(big).toMatchObject({ limit: 100000, has_more: false });
    expect(big.items).toHaveLength(all.total);
    const tail = (await call(t.app, session.token, { url: `${url(tenant.id)}?offset=${all.total - 1}`, expect: 200 })).json();
    expect(tail.items).toHaveLength(1);
    for (const bad of ['limit=-1', 'limit=abc', 'limit=1.5', 'offset=-1', 'offset=x', 'page=0', 'per_page=0', 'per_page=501', 'limit=1&sort=x']) {
      const res = await call(t.app, session.token, { url: `${url(tenant.id)}?${bad}` });
      expect(res.statusCode, bad).toBe(400);
    }
  });

  it('also pages with page/per_page like every other list, and refuses a mix of the two styles', async () => {
    const session = await fresh(t, tenant.admin);
    const all = (await call(t.app, session.token, { url: url(tenant.id), expect: 200 })).json();
    const ids = (list: { items: Array<{ job_id: string }> }) => list.items.map((i) => i.job_id);
    const second = (await call(t.app, session.token, { url: `${url(tenant.id)}?page=2&per_page=2`, expect: 200 })).json();
    expect(second).toMatchObject({ total: all.total, page: 2, per_page: 2, total_pages: Math.ceil(all.total / 2), limit: 2, offset: 2, has_more: all.total > 4 });
    expect(ids(second)).toEqual(ids(all).slice(2, 4));
    // Either one alone: page 1, and 50 a page.
    const first = (await call(t.app, session.token, { url: `${url(tenant.id)}?per_page=3`, expect: 200 })).json();
    expect(first).toMatchObject({ page: 1, per_page: 3, offset: 0, limit: 3 });
    expect(ids(first)).toEqual(ids(all).slice(0, 3));
    const defaults = (await call(t.app, session.token, { url: `${url(tenant.id)}?page=1`, expect: 200 })).json();
    expect(defaults).toMatchObject({ page: 1, per_page: 50, limit: 50, total_pages: Math.ceil(all.total / 50) });
    // limit/offset answers keep their shape.
    expect((await call(t.app, session.token, { url: `${url(tenant.id)}?limit=2`, expect: 200 })).json()).not.toHaveProperty('page');
    for (const mix of ['page=1&limit=2', 'per_page=2&offset=2', 'page=2&per_page=2&limit=2&offset=2']) {
      const res = await call(t.app, session.token, { url: `${url(tenant.id)}?${mix}`, expect: 400 });
      expect(res.json().error.message, mix).toMatch(/use either limit\/offset or page\/per_page/);
    }
    const res = await call(t.app, session.token, { url: `${url(tenant.id)}?per_page=2&offset=2`, expect: 400 });
    expect(res.json().error.details).toEqual({ conflicting: ['offset', 'per_page'] });
  });

  it('sends Link headers in the style of the request', async () => {
    const session = await fresh(t, tenant.admin);
    const base = url(tenant.id);
    const total = (await call(t.app, session.token, { url: base, expect: 200 })).json().total as number;
    const lastOffset = Math.floor((total - 1) / 2) * 2;
    const middle = await call(t.app, session.token, { url: `${base}?limit=2&offset=2`, expect: 200 });
    expect(middle.headers.link).toBe(
      [
        `<${base}?limit=2&offset=0>; rel="first"`,
        `<${base}?limit=2&offset=0>; rel="prev"`,
        `<${base}?limit=2&offset=4>; rel="next"`,
        `<${base}?limit=2&offset=${lastOffset}>; rel="last"`,
      ].join(', '),
    );
    const everything = await call(t.app, session.token, { url: base, expect: 200 });
    expect(everything.headers.link).toBe(`<${base}>; rel="first", <${base}>; rel="last"`);
    const lastPage = Math.ceil(total / 2);
    const numbered = await call(t.app, session.token, { url: `${base}?per_page=2&page=${lastPage}`, expect: 200 });
    expect(numbered.headers.link).toBe(
      [`<${base}?per_page=2&page=1>; rel="first"`, `<${base}?per_page=2&page=${lastPage - 1}>; rel="prev"`, `<${base}?per_page=2&page=${lastPage}>; rel="last"`].join(', '),
    );
  });
});

describe('failure after three attempts', () => {
  it('records the reason when every attempt fails (the artifact store cannot be written)', async () => {
    // A file where the store's root directory should be: every write fails.
    const dir = mkdtempSync(join(tmpdir(), 'cg-broken-store-'));
    writeFileSync(join(dir, 'blocked'), 'not a directory');
    const broken = await createTestApp({ artifactStore: `file://${join(dir, 'blocked')}` });
    try {
      const tb = await buildTenant(broken);
      await loadEstate(broken, tb.admin.token, tb.id, estate(10));
      const job = (await call(broken.app, tb.admin.token, { method: 'POST', url: url(tb.id), payload: { kind: 'drawio' }, expect: 202 })).json();
      for (let attempt = 1; attempt <= 3; attempt++) {
        await broken.drain();
        broken.clock.advance(60_000);
      }
      const session = await fresh(broken, tb.admin);
      const status = (await call(broken.app, session.token, { url: job.status_url, expect: 200 })).json();
      expect(status).toMatchObject({ status: 'failed', attempts: 3 });
      expect(status.error).toMatch(/ENOTDIR|EEXIST|not a directory/i);
      const download = await call(broken.app, session.token, { url: `${job.status_url}/download` });
      expect(download.statusCode).toBe(409);
      expect(download.json().error.message).toMatch(/^export failed: /);
      expect(readdirSync(dir)).toEqual(['blocked']);
    } finally {
      await broken.close();
    }
  });
});

describe('the drawing of a loaded inventory', () => {
  it('reads what picks a shape and where a node goes: public subnet, balancer type, an interface of another account, a bucket without account', async () => {
    const tn = await buildTenant(t);
    const A = '123456789012';
    const item = (type: string, nativeId: string, account: string | null, configuration: Record<string, unknown>, region = 'us-east-1') => ({
      provider: 'aws',
      region,
      type,
      native_id: nativeId,
      name: nativeId,
      account_id: account,
      properties: { configuration, supplementaryConfiguration: {}, relationships: [] },
      tags: {},
    });
    const id = (type: string, nativeId: string) => `aws:us-east-1:${type}:${nativeId}`;
    await loadEstate(t, tn.admin.token, tn.id, {
      nodes: [
        item('aws.ec2.vpc', 'vpc-1', A, { vpcId: 'vpc-1' }),
        item('aws.ec2.subnet', 'subnet-pub', A, { subnetId: 'subnet-pub', vpcId: 'vpc-1', mapPublicIpOnLaunch: true }),
        item('aws.ec2.subnet', 'subnet-priv', A, { subnetId: 'subnet-priv', vpcId: 'vpc-1', mapPublicIpOnLaunch: false }),
        item('aws.elasticloadbalancingv2.load_balancer', 'nlb', A, { vpcId: 'vpc-1', type: 'network' }),
        item('aws.ec2.network_interface', 'eni-1', '653711331788', { vpcId: 'vpc-1', subnetId: 'subnet-pub' }),
        item('aws.s3.bucket', 'tf-bucket', null, { name: 'tf-bucket' }),
      ],
      edges: [
        { source: id('aws.ec2.subnet', 'subnet-pub'), target: id('aws.ec2.vpc', 'vpc-1'), type: 'in_vpc' },
        { source: id('aws.ec2.network_interface', 'eni-1'), target: id('aws.ec2.subnet', 'subnet-pub'), type: 'in_subnet' },
        { source: id('aws.elasticloadbalancingv2.load_balancer', 'nlb'), target: id('aws.ec2.network_interface', 'eni-1'), type: 'routes_to' },
      ],
    });
    const parsed = parseDrawio((await call(t.app, tn.admin.token, { url: `/api/v1/tenants/${tn.id}/topology/export/drawio`, expect: 200 })).body);
    const byId = new Map(parsed.cells.map((c) => [c.id, c]));
    const cell = (resourceId: string) => parsed.cells.find((c) => c.attrs.resource_id === resourceId)!;
    expect(cell(id('aws.ec2.subnet', 'subnet-pub')).style).toContain('strokeColor=#7AA116;fillColor=#F2F6E8;');
    expect(cell(id('aws.ec2.subnet', 'subnet-priv')).style).toContain('strokeColor=#00A4A6;fillColor=#E6F6F7;');
    expect(cell(id('aws.elasticloadbalancingv2.load_balancer', 'nlb')).style).toContain('shape=mxgraph.aws4.network_load_balancer;');
    // The interface of account 653711331788 is drawn in account A's subnet; its own account is in its label.
    const eni = cell(id('aws.ec2.network_interface', 'eni-1'));
    expect(byId.get(eni.parent!)!.attrs.resource_id).toBe(id('aws.ec2.subnet', 'subnet-pub'));
    expect(eni.attrs.label).toContain('account 653711331788');
    expect(parsed.cells.filter((c) => c.attrs.label?.startsWith('Account ')).map((c) => c.attrs.label)).toEqual([`Account ${A}`]);
    const bucket = cell(id('aws.s3.bucket', 'tf-bucket'));
    expect(byId.get(byId.get(bucket.parent!)!.parent!)!.attrs.label).toBe('No account');
    // Only the line that is not containment is drawn, with an arrowhead and its type.
    const edges = parsed.cells.filter((c) => c.edge);
    expect(edges.map((e) => e.attrs.edge_type)).toEqual(['routes_to']);
    expect(edges[0]!.style).toContain('endArrow=block;');
    expect(edges[0]!.attrs.label).toBe('routes to');
  });
});

describe('synchronous exports', () => {
  let s: TestApp;
  let ts: TenantFixture;
  beforeAll(async () => {
    s = await createTestApp();
    ts = await buildTenant(s);
    await loadEstate(s, ts.admin.token, ts.id, estate(500));
  });
  afterAll(() => s.close());

  it('answers the file itself at 500 nodes', async () => {
    const drawio = await call(s.app, ts.users['read-only'].token, { url: `/api/v1/tenants/${ts.id}/topology/export/drawio`, expect: 200 });
    expect(drawio.headers['content-type']).toBe('application/vnd.jgraph.mxfile+xml');
    expect(drawio.headers['x-node-count']).toBe('500');
    const parsed = parseDrawio(drawio.body);
    expect(parsed.diagrams).toBe(1);
    const png = await call(s.app, ts.admin.token, { url: `/api/v1/tenants/${ts.id}/topology/export/diagram`, expect: 200 });
    expect(png.headers['content-type']).toBe('image/png');
    expect(pngSize(png.rawPayload).width).toBeGreaterThan(1000);
    expect((await call(s.app, ts.admin.token, { url: `/api/v1/tenants/${ts.id}/topology/export/diagram?format=gif` })).statusCode).toBe(400);
    expect((await call(s.app, ts.admin.token, { url: `/api/v1/tenants/${ts.id}/topology/export/drawio?format=png` })).statusCode).toBe(400);
    expect(await s.deps.database.db.selectFrom('exports').select('id').execute()).toEqual([]);
    // Two renders of 500 nodes in one test: generous on a loaded machine.
  }, 240_000);

  it('answers 202 with Location at 501 nodes, and the job delivers the file', async () => {
    await loadEstate(s, ts.admin.token, ts.id, { nodes: [estate(1, 99).nodes[0]!].map((n) => ({ ...n, native_id: 'vpc-extra', name: 'extra' })), edges: [] });
    const res = await call(s.app, ts.admin.token, { url: `/api/v1/tenants/${ts.id}/topology/export/drawio`, expect: 202 });
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['job_id', 'reason', 'status_url']);
    expect(res.headers.location).toBe(body.status_url);
    expect(body.status_url).toBe(`/api/v1/tenants/${ts.id}/exports/${body.job_id}`);
    expect(body.reason).toMatch(/501 nodes/);
    const diagram = (await call(s.app, ts.admin.token, { url: `/api/v1/tenants/${ts.id}/topology/export/diagram?format=svg`, expect: 202 })).json();
    await s.drain();
    const status = (await call(s.app, ts.admin.token, { url: body.status_url, expect: 200 })).json();
    expect(status).toMatchObject({ status: 'succeeded', kind: 'drawio', node_count: 501 });
    const file = await call(s.app, ts.admin.token, { url: `${body.status_url}/download`, expect: 200 });
    expect(parseDrawio(file.body).cells.filter((c) => c.attrs.resource_id).length).toBe(501);
    expect((await call(s.app, ts.admin.token, { url: diagram.status_url, expect: 200 })).json()).toMatchObject({
      kind: 'architecture_diagram',
      params: { format: 'svg' },
      status: 'succeeded',
    });
    const svg = await call(s.app, ts.admin.token, { url: `${diagram.status_url}/download`, expect: 200 });
    expect(svg.headers['content-type']).toBe('image/svg+xml');
    expect(svg.body).toMatch(/^<\?xml[^>]*>\n<svg /);
    // One box per node that is not a container (VPC and subnet nodes are containers), as in the draw.io file.
    const boxes = parseDrawio(file.body).cells.filter((c) => c.attrs.node_type).length;
    expect(boxes).toBeGreaterThan(400);
    expect(svg.body.match(/<g class="node">/g)?.length).toBe(boxes);
  }, 240_000);
});

describe('without artifact storage (ARTIFACT_STORE=none)', () => {
  let n: TestApp;
  let tn: TenantFixture;
  beforeAll(async () => {
    n = await createTestApp({ artifactStore: 'none' });
    tn = await buildTenant(n);
    await loadEstate(n, tn.admin.token, tn.id, estate(501));
  });
  afterAll(() => n.close());

  it('answers 503 on every export endpoint', async () => {
    const id = '00000000-0000-4000-8000-000000000000';
    const requests = [
      { method: 'POST' as const, url: url(tn.id), payload: { kind: 'drawio' } },
      { method: 'POST' as const, url: url(tn.id), payload: { kind: 'nonsense' } },
      { method: 'GET' as const, url: url(tn.id) },
      { method: 'GET' as const, url: url(tn.id, `/${id}`) },
      { method: 'GET' as const, url: url(tn.id, `/${id}/download`) },
      // Reports are built into the artifact store too.
      { method: 'POST' as const, url: `/api/v1/tenants/${tn.id}/reports/generate`, payload: { format: 'pdf' } },
      { method: 'GET' as const, url: `/api/v1/tenants/${tn.id}/reports` },
      { method: 'GET' as const, url: `/api/v1/tenants/${tn.id}/reports/${id}` },
      { method: 'GET' as const, url: `/api/v1/tenants/${tn.id}/reports/${id}/download` },
    ];
    for (const r of requests) {
      const res = await call(n.app, tn.admin.token, r);
      expect(res.statusCode, `${r.method} ${r.url}`).toBe(503);
      expect(res.json().error.message).toBe('artifact storage not configured');
    }
  });

  it('exports synchronously at every size', async () => {
    const res = await call(n.app, tn.admin.token, { url: `/api/v1/tenants/${tn.id}/topology/export/drawio`, expect: 200 });
    expect(res.headers['x-node-count']).toBe('501');
    expect(parseDrawio(res.body).diagrams).toBe(1);
  });
});
