import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, type TenantFixture } from '../harness/identity.js';
import { putNodes } from '../harness/graph.js';
import { audit, fixtureNode } from '../harness/compliance.js';
import { builtinRules } from '../../src/modules/compliance/rule-catalog.js';

let t: TestApp;
let tenant: TenantFixture;
let token: string;
const rules = builtinRules().slice(0, 30);
beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
  token = tenant.users['security-analyst'].token;
  await putNodes(
    t,
    token,
    tenant.id,
    rules.map((r) => fixtureNode(r.id, 'violating', `${r.id}-one`)),
  );
  await audit(t, token, tenant.id);
  // A second audit later: findings with another created_at, and one resolved finding for status=all.
  t.clock.advance(60_000);
  await putNodes(
    t,
    token,
    tenant.id,
    rules.map((r) => fixtureNode(r.id, 'violating', `${r.id}-two`)),
  );
  await audit(t, token, tenant.id);
  const first = (await call(t.app, token, { url: `${base()}/findings?per_page=1`, expect: 200 })).json().items[0];
  await call(t.app, token, { method: 'POST', url: `${base()}/findings/${encodeURIComponent(first.id)}/resolve`, payload: {}, expect: 200 });
});
afterAll(() => t.close());

const base = () => `/api/v1/tenants/${tenant.id}`;
const get = (path: string) => call(t.app, token, { url: `${base()}${path}` });
const ids = (body: { items: Array<{ id: string }> }) => body.items.map((f) => f.id);

/** Every page of a list by cursor, from its first page. */
async function allByCursor(path: string, perPage: number, between?: () => Promise<void>): Promise<string[]> {
  const sep = path.includes('?') ? '&' : '?';
  let res = await get(`${path}${sep}per_page=${perPage}`);
  expect(res.statusCode).toBe(200);
  const seen = ids(res.json());
  for (let guard = 0; res.json().next_cursor !== null && guard < 1000; guard++) {
    if (between) await between();
    res = await get(`${path}${sep}per_page=${perPage}&cursor=${res.json().next_cursor}`);
    expect(res.statusCode).toBe(200);
    expect(res.json().page).toBeNull();
    seen.push(...ids(res.json()));
  }
  return seen;
}

describe('GET /findings keyset paging', () => {
  it('pages by cursor through every sort in the same order as one page, next_cursor null on the last', async () => {
    const sorts = ['-severity', 'severity', 'created_at', '-created_at', 'resource_id', '-resource_id', 'first_seen', '-first_seen', 'last_seen', '-last_seen'];
    for (const status of ['open', 'all']) {
      for (const sort of sorts) {
        const whole = ids((await get(`/findings?status=${status}&sort=${sort}&per_page=500`)).json());
        expect(whole.length).toBeGreaterThan(50);
        expect(await allByCursor(`/findings?status=${status}&sort=${sort}`, 7), `${status} ${sort}`).toEqual(whole);
      }
    }
    const filtered = ids((await get('/findings?severity=HIGH,LOW&sort=severity&per_page=500')).json());
    expect(await allByCursor('/findings?severity=HIGH,LOW&sort=severity', 4)).toEqual(filtered);
  });

  it('a severity filter (read one rank per index range) keeps every sort, order and cursor page of the unfiltered list', async () => {
    const sorts = ['-severity', 'severity', '-created_at', 'resource_id', '-last_seen'];
    for (const status of ['open', 'all']) {
      for (const sort of sorts) {
        const everything = (await get(`/findings?status=${status}&sort=${sort}&per_page=500`)).json().items as Array<{ id: string; severity: string }>;
        for (const severities of [['LOW'], ['HIGH', 'MEDIUM'], ['CRITICAL', 'MEDIUM', 'INFO']]) {
          const expected = everything.filter((f) => severities.includes(f.severity)).map((f) => f.id);
          const url = `/findings?status=${status}&sort=${sort}&severity=${severities.join(',')}`;
          const page = (await get(`${url}&per_page=500`)).json();
          expect(ids(page), url).toEqual(expected);
          expect(page.total, url).toBe(expected.length);
          expect(await allByCursor(url, 5), url).toEqual(expected);
        }
      }
    }
  });

  it('the first page has next_cursor; the last has null; Link has rel="next" with the cursor', async () => {
    const first = await get('/findings?per_page=5');
    const cursor = first.json().next_cursor as string;
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    const second = await get(`/findings?per_page=5&cursor=${cursor}`);
    expect(second.json()).toMatchObject({ page: null, per_page: 5, total: first.json().total });
    const link = second.headers.link as string;
    expect(link).toContain(`cursor=${second.json().next_cursor}`);
    expect(link).toMatch(/rel="next"/);
    expect(link).toMatch(/<[^>]*page=1[^>]*>; rel="first"/);
    const total = first.json().total as number;
    const last = await get(`/findings?per_page=${total}`);
    expect(last.json().next_cursor).toBeNull();
  });

  it('400 invalid cursor for garbage, a cursor of another sort or list; 400 for cursor with page', async () => {
    const cursor = (await get('/findings?per_page=5')).json().next_cursor as string;
    for (const bad of ['garbage!', 'eyJhIjoxfQ', Buffer.from('["findings","-severity",9,"x","y"]').toString('base64url')]) {
      const res = await get(`/findings?cursor=${encodeURIComponent(bad)}`);
      expect(res.statusCode, bad).toBe(400);
      expect(res.json().error.message).toBe('invalid cursor');
    }
    expect((await get(`/findings?sort=resource_id&cursor=${cursor}`)).json().error.message).toBe('invalid cursor');
    expect((await get(`/findings/scored?cursor=${cursor}`)).json().error.message).toBe('invalid cursor');
    const both = await get(`/findings?page=2&cursor=${cursor}`);
    expect(both.statusCode).toBe(400);
    expect(both.json().error.message).toBe('cursor and page cannot be used together');
  });

  it('while audits insert findings between pages, every finding that existed is seen exactly once', async () => {
    const before = ids((await get('/findings?per_page=500')).json());
    let n = 0;
    const seen = await allByCursor('/findings', 6, async () => {
      n += 1;
      t.clock.advance(1000);
      await putNodes(
        t,
        token,
        tenant.id,
        rules.slice(0, 3).map((r) => fixtureNode(r.id, 'violating', `${r.id}-new-${n}`)),
      );
      await audit(t, token, tenant.id);
    });
    expect(n).toBeGreaterThan(3);
    for (const id of before)
      expect(
        seen.filter((s) => s === id),
        id,
      ).toHaveLength(1);
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('GET /findings/scored pages by cursor in its order', async () => {
    const whole = ids((await get('/findings/scored?per_page=500')).json());
    expect(await allByCursor('/findings/scored', 9)).toEqual(whole);
    const high = ids((await get('/findings/scored?min_score=40&per_page=500')).json());
    expect(high.length).toBeGreaterThan(0);
    expect(await allByCursor('/findings/scored?min_score=40', 5)).toEqual(high);
  });
});
