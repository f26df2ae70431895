import { sql } from 'kysely';
import type { AppDeps } from '../../deps.js';
import { json } from '../../platform/db/schema.js';
import { inWorkspace, inTenant, type Scope } from '../../platform/db/scope.js';
import type { RequestContext } from '../../platform/auth/actor.js';
import { actorOf, auditInScope } from '../../platform/audit/audit-log.js';
import { badRequest, conflict, notFound } from '../../platform/http/errors.js';
import { offsetOf, toPage, type PageRequest } from '../../platform/http/pagination.js';
import { findingsByIds, nistControlsOf } from '../compliance/index.js';
import {
  LIMITS,
  POAM_SEVERITIES,
  POAM_STATUSES,
  TRANSITIONS,
  formatPoamId,
  isBackward,
  isPoamStatus,
  normalizeControlId,
  parsePoamId,
  poamSeverityOf,
  validateFields,
  type MilestoneInput,
  type PoamFields,
  type PoamSeverity,
  type PoamStatus,
} from './model.js';
import { appendComment, findRow, present, selectItems, todayOf, type PoamFilter, type PoamItem, type PoamRow } from './poam-repo.js';
import { createPoamItems, type PoamItemInput } from './poam-service.js';

type Deps = Pick<AppDeps, 'database' | 'clock'>;

/** POST /poam: a manual item, or one drafted from a finding (`finding_id`; the other fields then override). */
export interface CreateBody {
  finding_id?: string;
  weakness_name?: string;
  weakness_description?: string;
  control_ids?: string[];
  severity?: string;
  point_of_contact?: string;
  scheduled_completion?: string;
  milestones?: MilestoneInput[];
  vendor_dependency?: boolean;
  deviation_request?: string | null;
}

export type UpdateBody = Omit<CreateBody, 'finding_id'>;

export interface ListQuery {
  status?: string;
  severity?: string;
  control_id?: string;
  point_of_contact?: string;
  finding_id?: string;
  overdue?: boolean;
  sort?: string;
}

const SORTS = {
  number: 'number',
  scheduled_completion: 'scheduled_completion',
  severity: 'severity',
  status: 'status',
  created_at: 'created_at',
  updated_at: 'updated_at',
} as const;

/** Comma-separated values checked against an enumeration (400 naming the bad value). */
function listOf<T extends string>(raw: string | undefined, allowed: readonly T[], name: string, upper = false): T[] | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  const values = raw.split(',').map((v) => (upper ? v.trim().toUpperCase() : v.trim().toLowerCase()));
  for (const v of values) if (!(allowed as readonly string[]).includes(v)) throw badRequest(`${name} must be one or more of ${allowed.join(', ')} (got "${v}")`);
  return values as T[];
}

export function filterOf(query: ListQuery): PoamFilter {
  let control_id: string | undefined;
  if (query.control_id !== undefined && query.control_id.trim() !== '') {
    control_id = normalizeControlId(query.control_id) ?? undefined;
    if (!control_id) throw badRequest(`control_id "${query.control_id}" is not a control id`);
  }
  return {
    status: listOf(query.status, POAM_STATUSES, 'status'),
    severity: listOf(query.severity, POAM_SEVERITIES, 'severity', true),
    control_id,
    point_of_contact: query.point_of_contact?.trim() || undefined,
    finding_id: query.finding_id?.trim() || undefined,
    overdue: query.overdue,
  };
}

const SEVERITY_RANK = sql<number>`CASE severity WHEN 'CRITICAL' THEN 4 WHEN 'HIGH' THEN 3 WHEN 'MEDIUM' THEN 2 ELSE 1 END`;
const STATUS_RANK = sql<number>`CASE status WHEN 'open' THEN 1 WHEN 'in_progress' THEN 2 WHEN 'verification' THEN 3 ELSE 4 END`;

/**
 * The NIST 800-53 controls a finding fails: its rule's primary NIST controls (the text's counted
 * mappings, compliance/rules/primary-controls.ts), not the long tail of related ones. A finding of a
 * rule that names no NIST control (a custom rule) gets its own control qualified by framework, which
 * the FedRAMP export keeps out of its NIST column.
 */
export function controlsOfFinding(f: { framework: string; control_id: string; framework_mappings: Array<{ framework: string; control_id: string }> }): string[] {
  const ids = [
    ...new Set(
      nistControlsOf(f)
        .map(normalizeControlId)
        .filter((id): id is string => id !== null),
    ),
  ];
  return ids.length ? ids : [`${f.framework}:${f.control_id}`];
}

// eslint-disable-next-line max-lines-per-function -- a service factory whose methods share its closure; each method is short, and moving them out is a follow-up of issue 26 not done in time
export function createItemsService(deps: Deps) {
  const db = deps.database.db;

  async function getRow(scope: Scope, poamId: string): Promise<PoamRow> {
    const number = parsePoamId(poamId);
    const row = number === null ? undefined : await findRow(db, scope, number);
    if (!row) throw notFound('POA&M item not found');
    return row;
  }

  async function presentOne(row: PoamRow): Promise<PoamItem> {
    const [item] = await present(db, [row], deps.clock.now());
    return item!;
  }

  return {
    async create(context: RequestContext, body: CreateBody): Promise<PoamItem> {
      const { scope } = context;
      const actor = actorOf(context);
      const [item] = await db.transaction().execute(async (trx) => {
        if (!body.finding_id) return createPoamItems(trx, deps, actor, scope, [{ ...(body as unknown as PoamItemInput), source: 'manual' }]);
        const [finding] = await findingsByIds(trx, scope, [body.finding_id], ['id', 'title', 'description', 'severity', 'status', 'framework', 'control_id', 'framework_mappings']);
        if (!finding) throw notFound(`finding ${body.finding_id} not found`);
        if (finding.status !== 'open') throw badRequest(`finding ${finding.id} is ${finding.status}: POA&M items are drafted from open findings`);
        return createPoamItems(trx, deps, actor, scope, [
          {
            weakness_name: body.weakness_name ?? finding.title,
            weakness_description: body.weakness_description ?? finding.description,
            control_ids: body.control_ids ?? controlsOfFinding(finding),
            severity: (body.severity ?? poamSeverityOf(finding.severity)) as PoamSeverity,
            point_of_contact: body.point_of_contact ?? context.actor.name,
            scheduled_completion: body.scheduled_completion,
            milestones: body.milestones,
            vendor_dependency: body.vendor_dependency,
            deviation_request: body.deviation_request,
            finding_id: finding.id,
            source: 'finding',
          },
        ]);
      });
      return item!;
    },

    async get(scope: Scope, poamId: string): Promise<PoamItem> {
      return presentOne(await getRow(scope, poamId));
    },

    async list(scope: Scope, query: ListQuery, page: PageRequest) {
      const now = deps.clock.now();
      const filter = filterOf(query);
      const base = selectItems(db, scope, filter, todayOf(now));
      const { total } = await base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow();
      const sort = query.sort ?? 'number';
      const desc = sort.startsWith('-');
      const key = desc ? sort.slice(1) : sort;
      if (!Object.hasOwn(SORTS, key)) throw badRequest(`sort must be one of ${Object.keys(SORTS).join(', ')}, optionally prefixed with -`);
      const direction = desc ? 'desc' : 'asc';
      let rowsQuery = base.selectAll();
      if (key === 'severity') rowsQuery = rowsQuery.orderBy(SEVERITY_RANK, direction);
      else if (key === 'status') rowsQuery = rowsQuery.orderBy(STATUS_RANK, direction);
      else rowsQuery = rowsQuery.orderBy(SORTS[key as keyof typeof SORTS], direction);
      const rows = await rowsQuery.orderBy('number', direction).limit(page.perPage).offset(offsetOf(page)).execute();
      return toPage(await present(db, rows, now), Number(total), page);
    },

    /** Overdue items, the most overdue first. */
    async overdue(scope: Scope, query: Omit<ListQuery, 'overdue'>, page: PageRequest) {
      return this.list(scope, { sort: 'scheduled_completion', ...query, overdue: true }, page);
    },

    async summary(scope: Scope) {
      const now = deps.clock.now();
      const rows = await db
        .selectFrom('poam_items')
        .select(['status', 'severity'])
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .select(sql<number>`count(*) FILTER (WHERE status <> 'closed' AND scheduled_completion < ${todayOf(now)})`.as('overdue'))
        .where(inTenant(scope.tenantId))
        .where(inWorkspace(scope))
        .groupBy(['status', 'severity'])
        .execute();
      const zeroSeverity = () => Object.fromEntries(POAM_SEVERITIES.map((s) => [s, 0])) as Record<PoamSeverity, number>;
      const by_status = Object.fromEntries(POAM_STATUSES.map((s) => [s, 0])) as Record<PoamStatus, number>;
      const by_severity = zeroSeverity();
      const open_by_severity = zeroSeverity();
      const by_status_and_severity = Object.fromEntries(POAM_STATUSES.map((s) => [s, zeroSeverity()])) as Record<PoamStatus, Record<PoamSeverity, number>>;
      let total = 0;
      let overdue = 0;
      for (const r of rows) {
        const n = Number(r.n);
        total += n;
        overdue += Number(r.overdue);
        by_status[r.status] += n;
        by_severity[r.severity] += n;
        by_status_and_severity[r.status][r.severity] += n;
        if (r.status !== 'closed') open_by_severity[r.severity] += n;
      }
      return { total, overdue, by_status, by_severity, open_by_severity, by_status_and_severity, as_of: todayOf(now) };
    },

    async update(context: RequestContext, poamId: string, body: UpdateBody): Promise<PoamItem> {
      const { scope } = context;
      const now = deps.clock.now();
      const number = parsePoamId(poamId);
      const row = await db.transaction().execute(async (trx) => {
        const current = number === null ? undefined : await findRow(trx, scope, number, true);
        if (!current) throw notFound('POA&M item not found');
        if (current.status === 'closed') throw conflict(`${formatPoamId(current.number)} is closed: closed items are kept as they were closed`);
        const fields = validateFields({ ...body, scheduled_completion: body.scheduled_completion ?? current.scheduled_completion }, { now });
        const changed = changes(current, fields);
        if (Object.keys(changed).length === 0) return current;
        const updated = await trx
          .updateTable('poam_items')
          .set({ ...fields, milestones: json(fields.milestones), updated_at: now })
          .where(inTenant(scope.tenantId))
          .where('number', '=', current.number)
          .returningAll()
          .executeTakeFirstOrThrow();
        await appendComment(trx, scope.tenantId, current.number, { author: context.actor.name, text: describeChanges(changed), at: now });
        await auditInScope(trx, deps.clock, context, {
          action: 'poam.updated',
          targetType: 'poam_item',
          targetId: formatPoamId(current.number),
          details: { changes: changed },
        });
        return updated;
      });
      return presentOne(row);
    },

    async remove(context: RequestContext, poamId: string): Promise<{ storageKeys: string[]; item: PoamItem }> {
      const { scope } = context;
      const number = parsePoamId(poamId);
      return db.transaction().execute(async (trx) => {
        const current = number === null ? undefined : await findRow(trx, scope, number, true);
        if (!current) throw notFound('POA&M item not found');
        const [item] = await present(trx, [current], deps.clock.now());
        const evidence = await trx.selectFrom('poam_evidence').select(['storage_key']).where(inTenant(scope.tenantId)).where('number', '=', current.number).execute();
        await trx.deleteFrom('poam_items').where(inTenant(scope.tenantId)).where('number', '=', current.number).execute();
        // The audit entry keeps the whole item: the number is never handed out again.
        await auditInScope(trx, deps.clock, context, {
          action: 'poam.deleted',
          targetType: 'poam_item',
          targetId: item!.id,
          details: { item: item as unknown as Record<string, unknown> },
        });
        return { storageKeys: evidence.map((e) => e.storage_key), item: item! };
      });
    },

    async changeStatus(context: RequestContext, poamId: string, body: { status: string; comment?: string }): Promise<PoamItem> {
      const { scope } = context;
      const now = deps.clock.now();
      const number = parsePoamId(poamId);
      const target = body.status?.trim().toLowerCase();
      const comment = body.comment?.trim() ?? '';
      if (comment.length > LIMITS.comment) throw badRequest(`comment must be at most ${LIMITS.comment} characters`);
      const row = await db.transaction().execute(async (trx) => {
        const current = number === null ? undefined : await findRow(trx, scope, number, true);
        if (!current) throw notFound('POA&M item not found');
        if (!target || !isPoamStatus(target)) throw badRequest(`status must be one of ${POAM_STATUSES.join(', ')}`);
        const from = current.status;
        if (from === target) throw badRequest(`${formatPoamId(current.number)} is already ${from}`);
        // Missing evidence is the 409 of the contract from any state, before the order of the moves.
        if (target === 'closed') {
          const evidence = await trx
            .selectFrom('poam_evidence')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where(inTenant(scope.tenantId))
            .where('number', '=', current.number)
            .executeTakeFirstOrThrow();
          if (Number(evidence.n) === 0) {
            throw conflict(
              `${formatPoamId(current.number)} cannot be closed without a linked evidence artifact: upload one to /poam/${formatPoamId(current.number)}/evidence first`,
            );
          }
        }
        if (!TRANSITIONS[from].includes(target)) {
          const allowed = TRANSITIONS[from];
          throw badRequest(
            `cannot move ${formatPoamId(current.number)} from ${from} to ${target}` +
              (allowed.length ? ` (allowed: ${allowed.join(', ')})` : ': closed items are final; raise a new item if the weakness returns'),
            { from, to: target, allowed: [...allowed] },
          );
        }
        if (isBackward(from, target) && !comment) throw badRequest(`a comment is required to move an item back from ${from} to ${target}`);
        const updated = await trx
          .updateTable('poam_items')
          .set({ status: target, updated_at: now, closed_at: target === 'closed' ? now : null })
          .where(inTenant(scope.tenantId))
          .where('number', '=', current.number)
          .returningAll()
          .executeTakeFirstOrThrow();
        await appendComment(trx, scope.tenantId, current.number, {
          author: context.actor.name,
          text: comment || `Status changed from ${from} to ${target}`,
          status_from: from,
          status_to: target,
          at: now,
        });
        await auditInScope(trx, deps.clock, context, {
          action: 'poam.status_changed',
          targetType: 'poam_item',
          targetId: formatPoamId(current.number),
          details: { from, to: target, comment: comment || null },
        });
        return updated;
      });
      return presentOne(row);
    },

    async addComment(context: RequestContext, poamId: string, body: { text: string }): Promise<PoamItem> {
      const { scope } = context;
      const now = deps.clock.now();
      const text = body.text?.trim();
      if (!text) throw badRequest('text is required');
      if (text.length > LIMITS.comment) throw badRequest(`text must be at most ${LIMITS.comment} characters`);
      const number = parsePoamId(poamId);
      const row = await db.transaction().execute(async (trx) => {
        const current = number === null ? undefined : await findRow(trx, scope, number, true);
        if (!current) throw notFound('POA&M item not found');
        await appendComment(trx, scope.tenantId, current.number, { author: context.actor.name, text, at: now });
        const updated = await trx
          .updateTable('poam_items')
          .set({ updated_at: now })
          .where(inTenant(scope.tenantId))
          .where('number', '=', current.number)
          .returningAll()
          .executeTakeFirstOrThrow();
        await auditInScope(trx, deps.clock, context, {
          action: 'poam.commented',
          targetType: 'poam_item',
          targetId: formatPoamId(current.number),
          details: { text },
        });
        return updated;
      });
      return presentOne(row);
    },

    getRow,
  };
}

type Changes = Record<string, { from: unknown; to: unknown }>;

function changes(current: PoamRow, next: PoamFields): Changes {
  const result: Changes = {};
  for (const key of Object.keys(next) as Array<keyof PoamFields>) {
    const before = current[key];
    const after = next[key];
    if (JSON.stringify(before) !== JSON.stringify(after)) result[key] = { from: before, to: after };
  }
  return result;
}

const SHOWN = new Set(['severity', 'scheduled_completion', 'point_of_contact', 'vendor_dependency']);

/** The comment-log entry of an update: the short fields with their values, the others by name. */
function describeChanges(changed: Changes): string {
  const parts = Object.entries(changed).map(([key, { from, to }]) => (SHOWN.has(key) ? `${key} ${String(from)} → ${String(to)}` : key));
  return `Updated: ${parts.join('; ')}`;
}
