import type { AppDeps } from '../../../deps.js';
import { inWorkspace, inTenant, type Scope } from '../../../platform/db/scope.js';
import { badRequest } from '../../../platform/http/errors.js';
import { controlState } from '../controls/control-state.js';
import { allRules } from '../rule-catalog.js';
import { enabledFrameworks } from '../settings-service.js';
import { findingsScheduledToClose } from '../../poam/index.js';
import { acceptancesExpiringBetween } from '../../risk/index.js';
import { parseTime } from './range.js';

type Deps = Pick<AppDeps, 'database' | 'clock'>;

/** How far ahead a forecast may look. */
export const MAX_FORECAST_DAYS = 731;
const DAY_MS = 86_400_000;

/**
 * Each framework's score on a future date from what is already known: the state computed at that
 * date (controlState with the date as its `now`: risk acceptances and attestations whose expiry
 * has passed by then no longer apply, so their findings fail their controls again and the attested
 * controls stop passing), with the findings of POA&M items scheduled to complete before that day
 * counted as resolved. Nothing else is assumed: no new findings, no new acceptances or
 * attestations, no renewals, and items without a finding change nothing.
 */
export function createForecast(deps: Deps) {
  const db = deps.database.db;
  return async function forecast(scope: Scope, dateParam: string) {
    const now = deps.clock.now();
    const date = parseTime('date', dateParam);
    if (date <= now) throw badRequest(`date must be in the future (now is ${now.toISOString()}), got ${date.toISOString()}`);
    if (date.getTime() - now.getTime() > MAX_FORECAST_DAYS * DAY_MS) throw badRequest(`date must be at most ${MAX_FORECAST_DAYS} days ahead, got ${date.toISOString()}`);
    const [enabled, rules, closing] = await Promise.all([enabledFrameworks(db, scope.tenantId), allRules(db, scope.tenantId), findingsScheduledToClose(db, scope, date)]);
    const [current, future, acceptances, attestations] = await Promise.all([
      controlState(db, scope, enabled, rules, now),
      controlState(db, scope, enabled, rules, date, { resolvedFindings: closing }),
      acceptancesExpiringBetween(db, scope, now, date),
      db
        .selectFrom('control_attestations')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where(inTenant(scope.tenantId))
        .where(inWorkspace(scope))
        .where('status', '=', 'attested')
        .where('framework', 'in', enabled)
        .where('expires_at', '>', now)
        .where('expires_at', '<=', date)
        .executeTakeFirstOrThrow(),
    ]);
    const failingOf = (state: typeof current, framework: string) => [...state.failing].filter((key) => key.startsWith(`${framework}\u0000`)).length;
    return {
      date,
      overall_score: future.overall,
      current_overall_score: current.overall,
      by_framework: Object.fromEntries(
        enabled.map((framework) => [
          framework,
          {
            score: future.scores.get(framework) ?? 100,
            current_score: current.scores.get(framework) ?? 100,
            failing_controls: failingOf(future, framework),
            current_failing_controls: failingOf(current, framework),
          },
        ]),
      ),
      assumptions: {
        acceptances_expiring: acceptances,
        attestations_expiring: Number(attestations.n),
        poam_findings_closing: closing.length,
      },
    };
  };
}
