import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kysely, PostgresDialect } from 'kysely';
import { createTestDatabase, type TestDatabase } from '../harness/database.js';
import { ManualClock } from '../../src/platform/clock.js';
import type { Database } from '../../src/platform/db/schema.js';
import { createVulnMatcher, type PackageQuery, type VulnMatcher } from '../../src/modules/vulndb/matching/matcher.js';
import { HOST_INVENTORY, importer, JUICE_SHOP_SBOM, NVD_FEED, OSV_DEBIAN_GZ, OSV_NPM, readJson, scratchDir } from './helpers.js';

let tdb: TestDatabase;
let matcher: VulnMatcher;
const tmp = scratchDir();

/**
 * Two advisories shaped like osv.dev's records, for the ecosystems the shared data has none of:
 * GO-2023-2102 (golang.org/x/net, HTTP/2 rapid reset, fixed in 0.17.0) and an Ubuntu record of
 * CVE-2024-6387 (openssh, fixed in 1:8.9p1-3ubuntu0.10 on 22.04 LTS by USN-6859-1).
 */
const GO_ADVISORY = {
  schema_version: '1.6.0',
  id: 'GO-2023-2102',
  modified: '2024-05-20T16:03:47Z',
  published: '2023-10-11T22:14:23Z',
  aliases: ['CVE-2023-39325', 'GHSA-4374-p667-p6c8'],
  summary: 'HTTP/2 rapid reset can cause excessive work in net/http',
  affected: [
    {
      package: { name: 'golang.org/x/net', ecosystem: 'Go' },
      ranges: [{ type: 'SEMVER', events: [{ introduced: '0' }, { fixed: '0.17.0' }] }],
    },
  ],
};
const UBUNTU_ADVISORY = {
  schema_version: '1.6.0',
  id: 'UBUNTU-CVE-2024-6387',
  modified: '2024-07-01T15:00:00Z',
  published: '2024-07-01T13:00:00Z',
  upstream: ['CVE-2024-6387'],
  related: ['USN-6859-1'],
  aliases: [],
  affected: [
    {
      package: { ecosystem: 'Ubuntu:22.04:LTS', name: 'openssh', purl: 'pkg:deb/ubuntu/openssh@1:8.9p1-3ubuntu0.10?arch=source&distro=jammy' },
      ranges: [{ type: 'ECOSYSTEM', events: [{ introduced: '0' }, { fixed: '1:8.9p1-3ubuntu0.10' }] }],
    },
  ],
};

beforeAll(async () => {
  tdb = await createTestDatabase();
  const run = importer(tdb.handle.db, new ManualClock('2026-11-23T12:00:00.000Z'));
  for (const file of [OSV_DEBIAN_GZ, OSV_NPM, NVD_FEED]) expect((await run(file)).status).toBe('succeeded');
  const dir = scratchDir();
  dir.write('go.json', JSON.stringify(GO_ADVISORY));
  dir.write('ubuntu.json', JSON.stringify(UBUNTU_ADVISORY));
  expect((await run(dir.dir)).status).toBe('succeeded');
  dir.remove();
  matcher = createVulnMatcher(tdb.handle.db);
});
afterAll(async () => {
  await tdb.dispose();
  tmp.remove();
});

async function affected(query: PackageQuery): Promise<string[]> {
  return (await matcher.matchPackage(query)).matches.map((m) => m.id).sort();
}

interface HostPackage {
  name: string;
  version: string;
  arch: string;
  source: string;
  sourceVersion: string;
}

function hostInventory(): HostPackage[] {
  return readFileSync(HOST_INVENTORY, 'utf8')
    .trim()
    .split('\n')
    .map((line) => {
      const [name, version, arch, source, sourceVersion] = line.split('\t') as [string, string, string, string, string];
      return { name, version, arch, source: source || name, sourceVersion: sourceVersion || version };
    });
}

describe('a real Debian 12 host against real Debian advisories', () => {
  it('finds the 83 advisories that affect the host (62 source packages), one batch for 710 packages', async () => {
    const inventory = hostInventory();
    expect(inventory).toHaveLength(710);
    const results = await matcher.matchPackages(
      inventory.map((p) => ({ ecosystem: 'Debian:12', name: p.name, version: p.version, sourceName: p.source, sourceVersion: p.sourceVersion })),
    );
    const advisories = new Set(results.flatMap((r) => r.matches.map((m) => m.id)));
    const sources = new Set(results.filter((r) => r.matches.length).map((r) => r.package.sourceName));
    // The shared data's README measured 83 with dpkg --compare-versions; the matcher agrees exactly.
    expect(advisories.size).toBe(83);
    expect(sources.size).toBe(62);
    // Every match is of the host's release, and CVE records carry their CVE id.
    for (const result of results) {
      for (const match of result.matches) {
        expect(match.ecosystem).toBe('Debian:12');
        if (match.id.startsWith('CVE-')) expect(match.cve_ids).toEqual([match.id]);
      }
    }
  });

  it('known-fixed and known-affected versions of a DSA (dpkg tilde rules), by source package only', async () => {
    // DSA-5532-1: openssl fixed in 3.0.11-1~deb12u2 for bookworm.
    const openssl = (version: string) => affected({ ecosystem: 'Debian:12', name: 'libssl3', version, sourceName: 'openssl', sourceVersion: version });
    expect(await openssl('3.0.11-1~deb12u1')).toContain('DSA-5532-1');
    expect(await openssl('3.0.11-1~deb12u2')).not.toContain('DSA-5532-1');
    expect(await openssl('3.0.11-1')).not.toContain('DSA-5532-1');
    expect(await openssl('3.0.19-1~deb12u2')).not.toContain('DSA-5532-1');
    // Advisories name source packages: the binary name alone finds nothing.
    expect(await affected({ ecosystem: 'Debian:12', name: 'libssl3', version: '3.0.11-1~deb12u1' })).toEqual([]);
    // DSA-5430-1: openjdk-17 fixed in 17.0.7+7-1~deb12u1; the bookworm list names 17.0.7+7-1~deb11u1, older.
    expect(await affected({ ecosystem: 'Debian:12', name: 'openjdk-17', version: '17.0.7+7-1~deb11u1' })).toContain('DSA-5430-1');
    expect(await affected({ ecosystem: 'Debian:12', name: 'openjdk-17', version: '17.0.7+7-1~deb12u1' })).not.toContain('DSA-5430-1');
    // Epochs: libx11 2:1.8.4-2+deb12u1 fixes DSA-5433-1; without the epoch a version is older.
    expect(await affected({ ecosystem: 'Debian:12', name: 'libx11', version: '1.8.4-2+deb12u2' })).toContain('DSA-5433-1');
    expect(await affected({ ecosystem: 'Debian:12', name: 'libx11', version: '2:1.8.4-2+deb12u1' })).not.toContain('DSA-5433-1');
    // Another release's advisories do not apply.
    expect(await affected({ ecosystem: 'Debian:11', name: 'openssl', version: '3.0.11-1~deb12u1' })).not.toContain('DSA-5532-1');
  });

  it('Ubuntu: dpkg ordering with epochs on an Ubuntu record', async () => {
    const openssh = (version: string) => affected({ ecosystem: 'Ubuntu:22.04:LTS', name: 'openssh', version });
    expect(await openssh('1:8.9p1-3ubuntu0.6')).toEqual(['UBUNTU-CVE-2024-6387']);
    expect(await openssh('1:8.9p1-3ubuntu0.10')).toEqual([]);
    expect(await openssh('1:8.9p1-3ubuntu0.13')).toEqual([]);
    expect(await openssh('8.9p1-3ubuntu0.13')).toEqual(['UBUNTU-CVE-2024-6387']);
    expect(await affected({ ecosystem: 'Ubuntu:24.04:LTS', name: 'openssh', version: '1:8.9p1-3ubuntu0.6' })).toEqual([]);
  });

  it('Alpine: apk ordering of pre-release suffixes on a real record (jq, fixed in 1.6_rc1-r0)', async () => {
    const jq = (version: string) => affected({ ecosystem: 'Alpine:v3.20', name: 'jq', version });
    expect(await jq('1.5-r3')).toContain('CVE-2016-4074');
    expect(await jq('1.6_alpha1-r0')).toContain('CVE-2016-4074');
    expect(await jq('1.6_rc1-r0')).not.toContain('CVE-2016-4074');
    expect(await jq('1.6-r0')).not.toContain('CVE-2016-4074');
    expect(await affected({ ecosystem: 'Alpine:3.20', name: 'jq', version: '1.5-r3' })).toContain('CVE-2016-4074');
  });
});

describe('the juice-shop SBOM against real npm advisories', () => {
  it('finds 105 advisories affecting 80 distinct vulnerable name@version', async () => {
    const sbom = readJson(JUICE_SHOP_SBOM) as { components: Array<{ group?: string; name: string; version: string }> };
    const packages = sbom.components.map((c) => ({ ecosystem: 'npm', name: c.group ? `${c.group}/${c.name}` : c.name, version: c.version }));
    expect(packages).toHaveLength(840);
    const results = await matcher.matchPackages(packages);
    const advisories = new Set(results.flatMap((r) => r.matches.map((m) => m.id)));
    const vulnerable = new Set(results.filter((r) => r.matches.length).map((r) => `${r.package.name}@${r.package.version}`));
    expect(advisories.size).toBe(105);
    expect(vulnerable.size).toBe(80);
  });

  it('semver ranges: known-affected below the fix, known-fixed at it; pre-releases sort first', async () => {
    // GHSA-2234-fmw7-43wr: hono < 4.6.5.
    expect(await affected({ ecosystem: 'npm', name: 'hono', version: '4.6.4' })).toContain('GHSA-2234-fmw7-43wr');
    expect(await affected({ ecosystem: 'npm', name: 'hono', version: '4.6.5-rc.1' })).toContain('GHSA-2234-fmw7-43wr');
    expect(await affected({ ecosystem: 'npm', name: 'hono', version: '4.6.5' })).not.toContain('GHSA-2234-fmw7-43wr');
    const match = (await matcher.matchPackage({ ecosystem: 'npm', name: 'hono', version: '4.6.4' })).matches.find((m) => m.id === 'GHSA-2234-fmw7-43wr')!;
    expect(match).toMatchObject({ source: 'osv', cve_ids: ['CVE-2024-48913'], fixed_versions: ['4.6.5'], package: 'hono' });
  });
});

describe('other ecosystems, with real advisories', () => {
  it('PyPI (PEP 440): pre-releases before the fix are affected; names normalised', async () => {
    // GHSA-vrcx-gx3g-j3h8: sqlite-vec fixed in 0.1.3.
    expect(await affected({ ecosystem: 'PyPI', name: 'sqlite-vec', version: '0.1.2' })).toContain('GHSA-vrcx-gx3g-j3h8');
    expect(await affected({ ecosystem: 'PyPI', name: 'SQLite_Vec', version: '0.1.3a3' })).toContain('GHSA-vrcx-gx3g-j3h8');
    expect(await affected({ ecosystem: 'PyPI', name: 'sqlite-vec', version: '0.1.3' })).toEqual([]);
    expect(await affected({ ecosystem: 'PyPI', name: 'sqlite-vec', version: '0.1.3.post1' })).toEqual([]);
    // GHSA-4xqv-47rm-37mm and GHSA-vfj8-5pj7-2f9g: openc3 fixed in 5.19.0.
    expect(await affected({ ecosystem: 'PyPI', name: 'openc3', version: '5.9.2b0' })).toEqual(['GHSA-4xqv-47rm-37mm', 'GHSA-vfj8-5pj7-2f9g']);
    expect(await affected({ ecosystem: 'PyPI', name: 'openc3', version: '5.19.0' })).toEqual([]);
  });

  it('Maven (ComparableVersion): last_affected is inclusive, qualifiers sort before the release', async () => {
    // GHSA-pppg-cpfq-h7wr: org.webjars.npm:jsonpath-plus, last affected 6.0.1.
    const jsonpath = (version: string) => affected({ ecosystem: 'Maven', name: 'org.webjars.npm:jsonpath-plus', version });
    expect(await jsonpath('6.0.1')).toEqual(['GHSA-pppg-cpfq-h7wr']);
    expect(await jsonpath('6.0.1-RC1')).toEqual(['GHSA-pppg-cpfq-h7wr']);
    expect(await jsonpath('6.0.1-1')).toEqual([]);
    expect(await jsonpath('6.0.2')).toEqual([]);
    // GHSA-rc47-6667-2j5j: http-cache-semantics fixed in 4.1.1.
    const cache = (version: string) => affected({ ecosystem: 'Maven', name: 'org.webjars.npm:http-cache-semantics', version });
    expect(await cache('4.1.1-SNAPSHOT')).toEqual(['GHSA-rc47-6667-2j5j']);
    expect(await cache('4.1.1')).toEqual([]);
    expect(await cache('4.1.1.0')).toEqual([]);
  });

  it('Go and crates.io (semver): a v prefix and pseudo-versions', async () => {
    const net = (version: string) => affected({ ecosystem: 'Go', name: 'golang.org/x/net', version });
    expect(await net('v0.15.0')).toEqual(['GO-2023-2102']);
    expect(await net('v0.0.0-20230101000000-abcdef123456')).toEqual(['GO-2023-2102']);
    expect(await net('v0.17.0')).toEqual([]);
    expect((await matcher.matchPackage({ ecosystem: 'Go', name: 'golang.org/x/net', version: 'v0.15.0' })).cve_ids).toEqual(['CVE-2023-39325']);
    // GHSA-fmj9-77q8-g6c4: apollo-router < 1.52.1.
    expect(await affected({ ecosystem: 'crates.io', name: 'apollo-router', version: '1.52.0' })).toEqual(['GHSA-fmj9-77q8-g6c4']);
    expect(await affected({ ecosystem: 'crates.io', name: 'apollo-router', version: '1.52.1' })).toEqual([]);
  });
});

describe('NVD CPE configurations', () => {
  it('matches CPE names against version bounds and exact versions with updates', async () => {
    const cves = async (cpe: string) => (await matcher.matchCpe(cpe)).map((m) => m.id);
    expect(await cves('cpe:2.3:a:apache:log4j:2.14.1:*:*:*:*:*:*:*')).toEqual(['CVE-2021-44228']);
    expect(await cves('cpe:2.3:a:apache:log4j:2.3.1:*:*:*:*:*:*:*')).toEqual([]);
    expect(await cves('cpe:2.3:a:apache:log4j:2.15.0:*:*:*:*:*:*:*')).toEqual([]);
    expect(await cves('cpe:2.3:a:apache:log4j:2.0:beta9:*:*:*:*:*:*')).toEqual(['CVE-2021-44228']);
    expect(await cves('cpe:2.3:o:paloaltonetworks:pan-os:10.2.9:-:*:*:*:*:*:*')).toEqual(['CVE-2024-3400']);
    expect(await cves('cpe:2.3:o:paloaltonetworks:pan-os:10.2.9:h1:*:*:*:*:*:*')).toEqual([]);
    expect(await cves('cpe:2.3:o:paloaltonetworks:pan-os:10.2.7:h3:*:*:*:*:*:*')).toEqual(['CVE-2024-3400']);
    await expect(matcher.matchCpe('cpe:2.3:a:apache:log4j:*:*:*:*:*:*:*:*')).rejects.toThrow(/concrete version/);
  });

  it('a package query with a CPE hint also reports NVD matches', async () => {
    const result = await matcher.matchPackage({
      ecosystem: 'Maven',
      name: 'org.apache.logging.log4j:log4j-core',
      version: '2.14.1',
      cpe: { vendor: 'apache', product: 'log4j' },
    });
    expect(result.matches).toEqual([expect.objectContaining({ source: 'nvd', id: 'CVE-2021-44228', fixed_versions: ['2.15.0'] })]);
    expect(result.cve_ids).toEqual(['CVE-2021-44228']);
  });
});

describe('batches', () => {
  it('matches a 2,000-package inventory in a few queries, with the same answers as single lookups', async () => {
    const host = hostInventory().map((p) => ({ ecosystem: 'Debian:12', name: p.name, version: p.version, sourceName: p.source, sourceVersion: p.sourceVersion }));
    const sbom = (readJson(JUICE_SHOP_SBOM) as { components: Array<{ group?: string; name: string; version: string }> }).components.map((c) => ({
      ecosystem: 'npm',
      name: c.group ? `${c.group}/${c.name}` : c.name,
      version: c.version,
    }));
    const extra = Array.from({ length: 2000 - host.length - sbom.length }, (_, i) => ({ ecosystem: 'PyPI', name: `package-${i}`, version: '1.0.0' }));
    const inventory: PackageQuery[] = [...host, ...sbom, ...extra];
    expect(inventory).toHaveLength(2000);
    let queries = 0;
    const counting = new Kysely<Database>({ dialect: new PostgresDialect({ pool: tdb.handle.pool }), log: () => void queries++ });
    const started = performance.now();
    const results = await createVulnMatcher(counting).matchPackages(inventory);
    const elapsed = performance.now() - started;
    expect(results).toHaveLength(2000);
    expect(queries).toBeLessThanOrEqual(2);
    expect(elapsed).toBeLessThan(15_000);
    for (const index of [0, 5, 100, 709, 710, 900, 1549, 1999]) {
      expect(results[index]!.package).toBe(inventory[index]);
      expect(results[index]!.matches).toEqual((await matcher.matchPackage(inventory[index]!)).matches);
    }
  });
});
