import type { Kysely } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import { inTenant, type Scope } from '../../../platform/db/scope.js';
import { badRequest } from '../../../platform/http/errors.js';
import { present, selectItems, todayOf, type PoamFilter, type PoamItem } from '../poam-repo.js';
import { findingsByIds } from '../../compliance/index.js';

/** What a finding adds to an exported item (detector, asset, detection date, CVEs, remediation). */
export interface ExportFinding {
  id: string;
  rule_id: string;
  framework: string;
  control_id: string;
  severity: string;
  resource_id: string;
  resource_type: string;
  resource_name: string;
  remediation: string;
  cve_ids: string[];
  first_seen: string;
  status: string;
}

export interface ExportEvidence {
  id: string;
  filename: string;
  sha256: string;
  size_bytes: number;
  created_at: string;
}

export interface ExportItem extends PoamItem {
  finding: ExportFinding | null;
  evidence: ExportEvidence[];
}

export interface ExportData {
  generatedAt: Date;
  tenant: { id: string; name: string };
  workspace: { id: string; name: string };
  items: ExportItem[];
}

/**
 * At most this many items per export: the files are built in memory. A larger selection is refused
 * (400) rather than cut short, because a POA&M that silently misses items is worse than none.
 */
export const MAX_EXPORT_ITEMS = 20_000;

const iso = (value: Date | string) => new Date(value).toISOString();

export async function collectExport(db: Kysely<Database>, scope: Scope, filter: PoamFilter, now: Date, maxItems = MAX_EXPORT_ITEMS): Promise<ExportData> {
  const [tenant, workspace] = await Promise.all([
    db.selectFrom('tenants').select(['id', 'name']).where('id', '=', scope.tenantId).executeTakeFirstOrThrow(),
    db.selectFrom('workspaces').select(['id', 'name']).where('id', '=', scope.workspaceId).executeTakeFirstOrThrow(),
  ]);
  const selected = selectItems(db, scope, filter, todayOf(now));
  const { total } = await selected.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow();
  if (Number(total) > maxItems) {
    throw badRequest(`the export would hold ${Number(total)} items, at most ${maxItems} per export: narrow it with the list filters (status, severity, control_id, …)`, {
      total: Number(total),
      max_items: maxItems,
    });
  }
  const rows = await selected.selectAll().orderBy('number').execute();
  const items = await present(db, rows, now);
  const findingIds = [...new Set(items.map((i) => i.finding_id).filter((id): id is string => id !== null))];
  const findings = new Map<string, ExportFinding>();
  const found = await findingsByIds(db, scope, findingIds, [
    'id',
    'rule_id',
    'framework',
    'control_id',
    'severity',
    'resource_id',
    'resource_type',
    'resource_name',
    'remediation',
    'cve_ids',
    'first_seen',
    'status',
  ]);
  for (const f of found) findings.set(f.id, { ...f, first_seen: iso(f.first_seen), cve_ids: f.cve_ids ?? [] });
  const evidence = new Map<number, ExportEvidence[]>();
  if (rows.length) {
    const numbers = rows.map((r) => r.number);
    for (let i = 0; i < numbers.length; i += 1000) {
      const found = await db
        .selectFrom('poam_evidence')
        .select(['id', 'number', 'filename', 'sha256', 'size_bytes', 'created_at'])
        .where(inTenant(scope.tenantId))
        .where('number', 'in', numbers.slice(i, i + 1000))
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      for (const e of found) {
        const list = evidence.get(e.number) ?? [];
        list.push({ id: e.id, filename: e.filename, sha256: e.sha256, size_bytes: Number(e.size_bytes), created_at: iso(e.created_at) });
        evidence.set(e.number, list);
      }
    }
  }
  return {
    generatedAt: now,
    tenant,
    workspace,
    items: items.map((item, i) => ({
      ...item,
      finding: item.finding_id ? (findings.get(item.finding_id) ?? null) : null,
      evidence: evidence.get(rows[i]!.number) ?? [],
    })),
  };
}

/** FedRAMP's risk ratings (Low, Moderate, High): CRITICAL and HIGH are High. */
export function riskRating(severity: string): 'High' | 'Moderate' | 'Low' {
  if (severity === 'CRITICAL' || severity === 'HIGH') return 'High';
  if (severity === 'MEDIUM') return 'Moderate';
  return 'Low';
}

/** "(1) 2026-12-01: Description" entries separated by a blank line (the template's format). */
export function plannedMilestones(item: PoamItem): string {
  return item.milestones.map((m, i) => `(${i + 1}) ${m.date}: ${m.description}`).join('\n\n');
}

/** "(n) Complete yyyy-mm-dd : Description" for milestones marked done (the template's change format). */
export function milestoneChanges(item: PoamItem): string {
  return item.milestones
    .map((m, i) => (m.done ? `(${i + 1}) Complete ${m.date} : ${m.description}` : null))
    .filter((line): line is string => line !== null)
    .join('\n\n');
}

export function commentLog(item: PoamItem): string {
  return item.comments.map((c) => `${c.at.slice(0, 10)} ${c.author}: ${c.text}`).join('\n');
}

export function detectorSource(item: ExportItem): string {
  if (item.finding) return `ControlGraph compliance audit (${item.finding.framework})`;
  if (item.source.startsWith('assessment')) return 'Security assessment';
  return item.source === 'manual' ? 'Manual entry' : item.source;
}

export function detectionDate(item: ExportItem): string {
  return (item.finding?.first_seen ?? item.created_at).slice(0, 10);
}

/** The date of the item's last change, or of its closing. */
export function statusDate(item: PoamItem): string {
  return (item.closed_at ?? item.updated_at).slice(0, 10);
}
