import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import { inWorkspace, workspaceIs, inTenant, type Scope } from '../../../platform/db/scope.js';
import { activeAt, hasLiveAcceptances } from '../../risk/index.js';
import { ruleControls, type Rule } from '../rule-catalog.js';
import type { FrameworkId } from '../rules/rule-types.js';
import { unknownGroups, type ResourceFilter } from '../unknowns/unknown-controls.js';
import { hostRules } from '../../agents/index.js';
import { activeRollup, unknownRollup } from '../rollups/active-rollup.js';
import type { StoredBaseline } from './stored-baseline.js';

type AttestationRecordStatus = Database['control_attestations']['status'];

export const controlKey = (framework: string, controlId: string) => `${framework}\u0000${controlId}`;

/**
 * The controls (keys) a finding of a rule fails, and an unknown evaluation of it leaves unknown: the
 * rule's primary control and the framework mappings of its text. Findings and unknowns both go
 * through here, so they always count for the same controls.
 */
export function countedControls(row: { framework: string; control_id: string; framework_mappings: ReadonlyArray<{ framework: string; control_id: string }> }): string[] {
  return [controlKey(row.framework, row.control_id), ...row.framework_mappings.map((m) => controlKey(m.framework, m.control_id))];
}

/**
 * Findings per (framework, control) among those `where` selects from `findings f`, with the highest
 * severity rank: a finding counts for its own control and for each control it maps to. The findings
 * of one rule share their control and their text (with the mappings), so they are counted per
 * (control, text) first and only those few groups have their mappings expanded.
 */
export async function findingsByControl(db: Kysely<Database>, where: RawBuilder<boolean>) {
  const rows = await sql<{ framework: string; control_id: string; findings: number; top: number }>`
    WITH per_text AS (
      SELECT f.workspace_id, f.framework, f.control_id, f.text_id, count(*) AS findings, max(f.severity_rank) AS top
      FROM findings f
      WHERE ${where}
      GROUP BY f.workspace_id, f.framework, f.control_id, f.text_id
    )
    SELECT x.framework, x.control_id, sum(p.findings)::int AS findings, max(p.top)::int AS top
    FROM per_text p
    JOIN finding_texts t ON t.workspace_id = p.workspace_id AND t.id = p.text_id
    CROSS JOIN LATERAL (
      SELECT p.framework AS framework, p.control_id AS control_id
      UNION
      SELECT m->>'framework', m->>'control_id' FROM jsonb_array_elements(t.framework_mappings) m
    ) x
    GROUP BY x.framework, x.control_id`.execute(db);
  return rows.rows;
}

export interface ControlState {
  /** Controls that count, per framework: mapped by a rule, or covered by a questionnaire. */
  applicable: Map<FrameworkId, Set<string>>;
  /** Controls with at least one active finding (open, not accepted). */
  failing: Set<string>;
  /**
   * Controls not failing that a rule could not judge on some resource, with the number of such
   * (rule, resource) evaluations (evaluation_unknowns; unknowns/unknown-controls.ts). Not passing.
   */
  unknown: Map<string, number>;
  /** Controls attested and not expired at the moment of the computation. */
  attested: Set<string>;
  /** Controls mapped by at least one rule (checked automatically). */
  automated: Set<string>;
  /** The attestation record of each applicable control that has one (as stored: expiry not applied). */
  attestations: Map<string, { status: AttestationRecordStatus; expires_at: Date | null }>;
  scores: Map<FrameworkId, number>;
  overall: number;
}

/**
 * What an audit compares its end state with: the failing and unknown controls and the scores it
 * started from.
 */
export interface ControlBaseline extends Pick<ControlState, 'failing' | 'scores' | 'overall'> {
  unknown: ReadonlySet<string> | ReadonlyMap<string, number>;
}

const splitKey = (key: string) => key.split('\u0000') as [string, string];

export function storeBaseline(state: ControlBaseline): StoredBaseline {
  return {
    failing: [...state.failing].map(splitKey),
    unknown: [...state.unknown.keys()].map(splitKey),
    scores: Object.fromEntries(state.scores),
    overall: state.overall,
  };
}

export function loadBaseline(stored: StoredBaseline): ControlBaseline {
  return {
    failing: new Set(stored.failing.map(([framework, controlId]) => controlKey(framework, controlId))),
    unknown: new Set((stored.unknown ?? []).map(([framework, controlId]) => controlKey(framework, controlId))),
    scores: new Map(Object.entries(stored.scores) as Array<[FrameworkId, number]>),
    overall: stored.overall,
  };
}

/**
 * The (control, text) combinations of the active findings of the resources `resources` accepts: a
 * report of one asset group, which the workspace's read model does not split by resource. Few
 * distinct combinations exist however many findings there are; their texts' mappings are expanded
 * by the caller.
 */
async function failingByQuery(db: Kysely<Database>, scope: Scope, now: Date, options: ControlStateOptions) {
  const live = await hasLiveAcceptances(db, scope.workspaceId, now);
  const inScope = options.resources ? options.resources(sql.ref<string>('f.resource_id')) : sql<boolean>`true`;
  const { rows } = await sql<{ framework: string; control_id: string; framework_mappings: Array<{ framework: string; control_id: string }> }>`
    SELECT d.framework, d.control_id, t.framework_mappings
    FROM (
      SELECT DISTINCT f.framework, f.control_id, f.text_id
      FROM findings f
      WHERE ${workspaceIs(scope, 'f')} AND ${activeAt('f', now, live)} AND ${inScope} AND ${notResolvedAway(options)}
    ) d
    JOIN finding_texts t ON ${workspaceIs(scope, 't')} AND t.id = d.text_id`.execute(db);
  return rows;
}

export interface ControlStateOptions {
  /**
   * Counts only the findings and unknown evaluations of resources this predicate accepts (a report
   * of one asset group); it is given the SQL column of their resource id.
   */
  resources?: ResourceFilter;
  /**
   * Findings counted as resolved whatever their status: what a forecast (history/forecast.ts)
   * expects fixed by its date (the findings of POA&M items scheduled to close by then).
   */
  resolvedFindings?: readonly string[];
}

/** The condition on `findings f` that leaves out the findings an option counts as resolved. */
function notResolvedAway(options: ControlStateOptions): RawBuilder<boolean> {
  return options.resolvedFindings?.length ? sql<boolean>`NOT (f.id = ANY(${[...options.resolvedFindings]}::text[]))` : sql<boolean>`true`;
}

/**
 * The compliance score of the spec: (passing automated controls + attested controls) / applicable
 * controls x 100. A rule-mapped control passes while no active finding and no unknown evaluation
 * maps to it; a control passes by attestation while its attestation is current and no active
 * finding and no unknown evaluation maps to it. A failing or unknown control stays applicable, so
 * it lowers the score: an unknown counts as not passing, never as a pass.
 *
 * Applicable controls are those of every rule that is evaluated: the tenant's rules as passed (built-in
 * AWS rules and custom rules) and the host rules the agent ingest evaluates (configuration checks,
 * vulnerable packages, configuration drift), the controls a questionnaire covers, and any control an
 * active finding or an unknown evaluation maps to. A host rule's control used to fail without being
 * applicable: listed among failing controls, absent from the per-framework counts and the score.
 */
export async function controlState(db: Kysely<Database>, scope: Scope, enabled: FrameworkId[], rules: Rule[], now: Date, options: ControlStateOptions = {}): Promise<ControlState> {
  const enabledSet = new Set<string>(enabled);
  const applicable = new Map<FrameworkId, Set<string>>(enabled.map((f) => [f, new Set<string>()]));
  const automated = new Set<string>();
  for (const rule of [...rules, ...hostRules().all]) {
    for (const m of ruleControls(rule)) {
      if (!enabledSet.has(m.framework)) continue;
      applicable.get(m.framework)!.add(m.control_id);
      automated.add(controlKey(m.framework, m.control_id));
    }
  }
  const [failingRows, attestationRows, unknownRows] = await Promise.all([
    // A forecast's findings counted as resolved are not in the read model's counts: it asks the findings.
    options.resources || options.resolvedFindings?.length ? failingByQuery(db, scope, now, options) : activeRollup(db, scope, now),
    db.selectFrom('control_attestations').select(['framework', 'control_id', 'status', 'expires_at']).where(inWorkspace(scope)).where(inTenant(scope.tenantId)).execute(),
    options.resources ? unknownGroups(db, scope, options.resources) : unknownRollup(db, scope),
  ]);
  const failing = new Set<string>();
  for (const row of failingRows) for (const key of countedControls(row)) failing.add(key);
  const unknown = new Map<string, number>();
  for (const group of unknownRows) {
    for (const key of new Set(countedControls(group))) if (!failing.has(key)) unknown.set(key, (unknown.get(key) ?? 0) + group.evaluations);
  }
  // A control a finding fails or an evaluation leaves unknown is applicable and checked, whatever
  // the rules say now (a deleted custom rule's findings, a text stored before a mapping changed):
  // every failing control is in the score and in every count of failing controls.
  for (const key of [...failing, ...unknown.keys()]) {
    const [framework, controlId] = key.split('\u0000') as [string, string];
    if (!enabledSet.has(framework)) continue;
    applicable.get(framework as FrameworkId)!.add(controlId);
    automated.add(key);
  }
  const attested = new Set<string>();
  const attestations: ControlState['attestations'] = new Map();
  for (const row of attestationRows) {
    if (!enabledSet.has(row.framework)) continue;
    applicable.get(row.framework as FrameworkId)!.add(row.control_id);
    attestations.set(controlKey(row.framework, row.control_id), { status: row.status, expires_at: row.expires_at ? new Date(row.expires_at) : null });
    if (row.status === 'attested' && row.expires_at && new Date(row.expires_at) > now) attested.add(controlKey(row.framework, row.control_id));
  }
  const scores = new Map<FrameworkId, number>();
  let passingAll = 0;
  let applicableAll = 0;
  for (const [framework, controls] of applicable) {
    let passing = 0;
    for (const control of controls) {
      const key = controlKey(framework, control);
      if (!failing.has(key) && !unknown.has(key) && (automated.has(key) || attested.has(key))) passing++;
    }
    passingAll += passing;
    applicableAll += controls.size;
    scores.set(framework, controls.size === 0 ? 100 : Math.round((100 * passing) / controls.size));
  }
  const overall = applicableAll === 0 ? 100 : Math.round((100 * passingAll) / applicableAll);
  return { applicable, failing, unknown, attested, automated, attestations, scores, overall };
}
