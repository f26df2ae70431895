import { sql } from 'kysely';
import type { AppDeps } from '../../../deps.js';
import type { Scope } from '../../../platform/db/scope.js';
import type { PageRequest } from '../../../platform/http/pagination.js';
import { toPage } from '../../../platform/http/pagination.js';
import type { Severity } from '../rules/rule-types.js';
import { acceptanceView, type FindingFilter } from './findings-repo.js';
import { SCORED_KEYS } from './findings-cursor.js';
import { cursorOf, findingsByIds, findingsTotal, pageOfKeys } from './findings-page.js';
import { scoreRows } from './rescore.js';

/**
 * Findings ranked by their stored risk score (finding_rows.risk_score, kept by rescoreFindings where
 * its inputs change): a page is read through finding_rows_risk_idx, and only the page's findings get
 * their factors computed to explain the score.
 */
export function createScoredFindings(deps: Pick<AppDeps, 'database' | 'clock'>) {
  const db = deps.database.db;
  return async function scored(scope: Scope, filter: FindingFilter, page: PageRequest, minScore = 0, cursorText?: string) {
    const list = { name: 'scored', sort: '-risk_score', keys: SCORED_KEYS };
    const cursor = cursorOf(cursorText, list);
    const now = deps.clock.now();
    const view = await acceptanceView(db, scope, now);
    const where = minScore > 0 ? [sql<boolean>`f.risk_score >= ${minScore}::smallint`] : [];
    const counted = findingsTotal(db, scope, filter, view, where);
    const { rows, next_cursor } = await pageOfKeys(db, scope, filter, view, list, page, cursor, where);
    const [total, full] = await Promise.all([
      counted,
      findingsByIds(
        db,
        scope,
        rows.map((r) => r.id),
        view,
      ),
    ]);
    const factors = await scoreRows(
      db,
      scope,
      now,
      full.map((f) => ({ id: f.id, severity: f.severity as Severity, resource_id: f.resource_id, cve_ids: f.cve_ids })),
    );
    const stored = new Map(rows.map((r) => [r.id, r.values[0] as number]));
    const items = full.map((f) => ({ ...f, risk_score: stored.get(f.id)!, risk_factors: factors.get(f.id)!.factors }));
    return { ...toPage(items, total, page), ...(cursor ? { page: null } : {}), next_cursor };
  };
}
