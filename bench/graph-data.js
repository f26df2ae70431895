// A deterministic synthetic AWS estate built from the rule fixtures (real AWS Config configuration
// items): every node is a fixture's item with its own id, most of them violating one rule or more.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { root } from './lib.js';
import { loadBuiltinRules } from '../dist/modules/compliance/rules/content-loader.js';

function prng(seed) {
  let s = seed >>> 0;
  return () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32;
}

export function loadTemplates() {
  const rules = new Map(loadBuiltinRules().map((r) => [r.id, r]));
  const dir = join(root, 'test', 'fixtures', 'rules');
  const templates = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
    for (const [ruleId, fixture] of Object.entries(JSON.parse(readFileSync(join(dir, file), 'utf8')))) {
      const rule = rules.get(ruleId);
      if (!rule) continue;
      templates.push({ type: rule.resource_type, resource: fixture.violating, violating: true });
      templates.push({ type: rule.resource_type, resource: fixture.compliant, violating: false });
    }
  }
  return templates;
}

/** `count` nodes (80% from violating items) and `edgeCount` edges between them. */
export function estate(count, edgeCount, seed = 42) {
  const random = prng(seed);
  const templates = loadTemplates();
  const bad = templates.filter((t) => t.violating);
  const good = templates.filter((t) => !t.violating);
  const regions = ['us-east-1', 'eu-west-1', 'ap-south-1'];
  const nodes = [];
  for (let i = 0; i < count; i++) {
    const pool = random() < 0.8 ? bad : good;
    const tpl = pool[Math.floor(random() * pool.length)];
    const p = tpl.resource.properties;
    const nativeId = `${p.resourceId}-${i}`;
    const region = regions[i % regions.length];
    nodes.push({
      provider: 'aws',
      region,
      type: tpl.type,
      native_id: nativeId,
      name: `${p.resourceName ?? p.resourceId}-${i}`,
      account_id: String(100000000000 + (i % 7)),
      properties: { ...p, resourceId: nativeId, awsRegion: region },
      tags: tpl.resource.tags ?? {},
    });
  }
  const ids = nodes.map((n) => `${n.provider}:${n.region}:${n.type}:${n.native_id}`);
  const edges = [];
  const seen = new Set();
  while (edges.length < edgeCount) {
    const a = Math.floor(random() * count);
    const b = Math.floor(random() * count);
    if (a === b) continue;
    const key = `${a}:${b}`;
    if (seen.has(key)) continue;
    seen.add(key);
    edges.push({ source: ids[a], target: ids[b], type: random() < 0.5 ? 'protects' : 'connects_to' });
  }
  return { nodes, ids, edges };
}
