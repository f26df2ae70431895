import { sql } from 'kysely';
import type { AppDeps } from '../../../deps.js';
import { inWorkspace, inTenant, type Scope } from '../../../platform/db/scope.js';
import { offsetOf, toPage, type PageRequest } from '../../../platform/http/pagination.js';
import { SEVERITIES } from '../rules/rule-types.js';
import { OVERALL } from './snapshot.js';
import { daysBetween, isoDay, parseRange } from './range.js';
import type { HistoryKind } from './tables.js';
import './tables.js';

type Deps = Pick<AppDeps, 'database' | 'clock'>;

export interface HistoryRequest {
  framework?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
  interval?: HistoryKind | undefined;
}

/** Days a history or trend request covers when it names no `from`. */
const DEFAULT_HISTORY_DAYS = 30;
const DEFAULT_TREND_DAYS = 29;

export function createHistoryService(deps: Deps) {
  const db = deps.database.db;

  return {
    /**
     * The points of the range, oldest first, each with the state of 'overall' and of every framework
     * it recorded (or of ?framework= only). Paged by point: every point has an 'overall' row, so
     * those rows number and order the points; one page's rows are then read by their times.
     */
    async history(scope: Scope, query: HistoryRequest, page: PageRequest) {
      const { from, to } = parseRange(query, deps.clock.now(), DEFAULT_HISTORY_DAYS);
      const kind = query.interval ?? 'day';
      const series = db.selectFrom('compliance_history').where(inWorkspace(scope)).where(inTenant(scope.tenantId)).where('kind', '=', kind);
      const inRange = series.where('framework', '=', OVERALL).where('point_at', '>=', from).where('point_at', '<=', to);
      const [{ total }, points] = await Promise.all([
        inRange.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
        inRange.select('point_at').orderBy('point_at').limit(page.perPage).offset(offsetOf(page)).execute(),
      ]);
      const times = points.map((p) => new Date(p.point_at));
      const rows = times.length
        ? await series
            .selectAll()
            .where('point_at', '=', sql<Date>`ANY(${times}::timestamptz[])`)
            .$if(query.framework !== undefined, (q) => q.where('framework', '=', query.framework!))
            .orderBy('point_at')
            .execute()
        : [];
      const items = new Map(times.map((at) => [at.getTime(), { at, taken_at: at, run_id: null as string | null, frameworks: {} as Record<string, unknown> }]));
      for (const row of rows) {
        const item = items.get(new Date(row.point_at).getTime())!;
        if (row.framework === OVERALL || query.framework !== undefined) {
          item.taken_at = new Date(row.taken_at);
          item.run_id = row.run_id;
        }
        item.frameworks[row.framework] = {
          score: row.score,
          by_severity: { ...Object.fromEntries(SEVERITIES.map((s) => [s, 0])), ...row.by_severity },
          by_status: { open: row.open_findings, accepted: row.accepted_findings, resolved: row.resolved_findings },
          controls: { applicable: row.applicable_controls, passing: row.passing_controls, failing: row.failing_controls, unknown: row.unknown_controls },
        };
      }
      return { ...toPage([...items.values()], Number(total), page), interval: kind, from, to };
    },

    /**
     * Findings opened, resolved and reopened on each UTC day of the range, and the mean time to
     * resolve per severity over it: read from the per-day counters (at most five rows a day).
     */
    async trend(scope: Scope, query: { from?: string | undefined; to?: string | undefined }) {
      const { from, to } = parseRange(query, deps.clock.now(), DEFAULT_TREND_DAYS);
      const days = daysBetween(from, to);
      const rows = await db
        .selectFrom('finding_daily_counts')
        .select([sql<string>`to_char(day, 'YYYY-MM-DD')`.as('day'), 'severity', 'opened', 'resolved', 'reopened', 'resolve_seconds'])
        .where(inWorkspace(scope))
        .where(inTenant(scope.tenantId))
        .where('day', '>=', days[0]!)
        .where('day', '<=', days[days.length - 1]!)
        .execute();
      const byDay = new Map(days.map((date) => [date, { date, opened: 0, resolved: 0, reopened: 0 }]));
      const totals = { opened: 0, resolved: 0, reopened: 0 };
      const mttr = new Map<string, { resolved: number; seconds: number }>(SEVERITIES.map((s) => [s, { resolved: 0, seconds: 0 }]));
      for (const row of rows) {
        const day = byDay.get(row.day)!;
        for (const k of ['opened', 'resolved', 'reopened'] as const) {
          day[k] += row[k];
          totals[k] += row[k];
        }
        const m = mttr.get(row.severity) ?? { resolved: 0, seconds: 0 };
        m.resolved += row.resolved;
        m.seconds += Number(row.resolve_seconds);
        mttr.set(row.severity, m);
      }
      return {
        from: isoDay(from),
        to: isoDay(to),
        days: [...byDay.values()],
        totals,
        mean_time_to_resolve: Object.fromEntries(
          [...mttr].map(([severity, m]) => [severity, { resolved: m.resolved, mean_seconds: m.resolved ? Math.round(m.seconds / m.resolved) : null }]),
        ),
      };
    },
  };
}
