import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { frameworks } from '../../src/modules/compliance/frameworks.js';
import { builtinRules } from '../../src/modules/compliance/rule-catalog.js';
import { loadBuiltinRules } from '../../src/modules/compliance/rules/content-loader.js';
import { prowlerFrameworkMappings } from '../../src/modules/compliance/rules/prowler-mappings.js';
import { CORE_FRAMEWORKS, FRAMEWORKS, PROWLER_FRAMEWORKS } from '../../src/modules/compliance/rules/rule-types.js';

/**
 * The catalogs carried as Prowler ships them (scripts/content/build-prowler-frameworks.mjs): every one
 * in the registry loads, cites its source, lists only checks Prowler has (or flags them as retired), and
 * the built-in rules count toward exactly the requirements that list a check they reproduce.
 */

interface Doc {
  id: string;
  default_enabled?: boolean;
  prowler?: { framework: string; compliance_key: string };
  source: Record<string, string>;
  checks_without_metadata?: string[];
  controls: Array<{ id: string; title: string; family: string; checks?: string[]; prowler_id?: string }>;
}
const read = <T>(name: string) => JSON.parse(readFileSync(new URL(`../../content/frameworks/${name}`, import.meta.url), 'utf8')) as T;
const known = new Set(read<{ checks: string[] }>('prowler-aws-checks.json').checks);

describe('the framework registry', () => {
  it('loads a catalog for every framework id, and every catalog file is in the registry', () => {
    const loaded = frameworks();
    expect([...loaded.keys()]).toEqual([...FRAMEWORKS]);
    for (const [id, catalog] of loaded) expect(catalog.controls.size, id).toBeGreaterThan(0);
    const files = readdirSync(new URL('../../content/frameworks/', import.meta.url)).filter((f) => f.endsWith('.json'));
    const catalogs = files.filter((f) => 'controls' in read<object>(f)).map((f) => f.replace(/\.json$/, ''));
    expect(catalogs.sort()).toEqual([...FRAMEWORKS].sort());
  });

  it('has the four core frameworks on by default and the Prowler-carried ones off', () => {
    for (const id of CORE_FRAMEWORKS) expect(frameworks().get(id)!.defaultEnabled, id).toBe(true);
    for (const id of PROWLER_FRAMEWORKS) expect(frameworks().get(id)!.defaultEnabled, id).toBe(false);
  });
});

describe.each(PROWLER_FRAMEWORKS)('Prowler-carried catalog %s', (id) => {
  const doc = read<Doc>(`${id}.json`);

  it('cites Prowler at the pinned commit under Apache-2.0, and names its compliance key', () => {
    expect(doc.id).toBe(id);
    expect(doc.default_enabled).toBe(false);
    expect(doc.source.repository).toBe('prowler-cloud/prowler');
    expect(doc.source.commit).toBe('3e000faa3109230b748e4418a13c11c9e59f5cfb');
    expect(doc.source.license).toMatch(/^Apache-2\.0/);
    expect(doc.source.url).toBe(`https://github.com/prowler-cloud/prowler/blob/${doc.source.commit}/${doc.source.path}`);
    expect(doc.prowler?.compliance_key).toMatch(/^[A-Za-z0-9.-]+$/);
  });

  it('gives every control a unique id, a title and a family, and a Prowler id that is unique too', () => {
    const ids = doc.controls.map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    const prowlerIds = doc.controls.map((c) => c.prowler_id ?? c.id);
    expect(new Set(prowlerIds).size).toBe(prowlerIds.length);
    for (const c of doc.controls) {
      expect(c.title.trim(), c.id).not.toBe('');
      expect(c.family.trim(), c.id).not.toBe('');
    }
  });

  it('lists only checks Prowler has a metadata file for, or flags them as retired', () => {
    const listed = new Set(doc.controls.flatMap((c) => c.checks ?? []));
    expect(listed.size).toBeGreaterThan(0);
    const unknown = [...listed].filter((c) => !known.has(c)).sort();
    expect(unknown).toEqual(doc.checks_without_metadata ?? []);
  });
});

describe('rules and the Prowler-carried frameworks', () => {
  it('reproduce only checks Prowler has', () => {
    const unknown = loadBuiltinRules().flatMap((r) => (r.prowler_checks ?? []).filter((c) => !known.has(c)).map((c) => `${r.id}: ${c}`));
    expect(unknown).toEqual([]);
  });

  it('count toward exactly the requirements that list one of their checks', () => {
    const definitions = new Map(loadBuiltinRules().map((d) => [d.id, d]));
    for (const rule of builtinRules()) {
      const checks = new Set(definitions.get(rule.id)!.prowler_checks ?? []);
      const derived = rule.framework_mappings.filter((m) => (PROWLER_FRAMEWORKS as readonly string[]).includes(m.framework));
      const expected: string[] = [];
      for (const id of PROWLER_FRAMEWORKS) {
        for (const c of frameworks().get(id)!.controls.values()) if (c.checks?.some((k) => checks.has(k))) expected.push(`${id} ${c.id}`);
      }
      expect(
        derived.map((m) => `${m.framework} ${m.control_id}`),
        rule.id,
      ).toEqual(expected);
    }
  });

  it('map every framework to some rule, each mapped control existing in its catalog', () => {
    const rules = builtinRules();
    for (const id of PROWLER_FRAMEWORKS) {
      const touching = rules.filter((r) => r.framework_mappings.some((m) => m.framework === id));
      expect(touching.length, id).toBeGreaterThan(0);
    }
    for (const m of prowlerFrameworkMappings(['cloudtrail_multi_region_enabled'])) {
      expect(frameworks().get(m.framework)!.controls.get(m.control_id)?.checks, `${m.framework} ${m.control_id}`).toContain('cloudtrail_multi_region_enabled');
    }
    expect(prowlerFrameworkMappings(['cloudtrail_multi_region_enabled']).map((m) => m.framework)).toContain('hipaa');
    expect(prowlerFrameworkMappings(['no_such_check'])).toEqual([]);
  });
});
