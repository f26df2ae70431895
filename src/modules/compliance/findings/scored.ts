import type { AppDeps } from '../../../deps.js';
import type { Scope } from '../../../platform/db/scope.js';
import { offsetOf, toPage, type PageRequest } from '../../../platform/http/pagination.js';
import type { Severity } from '../rules/rule-types.js';
import { acceptanceView, filtered, findingSelection, type FindingFilter } from './findings-repo.js';
import { exposedResources } from './exposure.js';
import { riskScore } from './risk-score.js';

/** What other modules know about CVEs and assets; absent until they provide it. */
export interface ScoringSources {
  /** KEV membership and EPSS probability per CVE. */
  cveIntel?: (cveIds: string[]) => Promise<Map<string, { kev: boolean; epss: number | null }>>;
  /** Business-service criticality per resource id. */
  criticality?: (scope: Scope, resourceIds: string[]) => Promise<Map<string, string>>;
}

/**
 * Findings ranked by risk score. Every finding matching the filter is scored (a light row each), then
 * only the requested page is loaded in full.
 */
export function createScoredFindings(deps: Pick<AppDeps, 'database' | 'clock'>, sources: ScoringSources = {}) {
  const db = deps.database.db;
  return async function scored(scope: Scope, filter: FindingFilter, page: PageRequest, minScore = 0) {
    const now = deps.clock.now();
    const view = await acceptanceView(db, scope, now);
    const light = await filtered(db, scope, filter, view).select(['f.id', 'f.severity', 'f.resource_id', 'f.cve_ids', 'f.created_at']).execute();
    const cves = [...new Set(light.flatMap((f) => f.cve_ids))];
    const [intel, exposed, criticality] = await Promise.all([
      cves.length && sources.cveIntel ? sources.cveIntel(cves) : Promise.resolve(new Map<string, { kev: boolean; epss: number | null }>()),
      exposedResources(db, scope, now),
      sources.criticality ? sources.criticality(scope, [...new Set(light.map((f) => f.resource_id))]) : Promise.resolve(new Map<string, string>()),
    ]);
    const ranked = light
      .map((f) => {
        const known = f.cve_ids.map((c) => intel.get(c)).filter((x) => x !== undefined);
        const epssValues = known.map((k) => k.epss).filter((e): e is number => e !== null);
        const { score, factors } = riskScore({
          severity: f.severity as Severity,
          kev: known.some((k) => k.kev),
          epss: epssValues.length ? Math.max(...epssValues) : null,
          exposed: exposed.has(f.resource_id),
          criticality: criticality.get(f.resource_id) ?? null,
        });
        return { id: f.id, score, factors, created: new Date(f.created_at).getTime() };
      })
      .filter((r) => r.score >= minScore)
      .sort((a, b) => b.score - a.score || b.created - a.created || a.id.localeCompare(b.id));
    const start = offsetOf(page);
    const pageRows = ranked.slice(start, start + page.perPage);
    const full = pageRows.length
      ? await filtered(db, scope, { status: 'all', ids: pageRows.map((r) => r.id) }, view).select(findingSelection(view)).execute()
      : [];
    const byId = new Map(full.map((f) => [f.id, f]));
    const items = pageRows.map((r) => ({ ...byId.get(r.id)!, risk_score: r.score, risk_factors: r.factors }));
    return toPage(items, ranked.length, page);
  };
}

