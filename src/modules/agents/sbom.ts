import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import type { Scope } from '../../platform/db/scope.js';
import { notFound } from '../../platform/http/errors.js';
import { readPackages, type StoredPackage } from './inventory-repo.js';
import { familyOf } from './packages.js';
import './tables.js';
import '../graph/tables.js';

/**
 * The software bill of materials of a host, built from its package inventory (always the last
 * processed report's) in CycloneDX 1.5 JSON or SPDX 2.3 JSON. The document's serial number is stable
 * per host; its version increases whenever the inventory changes. The vulnerabilities the store
 * matched are included in CycloneDX (`vulnerabilities`, affecting the component) and as SPDX
 * `SECURITY/advisory` external references.
 */

export interface SbomSource {
  node: { id: string; name: string; properties: Record<string, unknown> };
  serial: string;
  version: number;
  updatedAt: Date;
  packages: StoredPackage[];
}

export async function loadSbomSource(db: Kysely<Database>, scope: Scope, nodeId: string): Promise<SbomSource> {
  const row = await db
    .selectFrom('agent_hosts as h')
    .innerJoin('nodes as n', (join) => join.onRef('n.workspace_id', '=', 'h.workspace_id').onRef('n.id', '=', 'h.node_id'))
    .select(['n.id', 'n.name', 'n.properties', 'h.sbom_serial', 'h.sbom_version', 'h.sbom_updated_at'])
    .where('h.tenant_id', '=', scope.tenantId)
    .where('h.workspace_id', '=', scope.workspaceId)
    .where('h.node_id', '=', nodeId)
    .executeTakeFirst();
  if (!row) {
    const node = await db.selectFrom('nodes').select('id').where('tenant_id', '=', scope.tenantId).where('workspace_id', '=', scope.workspaceId).where('id', '=', nodeId).executeTakeFirst();
    throw notFound(node ? 'this node has no software inventory (no agent reports on it)' : 'node not found');
  }
  const packages = (await readPackages(db, scope, nodeId)).sort((a, b) => a.name.localeCompare(b.name) || a.version.localeCompare(b.version) || a.arch.localeCompare(b.arch) || a.manager.localeCompare(b.manager));
  return {
    node: { id: row.id, name: row.name, properties: row.properties },
    serial: row.sbom_serial,
    version: row.sbom_version,
    updatedAt: new Date(row.sbom_updated_at),
    packages,
  };
}

interface OsProps {
  id?: string | null;
  version_id?: string | null;
  name?: string | null;
  pretty_name?: string | null;
}

const osOf = (source: SbomSource): OsProps => (source.node.properties.os ?? {}) as OsProps;

function vulnerabilityIds(p: StoredPackage): Map<string, { source: string; fixed: string[]; summary: string | null }> {
  const out = new Map<string, { source: string; fixed: string[]; summary: string | null }>();
  for (const a of p.advisories) {
    const ids = a.cve_ids.length ? a.cve_ids : [a.id];
    for (const id of ids) {
      const entry = out.get(id) ?? { source: a.source, fixed: [], summary: a.summary };
      entry.fixed.push(...a.fixed_versions);
      out.set(id, entry);
    }
  }
  for (const id of p.reported_cves) if (!out.has(id)) out.set(id, { source: 'agent', fixed: [], summary: null });
  return out;
}

export function cycloneDx(source: SbomSource, tool: { name: string; version: string }, now: Date): Record<string, unknown> {
  const os = osOf(source);
  const hostRef = source.node.id;
  const osRef = `os:${os.id ?? 'unknown'}@${os.version_id ?? ''}`;
  const refOf = (p: StoredPackage, i: number) => `${p.purl}#${i}`;
  const components: Array<Record<string, unknown>> = [];
  const vulns = new Map<string, { source: string; summary: string | null; fixed: Set<string>; affects: string[] }>();
  if (os.id) {
    components.push({ type: 'operating-system', 'bom-ref': osRef, name: os.id, ...(os.version_id ? { version: os.version_id } : {}), ...(os.pretty_name ? { description: os.pretty_name } : {}) });
  }
  source.packages.forEach((p, i) => {
    const ref = refOf(p, i);
    const properties = [
      { name: 'controlgraph:package:manager', value: p.manager },
      ...(p.arch ? [{ name: 'controlgraph:package:arch', value: p.arch }] : []),
      ...(p.source_name ? [{ name: 'controlgraph:package:source_name', value: p.source_name }] : []),
      ...(p.source_version ? [{ name: 'controlgraph:package:source_version', value: p.source_version }] : []),
      ...(p.installed_at ? [{ name: 'controlgraph:package:installed_at', value: new Date(p.installed_at).toISOString() }] : []),
    ];
    components.push({ type: familyOf(p.manager) === 'generic' ? 'application' : 'library', 'bom-ref': ref, name: p.name, version: p.version, purl: p.purl, properties });
    for (const [id, v] of vulnerabilityIds(p)) {
      const entry = vulns.get(id) ?? { source: v.source, summary: v.summary, fixed: new Set<string>(), affects: [] };
      for (const f of v.fixed) entry.fixed.add(f);
      entry.affects.push(ref);
      vulns.set(id, entry);
    }
  });
  const vulnerabilities = [...vulns.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([id, v]) => ({
      'bom-ref': `vuln:${id}`,
      id,
      source: v.source === 'nvd' || id.startsWith('CVE-')
        ? { name: 'NVD', url: `https://nvd.nist.gov/vuln/detail/${id}` }
        : { name: 'OSV', url: `https://osv.dev/vulnerability/${id}` },
      ...(v.summary ? { description: v.summary } : {}),
      ...(v.fixed.size ? { recommendation: `Upgrade to ${[...v.fixed].join(' or ')} or later` } : {}),
      affects: v.affects.map((ref) => ({ ref })),
    }));
  return {
    $schema: 'http://cyclonedx.org/schema/bom-1.5.schema.json',
    bomFormat: 'CycloneDX',
    specVersion: '1.5',
    serialNumber: `urn:uuid:${source.serial}`,
    version: source.version,
    metadata: {
      timestamp: now.toISOString(),
      tools: { components: [{ type: 'application', name: tool.name, version: tool.version }] },
      component: {
        type: 'device',
        'bom-ref': hostRef,
        name: source.node.name,
        description: `host ${source.node.id}`,
        properties: [
          { name: 'controlgraph:node_id', value: source.node.id },
          { name: 'controlgraph:inventory_updated_at', value: source.updatedAt.toISOString() },
        ],
      },
    },
    components,
    dependencies: [{ ref: hostRef, dependsOn: components.map((c) => c['bom-ref'] as string) }],
    ...(vulnerabilities.length ? { vulnerabilities } : {}),
  };
}

function spdxId(prefix: string, text: string, i: number): string {
  const clean = text.replace(/[^A-Za-z0-9.-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 80);
  return `SPDXRef-${prefix}-${i}${clean ? `-${clean}` : ''}`;
}

export function spdx(source: SbomSource, tool: { name: string; version: string }, now: Date, namespaceBase: string): Record<string, unknown> {
  const os = osOf(source);
  const hostId = 'SPDXRef-Host';
  const packages: Array<Record<string, unknown>> = [
    {
      SPDXID: hostId,
      name: source.node.name,
      downloadLocation: 'NOASSERTION',
      filesAnalyzed: false,
      primaryPackagePurpose: 'DEVICE',
      comment: `ControlGraph host node ${source.node.id}`,
      ...(os.pretty_name ? { description: os.pretty_name } : {}),
    },
  ];
  const relationships: Array<Record<string, unknown>> = [{ spdxElementId: 'SPDXRef-DOCUMENT', relationshipType: 'DESCRIBES', relatedSpdxElement: hostId }];
  if (os.id) {
    packages.push({
      SPDXID: 'SPDXRef-OperatingSystem',
      name: os.id,
      ...(os.version_id ? { versionInfo: os.version_id } : {}),
      downloadLocation: 'NOASSERTION',
      filesAnalyzed: false,
      primaryPackagePurpose: 'OPERATING_SYSTEM',
    });
    relationships.push({ spdxElementId: hostId, relationshipType: 'CONTAINS', relatedSpdxElement: 'SPDXRef-OperatingSystem' });
  }
  source.packages.forEach((p, i) => {
    const id = spdxId('Package', p.name, i + 1);
    const advisories = [...vulnerabilityIds(p).keys()].map((vid) => ({
      referenceCategory: 'SECURITY',
      referenceType: 'advisory',
      referenceLocator: vid.startsWith('CVE-') ? `https://nvd.nist.gov/vuln/detail/${vid}` : `https://osv.dev/vulnerability/${vid}`,
    }));
    packages.push({
      SPDXID: id,
      name: p.name,
      versionInfo: p.version,
      downloadLocation: 'NOASSERTION',
      filesAnalyzed: false,
      licenseConcluded: 'NOASSERTION',
      licenseDeclared: 'NOASSERTION',
      copyrightText: 'NOASSERTION',
      primaryPackagePurpose: familyOf(p.manager) === 'generic' ? 'APPLICATION' : 'LIBRARY',
      ...(p.source_name && p.source_name !== p.name ? { sourceInfo: `built from source package ${p.source_name} ${p.source_version ?? ''}`.trim() } : {}),
      externalRefs: [{ referenceCategory: 'PACKAGE-MANAGER', referenceType: 'purl', referenceLocator: p.purl }, ...advisories],
    });
    relationships.push({ spdxElementId: hostId, relationshipType: 'CONTAINS', relatedSpdxElement: id });
  });
  const digest = createHash('sha256').update(`${source.serial}:${source.version}`).digest('hex').slice(0, 16);
  return {
    spdxVersion: 'SPDX-2.3',
    dataLicense: 'CC0-1.0',
    SPDXID: 'SPDXRef-DOCUMENT',
    name: `${source.node.name} host SBOM`,
    documentNamespace: `${namespaceBase}/spdx/${encodeURIComponent(source.node.id)}/${source.serial}/${source.version}-${digest}`,
    creationInfo: {
      created: now.toISOString().replace(/\.\d{3}Z$/, 'Z'),
      creators: [`Tool: ${tool.name}-${tool.version}`],
      comment: `Inventory of host node ${source.node.id} as of ${source.updatedAt.toISOString()} (SBOM version ${source.version}).`,
    },
    documentDescribes: [hostId],
    packages,
    relationships,
  };
}
