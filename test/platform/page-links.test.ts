import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, type TenantFixture } from '../harness/identity.js';
import { estate, loadEstate } from '../exports/helpers.js';

let t: TestApp;
let tenant: TenantFixture;
let empty: TenantFixture;

beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
  empty = await buildTenant(t);
  await loadEstate(t, tenant.admin.token, tenant.id, estate(23));
});
afterAll(() => t.close());

/** rel → link target, from an RFC 8288 Link header. */
function parseLinks(header: string | string[] | number | undefined): Record<string, string> {
  expect(typeof header, 'a Link header').toBe('string');
  const links: Record<string, string> = {};
  for (const part of (header as string).split(', ')) {
    const match = /^<([^>]+)>; rel="(first|prev|next|last)"$/.exec(part);
    expect(match, part).not.toBeNull();
    links[match![2]!] = match![1]!;
  }
  return links;
}

const pageOf = (href: string) => Number(new URL(href, 'http://x').searchParams.get('page'));

async function get(url: string, token = tenant.admin.token) {
  return call(t.app, token, { url, expect: 200 });
}

describe('Link headers on paged lists', () => {
  const nodes = () => `/api/v1/tenants/${tenant.id}/nodes`;

  it('first, middle and last page of a filtered list, each link keeping the filters', async () => {
    // 23 nodes: with per_page 5 there are 5 pages; the filters below change nothing but must be kept.
    const query = 'region=&per_page=5&search=-&sort=-name';
    const firstRes = await get(`${nodes()}?${query}`);
    const first = firstRes.json();
    expect(first.total_pages).toBeGreaterThan(2);
    const last = first.total_pages as number;
    const links = parseLinks(firstRes.headers.link);
    expect(Object.keys(links)).toEqual(['first', 'next', 'last']);
    expect([pageOf(links.first!), pageOf(links.next!), pageOf(links.last!)]).toEqual([1, 2, last]);
    for (const href of Object.values(links)) {
      const params = new URL(href, 'http://x').searchParams;
      expect(href.startsWith(`${nodes()}?`), href).toBe(true);
      expect([params.get('region'), params.get('per_page'), params.get('search'), params.get('sort')], href).toEqual(['', '5', '-', '-name']);
    }

    // Following next gives what asking for page 2 gives.
    const middleRes = await get(links.next!);
    expect(middleRes.json()).toEqual((await get(`${nodes()}?${query}&page=2`)).json());
    const middle = parseLinks(middleRes.headers.link);
    expect(Object.keys(middle)).toEqual(['first', 'prev', 'next', 'last']);
    expect([pageOf(middle.first!), pageOf(middle.prev!), pageOf(middle.next!), pageOf(middle.last!)]).toEqual([1, 1, 3, last]);

    const lastRes = await get(links.last!);
    expect(lastRes.json().page).toBe(last);
    const atEnd = parseLinks(lastRes.headers.link);
    expect(Object.keys(atEnd)).toEqual(['first', 'prev', 'last']);
    expect(pageOf(atEnd.prev!)).toBe(last - 1);

    // Past the end, prev leads back to the last page.
    const beyond = parseLinks((await get(`${nodes()}?${query}&page=${last + 3}`)).headers.link);
    expect(Object.keys(beyond)).toEqual(['first', 'prev', 'last']);
    expect(pageOf(beyond.prev!)).toBe(last);
  });

  it('an empty list links its one (empty) page as first and last', async () => {
    const res = await get(`/api/v1/tenants/${empty.id}/nodes?types=aws.ec2.vpc`, empty.admin.token);
    expect(res.json()).toMatchObject({ total: 0, total_pages: 0, items: [] });
    const links = parseLinks(res.headers.link);
    expect(links).toEqual({
      first: `/api/v1/tenants/${empty.id}/nodes?types=aws.ec2.vpc&page=1&per_page=50`,
      last: `/api/v1/tenants/${empty.id}/nodes?types=aws.ec2.vpc&page=1&per_page=50`,
    });
  });

  it('on other lists too, with the default page size spelled out', async () => {
    const users = await get(`/api/v1/tenants/${tenant.id}/users?per_page=2`);
    const userLinks = parseLinks(users.headers.link);
    expect(userLinks.next).toBe(`/api/v1/tenants/${tenant.id}/users?per_page=2&page=2`);
    expect(pageOf(userLinks.last!)).toBe(users.json().total_pages);

    const rules = await get(`/api/v1/tenants/${tenant.id}/rules?page=2`);
    expect(rules.json()).toMatchObject({ page: 2, per_page: 50 });
    const ruleLinks = parseLinks(rules.headers.link);
    expect(ruleLinks.prev).toBe(`/api/v1/tenants/${tenant.id}/rules?page=1&per_page=50`);

    // A list outside /tenants (the caller's workspaces).
    expect(parseLinks((await get('/api/v1/workspaces')).headers.link).first).toBe('/api/v1/workspaces?page=1&per_page=50');
  });

  it('on a resource that pages a list of its own (an application and its resources)', async () => {
    const created = await call(t.app, tenant.admin.token, {
      method: 'POST',
      url: `/api/v1/tenants/${tenant.id}/applications`,
      payload: { name: 'everything in us-east-1', filter: 'region = us-east-1' },
      expect: 201,
    });
    const detail = `/api/v1/tenants/${tenant.id}/applications/${created.json().id}`;
    const res = await get(`${detail}?per_page=5&page=2`);
    expect(res.json().resources).toMatchObject({ page: 2, per_page: 5, total: 23, total_pages: 5 });
    expect(parseLinks(res.headers.link)).toEqual({
      first: `${detail}?per_page=5&page=1`,
      prev: `${detail}?per_page=5&page=1`,
      next: `${detail}?per_page=5&page=3`,
      last: `${detail}?per_page=5&page=5`,
    });
  });

  it('are not sent on a single resource, an error or a POST', async () => {
    const one = (await get(`${nodes()}?per_page=1`)).json().items[0];
    expect((await get(`${nodes()}/${encodeURIComponent(one.id)}`)).headers.link).toBeUndefined();
    const bad = await call(t.app, tenant.admin.token, { url: `${nodes()}?per_page=0`, expect: 400 });
    expect(bad.headers.link).toBeUndefined();
    // Node properties are the client's: one shaped like a page does not make the node a list.
    const shaped = {
      provider: 'aws',
      region: 'us-east-1',
      type: 'aws.s3.bucket',
      native_id: 'page-shaped',
      name: 'page-shaped',
      account_id: '111111111111',
      properties: { items: [], total: 1, page: 1, per_page: 1, total_pages: 1 },
      tags: {},
    };
    const node = (await call(t.app, tenant.admin.token, { method: 'POST', url: nodes(), payload: shaped, expect: 201 })).json();
    expect((await get(`${nodes()}/${encodeURIComponent(node.id)}`)).headers.link).toBeUndefined();
    const preview = await call(t.app, tenant.admin.token, {
      method: 'POST',
      url: `/api/v1/tenants/${tenant.id}/asset-groups/preview`,
      payload: { filter: 'region = us-east-1', per_page: 5 },
      expect: 200,
    });
    expect(preview.json().total).toBeGreaterThan(5);
    expect(preview.headers.link).toBeUndefined();
  });

  it('are documented on every paged GET', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    expect(doc.components.headers.Link.schema).toEqual({ type: 'string' });
    const paths = ['/api/v1/tenants/{tenantID}/nodes', '/api/v1/tenants/{tenantID}/exports', '/api/v1/workspaces', '/api/v1/tenants/{tenantID}/applications/{app_id}'];
    for (const path of paths) expect(doc.paths[path].get.responses['200'].headers.Link, path).toEqual({ $ref: '#/components/headers/Link' });
    expect(doc.paths['/api/v1/tenants/{tenantID}/nodes/{id}'].get.responses['200'].headers?.Link).toBeUndefined();
    // Every GET that takes a page parameter documents Link, and no other.
    const problems: string[] = [];
    for (const [path, item] of Object.entries(
      doc.paths as Record<string, Record<string, { parameters?: Array<{ in: string; name: string }>; responses: Record<string, { headers?: object }> }>>,
    )) {
      const get = item.get;
      if (!get) continue;
      const paged = (get.parameters ?? []).some((p) => p.in === 'query' && (p.name === 'page' || p.name === 'limit'));
      const linked = Object.hasOwn(get.responses['200']?.headers ?? {}, 'Link');
      if (paged !== linked) problems.push(`${path}: paged ${paged}, Link ${linked}`);
    }
    expect(problems).toEqual([]);
  });
});
