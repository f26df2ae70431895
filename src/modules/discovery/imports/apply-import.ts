import type { Kysely } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import type { Scope } from '../../../platform/db/scope.js';
import type { Clock } from '../../../platform/clock.js';
import { emitEvents } from '../../../platform/events/outbox.js';
import { findingId, reportFindings, rescoreFindings, resolveUnreported, type DesiredFinding, type HostResource, type Severity } from '../../compliance/index.js';
import { nodesByReference, upsertNodes, type EdgeRecord, type NodeRecord, type NodeRef } from '../../graph/index.js';
import { applyImportedEdges, applyImportedNodes } from './apply-nodes.js';
import { mapRequirements } from './framework-names.js';
import type { ImportItem, ImportedFinding, ImportedNode, RecordError } from './import-record.js';

/**
 * Applies a parsed file to a workspace (issue 27): each failed check becomes a finding of rule
 * `<source>:<check>` on the node its resource names (created when the graph does not know it), with
 * the events every finding writer emits; at the end, the import's scope is reconciled. Records are
 * applied in batches, each in its own transaction, so a large file never holds one long transaction
 * and the import's progress shows as it goes.
 */

/** Records per batch (and per transaction). */
export const IMPORT_BATCH = 500;
/** Record errors kept on the import (errors_count has them all). */
export const MAX_STORED_ERRORS = 1000;

export interface ImportCounts {
  records: number;
  findings_created: number;
  findings_updated: number;
  findings_resolved: number;
  findings_reopened: number;
  nodes: number;
  errors_count: number;
}

export interface ImportProgress extends ImportCounts {
  source: string;
  errors: Array<{ record: number; message: string }>;
}

/**
 * What the import has reported so far, for the scope reconciliation at the end: the (account,
 * region) pairs and checks of each source, and the findings it reported failing or could not decide.
 */
interface Reported {
  scopes: Map<string, { source: string; account: string; region: string }>;
  checks: Map<string, Set<string>>;
  kept: Set<string>;
  /** Edges of node items whose target was not a node yet: written once every node of the file is. */
  pendingEdges: EdgeRecord[];
  /** Nodes of node items that are new or whose content changed (what an audit should look at). */
  changedNodeIds: Set<string>;
}

export interface ImportResult extends ImportProgress {
  changedNodeIds: string[];
}

const SEVERITY: Record<ImportedFinding['severity'], Severity> = { critical: 'CRITICAL', high: 'HIGH', medium: 'MEDIUM', low: 'LOW', info: 'INFO' };

export const ruleIdOf = (f: Pick<ImportedFinding, 'source' | 'check_id'>) => `${f.source}:${f.check_id}`;
const regionOf = (f: ImportedFinding) => f.resource.region || 'global';
const scopeKey = (source: string, account: string, region: string) => `${source}\u0000${account}\u0000${region}`;

export function emptyProgress(): ImportProgress {
  return { source: '', records: 0, findings_created: 0, findings_updated: 0, findings_resolved: 0, findings_reopened: 0, nodes: 0, errors_count: 0, errors: [] };
}

/** The node an imported resource becomes when the graph has none: its provider, account, region and the source's type. */
function nodeOfResource(f: ImportedFinding): NodeRecord {
  const r = f.resource;
  const region = regionOf(f);
  return {
    id: `${r.provider}:${region}:${r.type}:${r.uid}`,
    provider: r.provider,
    region,
    type: r.type,
    native_id: r.uid,
    name: r.name,
    account_id: r.account_id || null,
    properties: { ...(r.uid.startsWith('arn:') ? { arn: r.uid } : {}), imported_from: f.source },
    tags: r.tags ?? {},
    source: { kind: 'import', tool: f.source },
  };
}

/** The nodes of the batch's resources, by resource uid: found by ARN, native id or id, else created. */
async function resolveNodes(trx: Kysely<Database>, scope: Scope, findings: ImportedFinding[], now: Date) {
  const byUid = new Map<string, ImportedFinding>();
  for (const f of findings) if (!byUid.has(f.resource.uid)) byUid.set(f.resource.uid, f);
  const found = await nodesByReference(trx, scope, [...byUid.keys()]);
  const missing = [...byUid.entries()].filter(([uid]) => !found.has(uid)).map(([, f]) => nodeOfResource(f));
  if (missing.length) await upsertNodes(trx, scope, missing, now, false);
  for (const node of missing) found.set(node.native_id, { id: node.id, type: node.type, name: node.name, region: node.region, account_id: node.account_id });
  return { nodes: found, created: missing.length };
}

function desiredOf(f: ImportedFinding): DesiredFinding {
  const { mappings, unmapped } = mapRequirements(f.requirements, f.resource.provider);
  const [primary, ...others] = mappings;
  const severity = SEVERITY[f.severity];
  return {
    rule_id: ruleIdOf(f),
    framework: primary?.framework ?? '',
    control_id: primary?.control_id ?? '',
    framework_mappings: others,
    base_severity: severity,
    severity,
    title: f.title,
    description: f.description,
    remediation: f.remediation,
    cve_ids: f.cve_ids ?? [],
    tags: [],
    details: { ...f.details, ...(unmapped.length ? { requirements: unmapped } : {}), source_resource_type: f.resource.type },
    origin: { source: f.source, check_id: f.check_id, finding_id: f.source_finding_id, location: f.location ? { ...f.location } : null },
  };
}

/** The batch's failed checks per node, one per (check, node): a failure wins over a pass or a manual result for the same pair. */
function groupByNode(findings: ImportedFinding[], nodes: Map<string, NodeRef>) {
  const groups = new Map<string, { resource: HostResource; desired: Map<string, DesiredFinding> }>();
  for (const f of findings) {
    if (f.status !== 'fail') continue;
    const node = nodes.get(f.resource.uid)!;
    let group = groups.get(node.id);
    if (!group) {
      group = { resource: { id: node.id, type: node.type, name: node.name, region: regionOf(f), account_id: f.resource.account_id }, desired: new Map() };
      groups.set(node.id, group);
    }
    group.desired.set(ruleIdOf(f), desiredOf(f));
  }
  return groups;
}

function note(reported: Reported, findings: ImportedFinding[], nodes: Map<string, NodeRef>): void {
  for (const f of findings) {
    const region = regionOf(f);
    reported.scopes.set(scopeKey(f.source, f.resource.account_id, region), { source: f.source, account: f.resource.account_id, region });
    let checks = reported.checks.get(f.source);
    if (!checks) reported.checks.set(f.source, (checks = new Set()));
    checks.add(f.check_id);
    // A failure is kept open; so is a finding the source could not decide this time (manual checks).
    if (f.status !== 'pass') reported.kept.add(findingId(ruleIdOf(f), nodes.get(f.resource.uid)!.id));
  }
}

async function applyFindings(trx: Kysely<Database>, scope: Scope, findings: ImportedFinding[], now: Date, reported: Reported, progress: ImportProgress) {
  const { nodes, created } = await resolveNodes(trx, scope, findings, now);
  progress.nodes += created;
  note(reported, findings, nodes);
  const reports = [...groupByNode(findings, nodes).values()].map(({ resource, desired }) => ({ resource, desired: [...desired.values()] }));
  const synced = await reportFindings(trx, scope, now, reports, { severityReason: 'import' });
  progress.findings_created += synced.counts.created;
  progress.findings_updated += synced.counts.updated;
  progress.findings_reopened += synced.counts.reopened;
  return { events: synced.events, resourceIds: synced.changedResourceIds };
}

/** Open findings of the import's scopes whose check it ran and which it did not report failing: resolved. */
async function reconcileScopes(db: Kysely<Database>, clock: Clock, scope: Scope, now: Date, reported: Reported): Promise<number> {
  let resolved = 0;
  for (const { source, account, region } of reported.scopes.values()) {
    const checks = [...(reported.checks.get(source) ?? [])];
    resolved += await resolveUnreported(db, clock, scope, now, { source, account, region, checks }, reported.kept, IMPORT_BATCH);
  }
  return resolved;
}

function noteError(progress: ImportProgress, error: RecordError): void {
  progress.errors_count++;
  if (progress.errors.length < MAX_STORED_ERRORS) progress.errors.push({ record: error.record, message: error.message });
}

interface Batch {
  findings: ImportedFinding[];
  nodes: ImportedNode[];
}

async function applyBatch(db: Kysely<Database>, clock: Clock, scope: Scope, batch: Batch, now: Date, reported: Reported, progress: ImportProgress): Promise<void> {
  const resourceIds = await db.transaction().execute(async (trx) => {
    // Nodes first: a finding of the same file may be about one of them.
    const nodes = await applyImportedNodes(trx, scope, batch.nodes, now);
    progress.nodes += nodes.upserted;
    reported.pendingEdges.push(...nodes.pendingEdges);
    for (const id of nodes.changedNodeIds) reported.changedNodeIds.add(id);
    const applied = await applyFindings(trx, scope, batch.findings, now, reported, progress);
    await emitEvents(trx, clock, applied.events);
    return applied.resourceIds;
  });
  // The stored risk scores of what changed (compliance/findings/rescore.ts).
  await rescoreFindings(db, scope, now, { resourceIds });
}

/**
 * Applies every item of a parsed file; `onProgress` is called after each batch (the job writes the
 * counts to the import). A RecordError is counted and listed, never fatal.
 */
export async function applyImport(
  db: Kysely<Database>,
  clock: Clock,
  scope: Scope,
  items: AsyncIterable<ImportItem>,
  onProgress: (progress: ImportProgress) => Promise<void>,
  signal?: AbortSignal,
): Promise<ImportResult> {
  const now = clock.now();
  const progress = emptyProgress();
  const reported: Reported = { scopes: new Map(), checks: new Map(), kept: new Set(), pendingEdges: [], changedNodeIds: new Set() };
  let batch: Batch = { findings: [], nodes: [] };
  const flush = async () => {
    if (batch.findings.length + batch.nodes.length === 0) return;
    await applyBatch(db, clock, scope, batch, now, reported, progress);
    batch = { findings: [], nodes: [] };
    await onProgress(progress);
    signal?.throwIfAborted();
  };
  for await (const item of items) {
    progress.records++;
    if (item.kind === 'error') noteError(progress, item);
    else if (item.kind === 'node') batch.nodes.push(item);
    else {
      if (!progress.source) progress.source = item.source;
      batch.findings.push(item);
    }
    if (batch.findings.length + batch.nodes.length >= IMPORT_BATCH) await flush();
  }
  await flush();
  // Edges to nodes later in the file; those whose target never came are dropped (apply-nodes.ts).
  await applyImportedEdges(db, scope, reported.pendingEdges, now);
  progress.findings_resolved += await reconcileScopes(db, clock, scope, now, reported);
  await onProgress(progress);
  return { ...progress, changedNodeIds: [...reported.changedNodeIds] };
}
