import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, createApiKey, type TenantFixture } from '../harness/identity.js';
import { prepare, runOneCycle, type AgentOptions, type CycleSummary } from '../../src/agent/agent.js';
import { collectPackages } from '../../src/agent/collectors/packages.js';
import { createContext } from '../../src/agent/context.js';
import { hostFacts } from '../../src/agent/host.js';
import { importLocation } from '../../src/modules/vulndb/import/importer.js';
import { buildReport, loadVulnerabilityData, OSV_DEBIAN, sendReport } from './helpers.js';

/**
 * CVE findings from THIS machine's real packages: the agent's collectors read the dpkg database here
 * and send the report to the test app over a real port; the store holds real Debian advisories
 * (test/fixtures/agents). What the findings must be is worked out independently of the server's
 * matcher: from the advisories' ranges with `dpkg --compare-versions`, Debian's own version order.
 * Needs a Debian 12 host with dpkg (the advisories are Debian 12's); elsewhere it is skipped.
 */

const release = existsSync('/etc/os-release') ? readFileSync('/etc/os-release', 'utf8') : '';
const debian12 = /^ID=debian$/m.test(release) && /^VERSION_ID="?12"?$/m.test(release) && existsSync('/usr/bin/dpkg');

interface OsvAffected {
  package?: { ecosystem?: string; name?: string };
  ranges?: Array<{ type: string; events: Array<Record<string, string>> }>;
  versions?: string[];
}
interface OsvRecord {
  id: string;
  withdrawn?: string;
  upstream?: string[];
  aliases?: string[];
  related?: string[];
  affected?: OsvAffected[];
}

/** The CVEs an advisory is about: its own id and aliases, else the CVEs it relates to (a DSA), else its id. */
function cvesOf(record: OsvRecord): string[] {
  const own = [record.id, ...(record.aliases ?? [])].filter((id) => /^CVE-/.test(id));
  const related = (record.related ?? []).filter((id) => /^CVE-/.test(id));
  return own.length ? own : related.length ? related : [record.id];
}

/**
 * Orders version pairs with `dpkg --compare-versions`: one shell runs them all (a process per pair
 * from Node costs seconds on a busy machine). Returns a map "a\tb" → -1, 0 or 1.
 */
function dpkgOrder(pairs: Array<[string, string]>): Map<string, number> {
  const unique = [...new Map(pairs.map(([a, b]) => [`${a}\t${b}`, [a, b] as const])).values()];
  const file = join(mkdtempSync(join(tmpdir(), 'cg-dpkg-')), 'pairs.tsv');
  writeFileSync(file, unique.map(([a, b]) => `${a}\t${b}\n`).join(''));
  const script = `while IFS="$(printf '\\t')" read -r a b; do
    if dpkg --compare-versions "$a" lt "$b"; then echo -1; elif dpkg --compare-versions "$a" eq "$b"; then echo 0; else echo 1; fi
  done < "$1"`;
  const out = execFileSync('sh', ['-c', script, 'sh', file], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 })
    .trim()
    .split('\n');
  rmSync(join(file, '..'), { recursive: true, force: true });
  return new Map(unique.map(([a, b], i) => [`${a}\t${b}`, Number(out[i])]));
}

/** Source package → the advisories affecting its installed version (OSV semantics, dpkg's ordering). */
function expectedVulnerable(installed: Map<string, Set<string>>): Map<string, Map<string, OsvRecord>> {
  const records = (JSON.parse(gunzipSync(readFileSync(OSV_DEBIAN)).toString('utf8')) as OsvRecord[]).filter((r) => !r.withdrawn);
  const entries = records.flatMap((record) =>
    (record.affected ?? [])
      .filter((a) => a.package?.ecosystem === 'Debian:12' && a.package.name && installed.has(a.package.name))
      .flatMap((a) => [...installed.get(a.package!.name!)!].map((version) => ({ record, a, version }))),
  );
  const bound = (e: Record<string, string>) => e.introduced ?? e.fixed ?? e.last_affected ?? '0';
  const order = dpkgOrder(entries.flatMap(({ a, version }) => (a.ranges ?? []).flatMap((r) => r.events.map((e) => [version, bound(e)] as [string, string]))));
  const cmp = (a: string, b: string) => order.get(`${a}\t${b}`)!;
  const out = new Map<string, Map<string, OsvRecord>>();
  for (const { record, a, version } of entries) {
    let hit = (a.versions ?? []).includes(version);
    for (const range of a.ranges ?? []) {
      if (range.type !== 'ECOSYSTEM') continue;
      let inside = false;
      for (const e of range.events) {
        if (e.introduced !== undefined) inside ||= e.introduced === '0' || cmp(version, e.introduced) >= 0;
        else if (e.fixed !== undefined && cmp(version, e.fixed) >= 0) inside = false;
        else if (e.last_affected !== undefined && cmp(version, e.last_affected) > 0) inside = false;
      }
      hit ||= inside;
    }
    if (!hit) continue;
    const name = a.package!.name!;
    if (!out.has(name)) out.set(name, new Map());
    out.get(name)!.set(record.id, record);
  }
  return out;
}

let t: TestApp;
let tenant: TenantFixture;
let key: string;
let stateDir: string;
let options: AgentOptions;
let prepared: Awaited<ReturnType<typeof prepare>>;
let first: CycleSummary;
let nodeId: string;

interface Finding {
  rule_id: string;
  status: string;
  resolved_by: string | null;
  severity: string;
  base_severity: string;
  cve_ids: string[];
  details: {
    package: string;
    vulnerability: string;
    known_exploited: string[];
    fixed_version: string | null;
    unfixed_advisories: string[];
    advisories: Array<{ id: string; fixed_versions: string[] }>;
    installed: Array<{ source_name: string | null }>;
  };
}

async function vulnFindings(): Promise<Finding[]> {
  const res = await call(t.app, tenant.admin.token, {
    method: 'GET',
    url: `/api/v1/tenants/${tenant.id}/findings?status=all&per_page=500&resource_id=${encodeURIComponent(nodeId)}`,
    expect: 200,
  });
  return (res.json().items as Finding[]).filter((f) => f.rule_id.startsWith('host-vuln-'));
}

beforeAll(async () => {
  if (!debian12) return;
  // The agent stamps its reports with the real time; the server's clock starts just after it.
  t = await createTestApp({ clockStart: new Date(Date.now() + 60_000).toISOString() });
  tenant = await buildTenant(t);
  key = (await createApiKey(t, tenant, { permissions: ['agents:write'] })).key;
  await loadVulnerabilityData(t);
  const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  stateDir = mkdtempSync(join(tmpdir(), 'cg-agent-cve-'));
  options = {
    server: base,
    apiKey: key,
    agentVersion: '0.1.0-test',
    stateDir,
    intervalMs: 300_000,
    once: true,
    agentId: 'agent-this-host',
    retry: { retries: 0, baseDelayMs: 10, maxDelayMs: 10 },
    log: () => undefined,
  };
  prepared = await prepare(options);
  first = await runOneCycle(options, prepared);
  nodeId = first.node_id!;
});
afterAll(async () => {
  await t?.close();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

describe.skipIf(!debian12)('CVE findings from the packages of this machine', () => {
  it('the agent on this machine sends its report over a real port and the server takes it', () => {
    expect(first.delivered, JSON.stringify(first.stopped)).toBe(true);
    expect(first.server_response).toMatchObject({ ignored: false, node: 'created', agent_id: 'agent-this-host' });
    expect(first.collectors.packages!.status).toBe('ok');
    expect(first.spool.pending).toBe(0);
  });

  it('opens one finding per source package and CVE that an advisory affects, listing its installed binary packages, and no other', async () => {
    const listed = execFileSync('dpkg-query', ['-W', '-f', '${db:Status-Status}\t${Package}\t${source:Package}\t${source:Version}\n'], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => l.startsWith('installed\t'))
      .map((l) => l.split('\t') as [string, string, string, string]);
    const installed = new Map<string, Set<string>>();
    for (const [, , source, version] of listed) installed.set(source, (installed.get(source) ?? new Set()).add(version));
    const vulnerable = expectedVulnerable(installed);
    expect(vulnerable.size).toBeGreaterThan(10);
    const expectedPairs = [...new Set([...vulnerable].flatMap(([source, records]) => [...records.values()].flatMap((r) => cvesOf(r).map((cve) => `${source} ${cve}`))))].sort();
    const expectedPackages = [...new Set(listed.filter(([, , source]) => vulnerable.has(source)).map(([, name]) => name))].sort();

    const findings = await vulnFindings();
    expect(findings.map((f) => `${f.details.package} ${f.details.vulnerability}`).sort()).toEqual(expectedPairs);
    expect(first.server_response!.packages).toMatchObject({ vulnerable: expectedPackages.length });
    for (const f of findings) {
      expect(f.status).toBe('open');
      expect(f.cve_ids).toEqual(f.details.vulnerability.startsWith('CVE-') ? [f.details.vulnerability] : []);
      // Its binary packages are every installed package built from that source.
      expect(f.details.installed.map((i) => (i as { name?: string }).name).sort()).toEqual(
        listed
          .filter(([, , source]) => source === f.details.package)
          .map(([, name]) => name)
          .sort(),
      );
      // No CVE of the finding is in the KEV catalog (none is loaded yet): the severity is the base one.
      expect(f.severity).toBe(f.base_severity);
    }
  });

  it('makes a finding CRITICAL when one of its CVEs is in the KEV catalog', async () => {
    const target = (await vulnFindings()).find((f) => f.cve_ids.length > 0 && f.base_severity !== 'CRITICAL')!;
    const cve = target.cve_ids[0]!;
    // A KEV catalog (CISA's JSON format) listing that CVE.
    const catalog = join(stateDir, 'kev.json');
    writeFileSync(
      catalog,
      JSON.stringify({
        title: 'CISA Catalog of Known Exploited Vulnerabilities',
        catalogVersion: '2026.11.23',
        dateReleased: '2026-11-23T12:00:00.000Z',
        count: 1,
        vulnerabilities: [
          {
            cveID: cve,
            vendorProject: 'Debian',
            product: target.details.package,
            vulnerabilityName: 'test entry',
            dateAdded: '2026-11-20',
            shortDescription: 'listed for the test',
            requiredAction: 'Apply updates.',
            dueDate: '2026-12-11',
            knownRansomwareCampaignUse: 'Unknown',
            notes: '',
            cwes: [],
          },
        ],
      }),
    );
    const result = await importLocation({ db: t.deps.database.db, clock: t.clock, log: pino({ level: 'silent' }) }, catalog, { trigger: 'cli' });
    expect(result.status).not.toBe('failed');
    const next = await runOneCycle(options, prepared);
    expect(next.delivered).toBe(true);
    const after = (await vulnFindings()).find((f) => f.rule_id === target.rule_id)!;
    expect(after).toMatchObject({ status: 'open', severity: 'CRITICAL', base_severity: target.base_severity });
    expect(after.details.known_exploited).toEqual([cve]);
    const others = (await vulnFindings()).filter((f) => f.rule_id !== target.rule_id && !f.cve_ids.includes(cve));
    for (const f of others) expect(f.severity).toBe(f.base_severity);
  });

  it('removing the packages of a source package resolves its findings', async () => {
    const ctx = createContext({});
    const facts = await hostFacts(ctx, { fallbackId: async () => 'f'.repeat(32) });
    const packages = (await collectPackages(ctx)).items;
    const target = (await vulnFindings()).find((f) => f.status === 'open')!;
    // The finding is the source package's: removing every binary package built from it resolves it.
    const report = buildReport(
      { agent_id: 'agent-this-host', host: facts.host, os: facts.os, packages: packages.filter((p) => (p.source_name ?? p.name) !== target.details.package) },
      new Date(Date.now() + 1000).toISOString(),
    );
    const res = await sendReport(t, key, 'agent-this-host', report);
    expect(res.statusCode, res.body).toBe(200);
    const after = (await vulnFindings()).find((f) => f.rule_id === target.rule_id)!;
    expect(after).toMatchObject({ status: 'resolved', resolved_by: 'agent' });
  });

  it("a package older than an advisory's fix is affected by it; upgrading to the fixed version cures it", async () => {
    const ctx = createContext({});
    const facts = await hostFacts(ctx, { fallbackId: async () => 'f'.repeat(32) });
    const packages = (await collectPackages(ctx)).items;
    const sources = new Set(packages.map((p) => p.source_name));
    // A Debian 12 advisory with a fixed version for a source package installed here (this machine has
    // the fix, so the advisory does not affect it today).
    const records = JSON.parse(gunzipSync(readFileSync(OSV_DEBIAN)).toString('utf8')) as OsvRecord[];
    let pick: { id: string; source: string; fixed: string } | null = null;
    for (const r of records) {
      for (const a of r.affected ?? []) {
        const fixed = a.ranges?.find((g) => g.type === 'ECOSYSTEM')?.events.find((e) => e.fixed)?.fixed;
        const introduced = a.ranges?.find((g) => g.type === 'ECOSYSTEM')?.events.find((e) => e.introduced)?.introduced;
        if (!pick && !r.withdrawn && a.package?.ecosystem === 'Debian:12' && sources.has(a.package.name!) && fixed && introduced === '0')
          pick = { id: r.id, source: a.package.name!, fixed };
      }
    }
    expect(pick).not.toBeNull();
    const { id, source, fixed } = pick!;
    const send = async (version: string, offsetMs: number) => {
      const next = packages.map((p) => (p.source_name === source ? { ...p, version, source_version: version } : p));
      const report = buildReport({ agent_id: 'agent-this-host', host: facts.host, os: facts.os, packages: next }, new Date(Date.now() + offsetMs).toISOString());
      const res = await sendReport(t, key, 'agent-this-host', report);
      expect(res.statusCode, res.body).toBe(200);
      return (await vulnFindings()).filter(
        (f) => f.status === 'open' && f.details.installed.some((i) => i.source_name === source || (i.source_name === null && f.details.package === source)),
      );
    };
    // "~" sorts before everything in Debian versions: F~old is just below F.
    const old = await send(`${fixed}~old`, 2000);
    expect(old.length).toBeGreaterThan(0);
    for (const f of old) {
      expect(f.details.advisories.map((a) => a.id)).toContain(id);
      expect(f.details.fixed_version).not.toBeNull();
    }
    const cured = await send(fixed, 3000);
    for (const f of cured) expect(f.details.advisories.map((a) => a.id)).not.toContain(id);
  });
});
