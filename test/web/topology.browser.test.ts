import { describe, expect, it } from 'vitest';
import { chromiumPath } from './harness/chromium.js';
import { useConsole } from './harness/use-console.js';
import { expectAccessible, signIn } from './harness/pages.js';
import { call } from '../harness/identity.js';

const web = useConsole({ demo: true });
/** Polls wait this long: the machine running the tests is shared and slow. */
const SLOW = { timeout: 20_000 };

interface Node {
  id: string;
  name: string;
  type: string;
}

async function api<T>(url: string, method: 'GET' | 'POST' = 'GET', payload?: object): Promise<T> {
  const res = await call(web.app.t.app, web.app.tenant.admin.token, { method, url: `/api/v1/tenants/${web.app.tenant.id}${url}`, payload, expect: 200 });
  return res.json() as T;
}

describe.runIf(chromiumPath())('the topology screen', () => {
  it('draws the workspace graph, finds a node, shows its findings link, traces a path and exports draw.io', async () => {
    const nodes = await api<{ items: Node[]; total: number }>('/nodes?per_page=500');
    const edges = await api<{ items: { source: string; target: string }[]; total: number }>('/edges?per_page=500');
    // Two resources the path tracer connects: the ends of an edge it follows.
    let pair: { source: string; target: string } | null = null;
    for (const edge of edges.items.slice(0, 60)) {
      const trace = await api<{ paths: unknown[] }>('/pathtracer/trace', 'POST', { source: edge.source, target: edge.target });
      if (trace.paths.length > 0) {
        pair = edge;
        break;
      }
    }
    expect(pair).not.toBeNull();
    const byId = new Map(nodes.items.map((n) => [n.id, n]));
    const source = byId.get(pair!.source)!;
    const target = byId.get(pair!.target)!;

    const { context, page } = await signIn(web.browser, web.app, web.app.tenant.users['security-analyst'].username);
    await page.goto('/topology');
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), SLOW).toBe('Topology');
    await expect.poll(() => page.getByTestId('topology-counts').textContent(), { timeout: 30_000 }).toBe(`${nodes.total} resources, ${edges.total} relations`);
    const graph = page.getByRole('img', { name: /Workspace graph/ });
    await expect.poll(() => graph.locator('canvas').count(), SLOW).toBeGreaterThan(0);
    await expectAccessible(page);

    // Search: the list view narrows to the match, and selecting it opens its panel with its findings link.
    await page.getByLabel('Search resources').fill(source.name);
    await expect.poll(() => page.getByRole('status').filter({ hasText: /match/ }).first().textContent(), SLOW).toMatch(/\d+ match/);
    await page.getByRole('button', { name: `Show ${source.name}` }).first().click();
    const panel = page.getByRole('region', { name: source.name });
    await expect.poll(() => panel.isVisible(), SLOW).toBe(true);
    const link = panel.getByRole('link', { name: 'Findings of this resource' });
    expect(await link.getAttribute('href')).toBe(`/findings?resource_id=${encodeURIComponent(source.id)}`);

    // Path trace to the other end of the edge: the path is listed in text.
    await panel.getByLabel('Target resource').fill(target.name);
    await page.getByRole('option', { name: new RegExp(`^${escape(target.name)} · ${escape(target.type)}$`) }).first().click();
    await panel.getByRole('button', { name: 'Trace', exact: true }).click();
    await expect.poll(() => panel.getByText(/paths?, shortest: \d+ hops/).isVisible(), { timeout: 20_000 }).toBe(true);
    expect(await panel.getByRole('listitem').first().textContent()).toContain(`${source.name} → `);
    await panel.getByRole('button', { name: 'Show blast radius' }).click();
    await expect.poll(() => panel.getByText(/reachable, up to \d+ hops away/).isVisible(), { timeout: 20_000 }).toBe(true);
    await expectAccessible(page);
    await page.evaluate('window.scrollTo(0, 0)');
    await page.screenshot({ path: '/tmp/topology.png', fullPage: true });

    // Export draw.io: the job runs to the end and its file downloads.
    const download = page.waitForEvent('download', { timeout: 60_000 });
    await page.getByRole('button', { name: 'Export draw.io' }).click();
    const file = await download;
    expect(file.suggestedFilename()).toMatch(/\.drawio$/);
    await expect.poll(() => page.getByRole('link', { name: /^Download / }).isVisible(), SLOW).toBe(true);
    await context.close();
  }, 180_000);
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
