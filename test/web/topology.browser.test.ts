import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { chromiumPath } from './harness/chromium.js';
import { useConsole } from './harness/use-console.js';
import { expectAccessible, signIn } from './harness/pages.js';
import { buildTenant, call } from '../harness/identity.js';
import { awsNode } from '../harness/graph.js';

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
    await settled(page);
    await graph.screenshot({ path: '/tmp/topology-demo.png' });
    await expectAccessible(page);

    // Search: the list view narrows to the match, and selecting it opens its panel with its findings link.
    await page.getByLabel('Search resources').fill(source.name);
    await expect.poll(() => page.getByRole('status').filter({ hasText: /match/ }).first().textContent(), SLOW).toMatch(/\d+ match/);
    await page
      .getByRole('button', { name: `Show ${source.name}` })
      .first()
      .click();
    const panel = page.getByRole('region', { name: source.name });
    await expect.poll(() => panel.isVisible(), SLOW).toBe(true);
    const link = panel.getByRole('link', { name: 'Findings of this resource' });
    expect(await link.getAttribute('href')).toBe(`/findings?resource_id=${encodeURIComponent(source.id)}`);

    // Path trace to the other end of the edge: the path is listed in text.
    await panel.getByLabel('Target resource').fill(target.name);
    await page
      .getByRole('option', { name: new RegExp(`^${escape(target.name)} · ${escape(target.type)}$`) })
      .first()
      .click();
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

/** What the canvas draws now, read from the Cytoscape instance the library registers on its container. */
interface Drawn {
  id: string;
  label: string;
  kind: string | null;
  closed: boolean;
  parent: boolean;
  x: number;
  y: number;
}
async function drawn(page: Page): Promise<Drawn[]> {
  return page.evaluate(() => {
    // Runs in the page (the test's own types know no DOM): the graph's container and the Cytoscape
    // instance the library attaches to it.
    const page = (globalThis as unknown as { document: { querySelector(selector: string): { _cyreg?: { cy?: any } } | null } }).document;
    const container = page.querySelector('[role="img"][aria-label^="Workspace graph"]');
    const cy = container?._cyreg?.cy;
    if (!cy) return [];
    return cy.nodes().map((n: any) => ({
      id: n.id(),
      label: n.data('label'),
      kind: n.data('kind') ?? null,
      closed: n.hasClass('closed'),
      parent: n.isParent(),
      x: n.renderedPosition().x,
      y: n.renderedPosition().y,
    }));
  });
}

/** Waits until the layout has placed everything: two readings half a second apart agree. */
async function settled(page: Page): Promise<void> {
  let last = '';
  await expect
    .poll(
      async () => {
        const now = JSON.stringify(await drawn(page));
        const same = now === last;
        last = now;
        return same;
      },
      { timeout: 30_000, interval: 500 },
    )
    .toBe(true);
}

/**
 * A workspace above the console's collapse threshold (300 resources, TopologyPage.tsx): one account,
 * two regions, two VPCs in each, two subnets in each VPC and 40 instances in each subnet.
 */
function largeEstate() {
  const nodes: object[] = [];
  for (const region of ['us-east-1', 'eu-west-1']) {
    for (const v of [1, 2]) {
      const vpcId = `vpc-${region}-${v}`;
      nodes.push(awsNode('aws.ec2.vpc', vpcId, { region, account_id: '111122223333' }));
      for (const s of [1, 2]) {
        const subnetId = `subnet-${region}-${v}-${s}`;
        nodes.push(awsNode('aws.ec2.subnet', subnetId, { region, account_id: '111122223333', properties: { configuration: { vpcId }, relationships: [] } }));
        for (let i = 1; i <= 40; i++) {
          nodes.push(
            awsNode('aws.ec2.instance', `i-${region}-${v}-${s}-${i}`, {
              region,
              account_id: '111122223333',
              name: `web-${v}${s}-${i}`,
              properties: { configuration: { vpcId, subnetId }, relationships: [] },
            }),
          );
        }
      }
    }
  }
  return nodes;
}

describe.runIf(chromiumPath())('a large topology', () => {
  it('opens collapsed to accounts, regions and VPCs with their counts, a VPC opens when selected, and Expand all draws every resource', async () => {
    const tenant = await buildTenant(web.app.t);
    const nodes = largeEstate();
    expect(nodes.length).toBeGreaterThan(300);
    await call(web.app.t.app, tenant.admin.token, { method: 'POST', url: `/api/v1/tenants/${tenant.id}/nodes`, payload: { nodes }, expect: 201 });

    const { context, page } = await signIn(web.browser, web.app, tenant.users['read-only'].username);
    await page.goto('/topology');
    await expect.poll(() => page.getByTestId('topology-counts').textContent(), { timeout: 30_000 }).toBe(`${nodes.length} resources, 0 relations`);
    await page.getByText('Large graph: accounts, regions and VPCs are collapsed. Select a group to expand it.').waitFor(SLOW);
    const graph = page.getByRole('img', { name: /Workspace graph/ });

    // Accounts and regions open, each VPC one closed node with the number of resources inside.
    await expect.poll(async () => (await drawn(page)).length, SLOW).toBe(7);
    const first = await drawn(page);
    expect(first.filter((n) => n.kind === 'account').map((n) => [n.label, n.closed, n.parent])).toEqual([['Account 111122223333', false, true]]);
    expect(
      first
        .filter((n) => n.kind === 'region')
        .map((n) => [n.label, n.closed, n.parent])
        .sort(),
    ).toEqual([
      ['Region eu-west-1', false, true],
      ['Region us-east-1', false, true],
    ]);
    const vpcs = first.filter((n) => n.kind === 'vpc');
    // A VPC holds its own node, two subnets and 80 instances.
    expect(vpcs.map((n) => [n.label, n.closed]).sort()).toEqual(['eu-west-1-1', 'eu-west-1-2', 'us-east-1-1', 'us-east-1-2'].map((id) => [`VPC vpc-${id} (83)`, true]));
    await settled(page);
    await graph.screenshot({ path: '/tmp/topology-large-collapsed.png' });

    // Selecting a VPC on the canvas opens it: its two subnets show, each closed with its 41 resources.
    const vpc = vpcs.find((n) => n.label.startsWith('VPC vpc-us-east-1-1 '))!;
    const box = (await graph.boundingBox())!;
    await page.mouse.click(box.x + vpc.x, box.y + vpc.y);
    await expect
      .poll(
        async () =>
          (await drawn(page))
            .filter((n) => n.kind === 'subnet')
            .map((n) => [n.label, n.closed])
            .sort(),
        SLOW,
      )
      .toEqual([
        ['Subnet subnet-us-east-1-1-1 (41)', true],
        ['Subnet subnet-us-east-1-1-2 (41)', true],
      ]);
    expect((await drawn(page)).find((n) => n.id === vpc.id)).toMatchObject({ closed: false, parent: true });

    // Expand all: every resource drawn, inside its open VPC and subnet.
    await page.getByRole('button', { name: 'Expand all' }).click();
    await expect.poll(async () => (await drawn(page)).filter((n) => !n.parent && !n.kind).length, { timeout: 60_000 }).toBe(320);
    expect((await drawn(page)).filter((n) => n.closed)).toEqual([]);
    await settled(page);
    await graph.screenshot({ path: '/tmp/topology-large-expanded.png' });
    await page.getByRole('button', { name: 'Fit to screen' }).click();
    await settled(page);
    await graph.screenshot({ path: '/tmp/topology-large-expanded-fit.png' });
    await page.getByRole('button', { name: 'Collapse to VPCs' }).click();
    await expect.poll(async () => (await drawn(page)).length, SLOW).toBe(7);
    await context.close();
  }, 240_000);
});

describe.runIf(chromiumPath())('the PNG export', () => {
  it('follows the export job to the end and downloads a PNG', async () => {
    const { context, page } = await signIn(web.browser, web.app, web.app.tenant.users['security-analyst'].username);
    await page.goto('/topology');
    await expect.poll(() => page.getByTestId('topology-counts').textContent(), { timeout: 30_000 }).toMatch(/resources/);
    const download = page.waitForEvent('download', { timeout: 120_000 });
    await page.getByRole('button', { name: 'Export PNG' }).click();
    const file = await download;
    expect(file.suggestedFilename()).toMatch(/\.png$/);
    const bytes = await readFile((await file.path())!);
    // The PNG signature (RFC 2083 section 3.1), then the IHDR chunk.
    expect([...bytes.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    expect(bytes.subarray(12, 16).toString('latin1')).toBe('IHDR');
    expect(bytes.length).toBeGreaterThan(1000);
    await expect.poll(() => page.getByRole('link', { name: /^Download .*\.png$/ }).isVisible(), SLOW).toBe(true);
    await context.close();
  }, 240_000);
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
