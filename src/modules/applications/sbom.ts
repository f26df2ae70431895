import { randomUUID } from 'node:crypto';
import type { AppDeps } from '../../deps.js';
import type { Scope } from '../../platform/db/scope.js';
import { hostInventoryDates } from '../agents/index.js';
import { cycloneDx, organisationOf, sbomFacts, spdx, type SbomDocument, type SbomFormat, type SbomHost } from '../agents/index.js';
import { createVulnMatcher, type PackageQuery } from '../vulndb/index.js';
import type { StoredAdvisory } from '../agents/index.js';
import { createBusinessServiceService, membersOf, servicePredicate } from './business-service.js';
import { hostsOf, type Host, type HostPackageSource } from './host-software.js';

/**
 * The SBOM of a business service (CycloneDX 1.5 JSON, or SPDX 2.3 JSON), built by the agents module's
 * SBOM builders: the service is the subject (`metadata.component`); each of its hosts is a named
 * `device` component (bom-ref: its node id) with its operating system and packages; `dependencies`
 * say service → hosts → operating system and packages; the hosts' known vulnerabilities are listed
 * with the components they affect. Packages are matched against the vulnerability store when the
 * SBOM is asked for (as the CVE exposure does), whether the agent or a node's `properties.packages`
 * brought them; CVEs a package names itself (`cves`) are listed too. Without hosts the BOM is empty
 * but valid, and `metadata.properties` says `controlgraph:hosts` = 0.
 */

/** The applications module's view of a host, as the SBOM builders take it. */
export function sbomHost(host: Host, inventoryAt: Date | null, advisories: (pkg: Host['packages'][number]) => StoredAdvisory[]): SbomHost {
  return {
    id: host.id,
    name: host.name,
    type: host.type,
    os: { id: host.os.id, version_id: host.os.versionId, name: host.os.name, pretty_name: host.os.prettyName },
    inventoryAt,
    packages: host.packages.map((p) => ({
      name: p.name,
      version: p.version,
      manager: p.manager,
      arch: p.arch,
      purl: p.purl,
      source_name: p.sourceName,
      source_version: p.sourceVersion,
      installed_at: p.installedAt,
      ecosystem: p.ecosystem,
      advisories: advisories(p),
      cves: p.cves,
    })),
  };
}

export function createServiceSbom(deps: Pick<AppDeps, 'database' | 'clock' | 'version'>, hostPackages?: HostPackageSource) {
  const db = deps.database.db;
  const services = createBusinessServiceService(deps);
  const matcher = createVulnMatcher(db);

  /** The advisories of every matchable package of the hosts, in one batch. */
  async function advisoriesOf(hosts: Host[]): Promise<Map<Host['packages'][number], StoredAdvisory[]>> {
    const located = hosts.flatMap((h) => h.packages.filter((p) => p.ecosystem));
    const queries: PackageQuery[] = located.map((p) => ({
      ecosystem: p.ecosystem!,
      name: p.name,
      version: p.version,
      ...(p.sourceName ? { sourceName: p.sourceName } : {}),
      ...(p.sourceVersion ? { sourceVersion: p.sourceVersion } : {}),
    }));
    const results = queries.length ? await matcher.matchPackages(queries) : [];
    return new Map(
      located.map((p, i) => [p, results[i]!.matches.map((m) => ({ id: m.id, source: m.source, cve_ids: m.cve_ids, fixed_versions: m.fixed_versions, summary: m.summary }))]),
    );
  }

  return async function sbom(scope: Scope, serviceId: string, format: SbomFormat): Promise<Record<string, unknown>> {
    const service = await services.serviceRow(scope, serviceId);
    const members = (await membersOf(db, scope, [serviceId])).get(serviceId)!;
    const found = members.length ? await hostsOf(db, scope, servicePredicate(members), hostPackages) : [];
    const dates = await hostInventoryDates(
      db,
      scope,
      found.map((h) => h.id),
    );
    const advisories = await advisoriesOf(found);
    const hosts = found.map((h) => sbomHost(h, dates.get(h.id) ?? null, (p) => advisories.get(p) ?? []));
    const [facts, organisation] = await Promise.all([sbomFacts(db, hosts), organisationOf(db, scope)]);
    const document: SbomDocument = {
      subject: { kind: 'service', id: service.id, name: service.name, description: service.description },
      hosts,
      serial: randomUUID(),
      version: 1,
      organisation,
      tool: { name: 'controlgraph', version: deps.version },
      now: deps.clock.now(),
      facts,
    };
    return format === 'spdx' ? spdx(document, `https://controlgraph.invalid/tenants/${scope.tenantId}`) : cycloneDx(document);
  };
}
