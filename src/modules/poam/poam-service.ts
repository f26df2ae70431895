/**
 * SHARED ENTRY POINT. `createPoamItems` is how every other module creates POA&M items (e.g. the
 * assessments module's POST /assessments/{id}/generate-poam): call it with your own transaction so
 * the items commit or roll back with your change. It validates (400 AppError naming the field, 404
 * for an unknown finding_id, 409 when that finding already has an item that is not closed), numbers
 * the items POAM-<n> per tenant from a counter row (safe under concurrency, numbers never reused),
 * writes the creation entry of each item's comment log and one audit-log entry per item, and returns
 * the items as the API shows them. Keep the signature stable; ask the POA&M owner before changing it.
 *
 * Control ids: NIST SP 800-53 ids in any usual spelling (`AC-2(1)`, `ac-2.1`, `NIST-AC-2`,
 * `nist-800-53:AC-2`) are normalised to the catalog form; ids qualified with another framework
 * (`nist-800-171:3.1.1`, `hipaa:164.308(a)(1)`, as questionnaire control mappings write them) are kept.
 */
import { sql, type Kysely } from 'kysely';
import type { AppDeps } from '../../deps.js';
import type { Database } from '../../platform/db/schema.js';
import { json } from '../../platform/db/schema.js';
import { inWorkspace, type Scope } from '../../platform/db/scope.js';
import { writeAudit, type AuditActor } from '../../platform/audit/audit-log.js';
import { badRequest, conflict, notFound } from '../../platform/http/errors.js';
import { formatPoamId, LIMITS, validateFields, type MilestoneInput, type PoamSeverity } from './model.js';
import { appendComment, loadItems, type PoamItem } from './poam-repo.js';
import { findingStatus } from '../compliance/index.js';

export type { PoamItem } from './poam-repo.js';

/** One item to create (contracts section 6 field names). */
export interface PoamItemInput {
  weakness_name: string;
  weakness_description: string;
  control_ids: string[];
  severity: PoamSeverity;
  point_of_contact: string;
  /** YYYY-MM-DD; default: today (UTC) + 15/30/90/180 days for CRITICAL/HIGH/MEDIUM/LOW. */
  scheduled_completion?: string;
  milestones?: MilestoneInput[];
  /** A finding of the same workspace the item tracks (404 when unknown). */
  finding_id?: string | null;
  vendor_dependency?: boolean;
  deviation_request?: string | null;
  /** Provenance label shown on the item, e.g. `assessment:<id>`. Default `manual`. */
  source?: string;
}

/** Serialises item creation for one finding (the unique index is the backstop). */
async function lockFinding(trx: Kysely<Database>, scope: Scope, findingId: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtext(${`poam:${scope.workspaceId}:${findingId}`}))`.execute(trx);
}

/** Hands out `count` consecutive numbers of the tenant; the counter row stays locked until commit. */
async function allocateNumbers(trx: Kysely<Database>, tenantId: string, count: number): Promise<number> {
  const row = await trx
    .insertInto('poam_counters')
    .values({ tenant_id: tenantId, last_number: count })
    .onConflict((oc) => oc.column('tenant_id').doUpdateSet({ last_number: sql<number>`poam_counters.last_number + ${count}::int` }))
    .returning('last_number')
    .executeTakeFirstOrThrow();
  return row.last_number - count + 1;
}

/**
 * Creates POA&M items inside the caller's transaction `trx` (use only `trx` there: on PGlite a query
 * on another handle waits forever). Items are created in the order given and numbered consecutively.
 */
export async function createPoamItems(trx: Kysely<Database>, deps: Pick<AppDeps, 'clock'>, actor: AuditActor, scope: Scope, items: PoamItemInput[]): Promise<PoamItem[]> {
  if (items.length === 0) return [];
  if (items.length > 1000) throw badRequest('at most 1000 POA&M items can be created at once');
  const now = deps.clock.now();
  const prepared = items.map((input, i) => {
    const where = items.length > 1 ? `items[${i}]` : '';
    const fields = validateFields(input, { now }, where);
    const source = input.source?.trim() || 'manual';
    if (source.length > LIMITS.source) throw badRequest(`${where ? `${where}.` : ''}source must be at most ${LIMITS.source} characters`);
    const findingId = input.finding_id?.trim() || null;
    return { fields, source, findingId };
  });

  const findingIds = [...new Set(prepared.map((p) => p.findingId).filter((id): id is string => id !== null))];
  if (findingIds.length !== prepared.filter((p) => p.findingId).length) throw badRequest('a finding can be linked to one new item only');
  for (const findingId of findingIds.sort()) {
    await lockFinding(trx, scope, findingId);
    if ((await findingStatus(trx, scope, findingId)) === null) throw notFound(`finding ${findingId} not found`);
    const live = await trx
      .selectFrom('poam_items')
      .select('number')
      .where(inWorkspace(scope))
      .where('finding_id', '=', findingId)
      .where('status', '<>', 'closed')
      .executeTakeFirst();
    if (live) {
      throw conflict(`finding ${findingId} already has POA&M item ${formatPoamId(live.number)} that is not closed`, {
        poam_id: formatPoamId(live.number),
      });
    }
  }

  const first = await allocateNumbers(trx, scope.tenantId, prepared.length);
  const numbers = prepared.map((_, i) => first + i);
  await trx
    .insertInto('poam_items')
    .values(
      prepared.map((p, i) => ({
        tenant_id: scope.tenantId,
        workspace_id: scope.workspaceId,
        number: numbers[i]!,
        ...p.fields,
        milestones: json(p.fields.milestones),
        status: 'open' as const,
        finding_id: p.findingId,
        source: p.source,
        created_by: actor.name,
        created_at: now,
        updated_at: now,
      })),
    )
    .execute();
  for (const [i, p] of prepared.entries()) {
    const number = numbers[i]!;
    await appendComment(trx, scope.tenantId, number, {
      author: actor.name,
      text: p.findingId ? `Item created from finding ${p.findingId} (source: ${p.source})` : `Item created (source: ${p.source})`,
      status_from: null,
      status_to: 'open',
      at: now,
    });
    await writeAudit(trx, deps.clock, actor, {
      tenantId: scope.tenantId,
      workspaceId: scope.workspaceId,
      action: 'poam.created',
      targetType: 'poam_item',
      targetId: formatPoamId(number),
      details: { source: p.source, finding_id: p.findingId, severity: p.fields.severity, scheduled_completion: p.fields.scheduled_completion },
    });
  }
  return loadItems(trx, scope, numbers, now);
}
