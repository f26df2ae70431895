import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import type { Database } from '../../platform/db/schema.js';
import { inWorkspace, inTenant, type Scope } from '../../platform/db/scope.js';
import { badRequest, notFound } from '../../platform/http/errors.js';
import { vulnerabilityFacts, type Rating, type VulnerabilityFacts } from '../vulndb/index.js';
import { purlType, versRange } from '../vulndb/index.js';
import { readPackages } from './inventory-repo.js';
import { describeVulnerability, vulnerabilitiesOf, type VulnerabilityView } from './package-vulnerabilities.js';
import { ecosystemOf, familyOf } from './package-identity.js';
import type { StoredAdvisory } from './tables.js';
import './tables.js';
import { nodeExists, nodeProperties } from '../graph/index.js';

/**
 * Software bills of materials of hosts, in CycloneDX 1.5 JSON or SPDX 2.3 JSON: the SBOM of one host
 * (`GET /nodes/{id}/sbom`, built here from the agent's inventory) and of a business service's hosts
 * (the applications module passes its hosts to the same builders). Service API for other modules:
 * `cycloneDx(document)`, `spdx(document, namespaceBase)`, `sbomFacts(db, hosts)`, `organisationOf(db, scope)`,
 * `sbomFormat(query)`.
 *
 * - Each host is named: the host SBOM's `metadata.component`, or a `device` component of a service's
 *   SBOM, with its node id as bom-ref; its operating system is its own component (`<node id>#os`).
 * - Vulnerabilities (CycloneDX `vulnerabilities`): one per id (the CVE, else the advisory's id), with
 *   the database it was matched from and its page (Debian Security Tracker for a Debian match, not
 *   NVD), the other advisories and NVD as `references`, CVSS `ratings` (NVD's, then the advisory's
 *   own vectors; the distribution's urgency as an `other` rating), the description, CWEs, dates, the
 *   fixed versions (`recommendation`; `workaround` when no fix is published) and, per affected
 *   component, its installed version and the advisory's ranges as `vers` ranges, the fix `unaffected`.
 *   SPDX 2.3 has no vulnerability objects: each package carries `SECURITY` references to the pages.
 * - NTIA minimum elements: supplier (the distribution for its packages, the organisation for the
 *   host or service), author (`metadata.authors`, SPDX `Organization:` creator, plus the tool),
 *   timestamp, component name and version, unique identifiers (purl, bom-ref, SPDXID) and the
 *   dependency relationships (service → hosts → operating system and packages).
 */

export const SBOM_FORMATS = ['cyclonedx', 'spdx'] as const;
export type SbomFormat = (typeof SBOM_FORMATS)[number];

/** The `format` query parameter of an SBOM endpoint: absent is CycloneDX; anything unknown a 400 naming the formats. */
export function sbomFormat(format: string | undefined): SbomFormat {
  if (format === undefined || format === '') return 'cyclonedx';
  if ((SBOM_FORMATS as readonly string[]).includes(format)) return format as SbomFormat;
  throw badRequest(`unknown SBOM format "${format.slice(0, 40)}": the formats are cyclonedx (CycloneDX 1.5 JSON, the default) and spdx (SPDX 2.3 JSON)`, {
    location: 'querystring',
    errors: [{ path: '/format', message: `must be one of ${SBOM_FORMATS.join(', ')}` }],
  });
}

/** The query of an SBOM endpoint; `format` is checked by `sbomFormat` so that the 400 can name the formats. */
export const SbomQuery = Type.Object(
  {
    format: Type.Optional(
      Type.String({
        maxLength: 200,
        description: `One of ${SBOM_FORMATS.join(', ')}: cyclonedx (CycloneDX 1.5 JSON, the default) or spdx (SPDX 2.3 JSON); another value is a 400 naming them`,
      }),
    ),
  },
  { additionalProperties: false },
);

export const SBOM_CONTENT_TYPES: Record<SbomFormat, string> = {
  cyclonedx: 'application/vnd.cyclonedx+json; version=1.5',
  spdx: 'application/spdx+json',
};

export interface SbomPackage {
  name: string;
  version: string;
  manager: string | null;
  arch: string | null;
  purl: string;
  source_name: string | null;
  source_version: string | null;
  installed_at: string | null;
  /** The OSV ecosystem the package was matched in (null: not matched). */
  ecosystem: string | null;
  advisories: StoredAdvisory[];
  /** CVEs known without an advisory of the store (reported by the agent, or carried by the node). */
  cves: string[];
}

export interface SbomOs {
  id: string | null;
  version_id: string | null;
  /** os-release NAME ("Debian GNU/Linux"): the supplier of the distribution's packages. */
  name: string | null;
  pretty_name: string | null;
}

export interface SbomHost {
  id: string;
  name: string;
  type: string;
  os: SbomOs;
  /** When the inventory last changed (the host's version in the SBOM). */
  inventoryAt: Date | null;
  packages: SbomPackage[];
}

export interface SbomDocument {
  /** What the SBOM describes: one host (`hosts[0]`), or a business service and its hosts. */
  subject: { kind: 'host' } | { kind: 'service'; id: string; name: string; description: string };
  hosts: SbomHost[];
  serial: string;
  version: number;
  /** The organisation the SBOM is made for and by (the tenant): author, and supplier of the subject. */
  organisation: string;
  tool: { name: string; version: string };
  now: Date;
  facts: VulnerabilityFacts;
}

/** What the store knows of every vulnerability of the hosts' packages (three queries). */
export async function sbomFacts(db: Kysely<Database>, hosts: readonly SbomHost[]): Promise<VulnerabilityFacts> {
  const advisoryIds = new Set<string>();
  const cveIds = new Set<string>();
  for (const h of hosts) {
    for (const p of h.packages) {
      for (const v of vulnerabilitiesOf(p.advisories, p.cves).values()) {
        if (v.cve) cveIds.add(v.cve);
        for (const a of v.advisories) if (a.source === 'osv') advisoryIds.add(a.id);
      }
    }
  }
  return vulnerabilityFacts(db, { advisoryIds: [...advisoryIds], cveIds: [...cveIds] });
}

/** The tenant's name: the organisation an SBOM names as its author. */
export async function organisationOf(db: Kysely<Database>, scope: Scope): Promise<string> {
  const row = await db.selectFrom('tenants').select('name').where('id', '=', scope.tenantId).executeTakeFirst();
  return row?.name ?? 'unknown organisation';
}

// --------------------------------------------------------------------------------------- host source

export interface HostSbomSource {
  host: SbomHost;
  serial: string;
  version: number;
}

export async function loadHostSbom(db: Kysely<Database>, scope: Scope, nodeId: string): Promise<HostSbomSource> {
  const host = await db
    .selectFrom('agent_hosts as h')
    .select(['h.sbom_serial', 'h.sbom_version', 'h.sbom_updated_at'])
    .where(inTenant(scope.tenantId, 'h'))
    .where(inWorkspace(scope, 'h'))
    .where('h.node_id', '=', nodeId)
    .executeTakeFirst();
  const node = host ? await nodeProperties(db, scope, nodeId) : undefined;
  const row = host && node ? { ...host, id: node.id, name: node.name, type: node.type, properties: node.properties } : undefined;
  if (!row) {
    throw notFound((await nodeExists(db, scope, nodeId)) ? 'this node has no software inventory (no agent reports on it)' : 'node not found');
  }
  const os = (row.properties.os ?? {}) as { id?: string | null; version_id?: string | null; version?: string | null; name?: string | null; pretty_name?: string | null };
  const facts = { id: os.id ?? null, version_id: os.version_id ?? null, version: os.version ?? null, pretty_name: os.pretty_name ?? null };
  const stored = (await readPackages(db, scope, nodeId)).sort(
    (a, b) => a.name.localeCompare(b.name) || a.version.localeCompare(b.version) || a.arch.localeCompare(b.arch) || a.manager.localeCompare(b.manager),
  );
  return {
    serial: row.sbom_serial,
    version: row.sbom_version,
    host: {
      id: row.id,
      name: row.name,
      type: row.type,
      os: { id: facts.id, version_id: facts.version_id, name: os.name ?? null, pretty_name: facts.pretty_name },
      inventoryAt: new Date(row.sbom_updated_at),
      packages: stored.map((p) => ({
        name: p.name,
        version: p.version,
        manager: p.manager,
        arch: p.arch || null,
        purl: p.purl,
        source_name: p.source_name,
        source_version: p.source_version,
        installed_at: p.installed_at ? new Date(p.installed_at).toISOString() : null,
        ecosystem: ecosystemOf(p.manager, facts),
        advisories: p.advisories,
        cves: p.reported_cves,
      })),
    },
  };
}

// ------------------------------------------------------------------------------------------ shared

const DISTRIBUTION_FAMILIES = new Set(['deb', 'rpm', 'apk']);

/** The supplier of a package: the distribution for its own packages; unknown (null) for the others. */
function supplierOf(p: SbomPackage, os: SbomOs): string | null {
  return p.manager && DISTRIBUTION_FAMILIES.has(familyOf(p.manager)) ? (os.name ?? os.id) : null;
}

const matchName = (p: SbomPackage) => p.source_name ?? p.name;
const osRef = (host: SbomHost) => `${host.id}#os`;
const hostVersion = (host: SbomHost, doc: SbomDocument) => (host.inventoryAt ?? doc.now).toISOString();
const subjectVersion = (doc: SbomDocument) => new Date(Math.max(0, ...doc.hosts.map((h) => (h.inventoryAt ?? doc.now).getTime())) || doc.now.getTime()).toISOString();

/** Component bom-refs: the purl, made unique when two managers report the same one. */
function componentRefs(doc: SbomDocument): Map<SbomPackage, string> {
  const refs = new Map<SbomPackage, string>();
  const owner = new Map<string, string>();
  let n = 0;
  for (const host of doc.hosts) {
    for (const p of host.packages) {
      const identity = `${p.manager ?? ''}\u0000${p.purl}`;
      const taken = owner.get(p.purl);
      const ref = taken === undefined || taken === identity ? p.purl : `${p.purl}#${++n}`;
      if (taken === undefined) owner.set(p.purl, identity);
      refs.set(p, ref);
    }
  }
  return refs;
}

interface Affected {
  ref: string;
  host: SbomHost;
  pkg: SbomPackage;
  view: VulnerabilityView;
}

/** Every vulnerability of the document by id, with the components it affects. */
function collectVulnerabilities(doc: SbomDocument, refs: Map<SbomPackage, string>): Map<string, Affected[]> {
  const out = new Map<string, Affected[]>();
  for (const host of doc.hosts) {
    for (const pkg of host.packages) {
      for (const v of vulnerabilitiesOf(pkg.advisories, pkg.cves).values()) {
        const view = describeVulnerability(doc.facts, v, { ecosystem: pkg.ecosystem, matchName: matchName(pkg) }, 'MEDIUM');
        let list = out.get(v.id);
        if (!list) out.set(v.id, (list = []));
        list.push({ ref: refs.get(pkg)!, host, pkg, view });
      }
    }
  }
  return new Map([...out.entries()].sort(([a], [b]) => a.localeCompare(b)));
}

// --------------------------------------------------------------------------------------- CycloneDX

type Json = Record<string, unknown>;

const cdxRating = (r: Rating): Json => ({
  source: r.source,
  ...(r.score !== null ? { score: r.score } : {}),
  ...(r.severity ? { severity: r.severity.toLowerCase() } : {}),
  method: r.method,
  ...(r.vector ? { vector: r.vector } : {}),
});

function cdxVulnerability(id: string, affected: Affected[]): Json {
  const view = affected[0]!.view;
  const ratings = view.ratings.map(cdxRating);
  const urgent = affected.find((a) => a.view.severity.urgency)?.view;
  if (urgent?.severity.urgency) {
    const severity = urgent.severity.basis === 'distribution_urgency' ? urgent.severity.severity.toLowerCase() : undefined;
    ratings.push({
      source: urgent.source,
      ...(severity ? { severity } : { severity: 'unknown' }),
      method: 'other',
      justification: `${urgent.source.name} urgency: ${urgent.severity.urgency}`,
    });
  }
  // Per source package (the unit advisories speak of): its fix, or that none is published.
  const bySource = new Map<string, Affected>();
  for (const a of affected) bySource.set(`${a.pkg.ecosystem ?? a.pkg.manager}\u0000${matchName(a.pkg)}`, a);
  const fixes = [...bySource.values()].map((a) => ({ name: matchName(a.pkg), where: a.pkg.ecosystem ?? a.pkg.manager ?? 'its ecosystem', fixed: a.view.fixed }));
  const fixed = fixes.filter((f) => f.fixed);
  const unfixed = fixes.filter((f) => !f.fixed);
  const recommendation = [
    ...fixed.map((f) => `Upgrade ${f.name} to ${f.fixed} or later (${f.where}).`),
    ...unfixed.map((f) => `No fixed version of ${f.name} is published for ${f.where} yet.`),
  ].join(' ');
  const workaround = unfixed.length
    ? `Until a fix is published: remove the affected packages where nothing uses them, restrict who can reach and run them, and watch ${view.source.url}.`
    : null;
  const references = new Map<string, Json>();
  for (const a of affected) for (const r of a.view.references) references.set(`${r.id}\u0000${r.source.url}`, { id: r.id, source: r.source });
  const advisories = new Map<string, Json>();
  for (const a of affected) for (const x of a.view.advisories) advisories.set(x.source.url, { title: `${x.id} (${x.source.name})`, url: x.source.url });
  const versionsOf = (a: Affected): Json[] => {
    const scheme = purlType(a.pkg.purl);
    const out: Json[] = [{ version: a.pkg.version, status: 'affected' }];
    if (scheme)
      for (const range of a.view.ranges) {
        const vers = versRange(scheme, range);
        if (vers) out.push({ range: vers, status: 'affected' });
      }
    if (a.view.fixed) out.push({ version: a.view.fixed, status: 'unaffected' });
    return [...new Map(out.map((v) => [JSON.stringify(v), v])).values()];
  };
  const affects = [...new Map(affected.map((a) => [a.ref, { ref: a.ref, versions: versionsOf(a) }])).values()];
  const description = view.summary ?? view.description;
  return {
    'bom-ref': `vuln:${id}`,
    id,
    source: view.source,
    ...(references.size ? { references: [...references.values()] } : {}),
    ...(ratings.length ? { ratings } : {}),
    ...(view.cwes.length ? { cwes: view.cwes.map((c) => Number(c.slice(4))) } : {}),
    ...(description ? { description } : {}),
    ...(view.description && view.description !== description ? { detail: view.description } : {}),
    ...(recommendation ? { recommendation } : {}),
    ...(workaround ? { workaround } : {}),
    ...(advisories.size ? { advisories: [...advisories.values()] } : {}),
    ...(view.published ? { published: view.published.toISOString() } : {}),
    ...(view.updated ? { updated: view.updated.toISOString() } : {}),
    affects,
    ...(view.reported_by_agent ? { properties: [{ name: 'controlgraph:reported_by', value: 'host agent' }] } : {}),
  };
}

function cdxHostComponent(host: SbomHost, doc: SbomDocument): Json {
  return {
    type: 'device',
    'bom-ref': host.id,
    supplier: { name: doc.organisation },
    name: host.name,
    version: hostVersion(host, doc),
    description: `host ${host.name} (node ${host.id})${host.os.pretty_name ? `, ${host.os.pretty_name}` : ''}; version: when its inventory last changed`,
    properties: [
      { name: 'controlgraph:node_id', value: host.id },
      { name: 'controlgraph:node_type', value: host.type },
      ...(host.inventoryAt ? [{ name: 'controlgraph:inventory_updated_at', value: host.inventoryAt.toISOString() }] : []),
    ],
  };
}

function cdxOsComponent(host: SbomHost): Json | null {
  const { os } = host;
  if (!os.id && !os.name) return null;
  return {
    type: 'operating-system',
    'bom-ref': osRef(host),
    ...(os.name ? { supplier: { name: os.name } } : {}),
    name: os.id ?? os.name,
    ...(os.version_id ? { version: os.version_id } : {}),
    description: `${os.pretty_name ?? os.name ?? os.id} on ${host.name}`,
    properties: [{ name: 'controlgraph:host', value: host.id }],
  };
}

export function cycloneDx(doc: SbomDocument): Json {
  const refs = componentRefs(doc);
  const components: Json[] = [];
  const dependencies: Array<{ ref: string; dependsOn: string[] }> = [];
  const byRef = new Map<string, Json>();
  const single = doc.subject.kind === 'host';
  const root: Json =
    doc.subject.kind === 'host'
      ? cdxHostComponent(doc.hosts[0]!, doc)
      : {
          type: 'application',
          'bom-ref': `service:${doc.subject.id}`,
          supplier: { name: doc.organisation },
          name: doc.subject.name,
          version: subjectVersion(doc),
          ...(doc.subject.description ? { description: doc.subject.description } : {}),
          properties: [{ name: 'controlgraph:service_id', value: doc.subject.id }],
        };
  for (const host of doc.hosts) {
    const hostDeps: string[] = [];
    if (!single) components.push(cdxHostComponent(host, doc));
    const os = cdxOsComponent(host);
    if (os) {
      components.push(os);
      hostDeps.push(os['bom-ref'] as string);
    }
    for (const p of host.packages) {
      const ref = refs.get(p)!;
      let component = byRef.get(ref);
      if (!component) {
        const supplier = supplierOf(p, host.os);
        component = {
          type: p.manager && familyOf(p.manager) !== 'generic' ? 'library' : 'application',
          'bom-ref': ref,
          ...(supplier ? { supplier: { name: supplier } } : {}),
          name: p.name,
          version: p.version,
          purl: p.purl,
          properties: [
            ...(p.manager ? [{ name: 'controlgraph:package:manager', value: p.manager }] : []),
            ...(p.arch ? [{ name: 'controlgraph:package:arch', value: p.arch }] : []),
            ...(p.source_name ? [{ name: 'controlgraph:package:source_name', value: p.source_name }] : []),
            ...(p.source_version ? [{ name: 'controlgraph:package:source_version', value: p.source_version }] : []),
            ...(single && p.installed_at ? [{ name: 'controlgraph:package:installed_at', value: p.installed_at }] : []),
          ],
        };
        byRef.set(ref, component);
        components.push(component);
      }
      if (!single) (component.properties as Json[]).push({ name: 'controlgraph:host', value: host.id });
      if (!hostDeps.includes(ref)) hostDeps.push(ref);
    }
    dependencies.push({ ref: host.id, dependsOn: hostDeps });
  }
  if (!single) dependencies.unshift({ ref: root['bom-ref'] as string, dependsOn: doc.hosts.map((h) => h.id) });
  const vulnerabilities = [...collectVulnerabilities(doc, refs)].map(([id, affected]) => cdxVulnerability(id, affected));
  return {
    $schema: 'http://cyclonedx.org/schema/bom-1.5.schema.json',
    bomFormat: 'CycloneDX',
    specVersion: '1.5',
    serialNumber: `urn:uuid:${doc.serial}`,
    version: doc.version,
    metadata: {
      timestamp: doc.now.toISOString(),
      tools: { components: [{ type: 'application', author: 'ControlGraph', name: doc.tool.name, version: doc.tool.version }] },
      authors: [{ name: doc.organisation }],
      supplier: { name: doc.organisation },
      component: root,
      properties: [
        { name: 'controlgraph:hosts', value: String(doc.hosts.length) },
        { name: 'controlgraph:packages', value: String(byRef.size) },
        { name: 'controlgraph:vulnerabilities', value: String(vulnerabilities.length) },
      ],
    },
    components,
    dependencies,
    ...(vulnerabilities.length ? { vulnerabilities } : {}),
  };
}

// -------------------------------------------------------------------------------------------- SPDX

function spdxId(prefix: string, text: string, i: number): string {
  const clean = text
    .replace(/[^A-Za-z0-9.-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 80);
  return `SPDXRef-${prefix}-${i}${clean ? `-${clean}` : ''}`;
}

/** SPDX agent syntax `Organization: name`; parentheses would read as the contact part. */
const organization = (name: string | null) => (name ? `Organization: ${name.replace(/[()]/g, '').trim() || 'unknown'}` : 'NOASSERTION');

export function spdx(doc: SbomDocument, namespaceBase: string): Json {
  const refs = componentRefs(doc);
  const single = doc.subject.kind === 'host';
  const packages: Json[] = [];
  const relationships: Json[] = [];
  const rootId = single ? 'SPDXRef-Host' : 'SPDXRef-Service';
  const hostIds = new Map<string, string>();
  doc.hosts.forEach((h, i) => hostIds.set(h.id, single ? 'SPDXRef-Host' : spdxId('Host', h.name, i + 1)));
  const hostPackage = (host: SbomHost): Json => ({
    SPDXID: hostIds.get(host.id)!,
    name: host.name,
    versionInfo: hostVersion(host, doc),
    supplier: organization(doc.organisation),
    downloadLocation: 'NOASSERTION',
    filesAnalyzed: false,
    primaryPackagePurpose: 'DEVICE',
    comment: `ControlGraph host node ${host.id}; version: when its inventory last changed`,
    ...(host.os.pretty_name ? { description: host.os.pretty_name } : {}),
  });
  if (doc.subject.kind === 'service') {
    packages.push({
      SPDXID: rootId,
      name: doc.subject.name,
      versionInfo: subjectVersion(doc),
      supplier: organization(doc.organisation),
      downloadLocation: 'NOASSERTION',
      filesAnalyzed: false,
      primaryPackagePurpose: 'APPLICATION',
      comment: `ControlGraph business service ${doc.subject.id}`,
      ...(doc.subject.description ? { description: doc.subject.description } : {}),
    });
  }
  relationships.push({ spdxElementId: 'SPDXRef-DOCUMENT', relationshipType: 'DESCRIBES', relatedSpdxElement: rootId });
  const vulnerabilities = collectVulnerabilities(doc, refs);
  const securityRefs = new Map<string, Json[]>();
  for (const affected of vulnerabilities.values()) {
    for (const a of affected) {
      const list = securityRefs.get(a.ref) ?? [];
      const urls = [a.view.source.url, ...a.view.references.filter((r) => r.id === a.view.cve).map((r) => r.source.url)];
      for (const url of urls)
        if (!list.some((r) => r.referenceLocator === url)) list.push({ referenceCategory: 'SECURITY', referenceType: 'advisory', referenceLocator: url, comment: a.view.id });
      securityRefs.set(a.ref, list);
    }
  }
  const spdxOf = new Map<string, string>();
  let n = 0;
  doc.hosts.forEach((host, h) => {
    const hostId = hostIds.get(host.id)!;
    if (single) packages.push(hostPackage(host));
    else {
      packages.push(hostPackage(host));
      relationships.push({ spdxElementId: rootId, relationshipType: 'DEPENDS_ON', relatedSpdxElement: hostId });
    }
    if (host.os.id || host.os.name) {
      const osId = single ? 'SPDXRef-OperatingSystem' : `SPDXRef-OperatingSystem-${h + 1}`;
      packages.push({
        SPDXID: osId,
        name: host.os.id ?? host.os.name,
        ...(host.os.version_id ? { versionInfo: host.os.version_id } : {}),
        supplier: organization(host.os.name ?? host.os.id),
        downloadLocation: 'NOASSERTION',
        filesAnalyzed: false,
        primaryPackagePurpose: 'OPERATING_SYSTEM',
        comment: `operating system of ${host.name}`,
      });
      relationships.push({ spdxElementId: hostId, relationshipType: 'CONTAINS', relatedSpdxElement: osId });
    }
    for (const p of host.packages) {
      const ref = refs.get(p)!;
      let id = spdxOf.get(ref);
      if (!id) {
        id = spdxId('Package', p.name, ++n);
        spdxOf.set(ref, id);
        packages.push({
          SPDXID: id,
          name: p.name,
          versionInfo: p.version,
          supplier: organization(supplierOf(p, host.os)),
          downloadLocation: 'NOASSERTION',
          filesAnalyzed: false,
          licenseConcluded: 'NOASSERTION',
          licenseDeclared: 'NOASSERTION',
          copyrightText: 'NOASSERTION',
          primaryPackagePurpose: p.manager && familyOf(p.manager) !== 'generic' ? 'LIBRARY' : 'APPLICATION',
          ...(p.source_name && p.source_name !== p.name ? { sourceInfo: `built from source package ${p.source_name} ${p.source_version ?? ''}`.trim() } : {}),
          externalRefs: [{ referenceCategory: 'PACKAGE-MANAGER', referenceType: 'purl', referenceLocator: p.purl }, ...(securityRefs.get(ref) ?? [])],
        });
      }
      relationships.push({ spdxElementId: hostId, relationshipType: 'CONTAINS', relatedSpdxElement: id });
    }
  });
  const subjectName = doc.subject.kind === 'host' ? `${doc.hosts[0]!.name} host SBOM` : `${doc.subject.name} service SBOM`;
  const subjectKey = doc.subject.kind === 'host' ? doc.hosts[0]!.id : `service:${doc.subject.id}`;
  const digest = createHash('sha256').update(`${doc.serial}:${doc.version}:${subjectKey}`).digest('hex').slice(0, 16);
  return {
    spdxVersion: 'SPDX-2.3',
    dataLicense: 'CC0-1.0',
    SPDXID: 'SPDXRef-DOCUMENT',
    name: subjectName,
    documentNamespace: `${namespaceBase}/spdx/${encodeURIComponent(subjectKey)}/${doc.serial}/${doc.version}-${digest}`,
    creationInfo: {
      created: doc.now.toISOString().replace(/\.\d{3}Z$/, 'Z'),
      creators: [`Tool: ${doc.tool.name}-${doc.tool.version}`, organization(doc.organisation)],
      comment:
        doc.subject.kind === 'host'
          ? `Inventory of host node ${doc.hosts[0]!.id} as of ${hostVersion(doc.hosts[0]!, doc)} (SBOM version ${doc.version}); ${vulnerabilities.size} known vulnerabilities (SECURITY references).`
          : `Software on the ${doc.hosts.length} host(s) of business service ${doc.subject.id}; ${vulnerabilities.size} known vulnerabilities (SECURITY references).`,
    },
    documentDescribes: [rootId],
    packages,
    relationships,
  };
}
