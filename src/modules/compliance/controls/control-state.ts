import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import type { Scope } from '../../../platform/db/scope.js';
import { activeAt, hasLiveAcceptances } from '../findings/accepted.js';
import { ruleControls, type Rule } from '../rule-catalog.js';
import type { FrameworkId } from '../rules/rule-types.js';

export const controlKey = (framework: string, controlId: string) => `${framework}\u0000${controlId}`;

/**
 * Within this many days of its expiry an attestation is "expiring soon" (the spec's 7-day stage:
 * "urgent alert, score shows expiring soon"), in /controls/status and /controls/attestations alike.
 */
export const EXPIRING_SOON_DAYS = 7;

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
  /** Controls attested and not expired at the moment of the computation. */
  attested: Set<string>;
  /** Controls mapped by at least one rule (checked automatically). */
  automated: Set<string>;
  scores: Map<FrameworkId, number>;
  overall: number;
}

/** What an audit compares its end state with: the failing controls and the scores it started from. */
export type ControlBaseline = Pick<ControlState, 'failing' | 'scores' | 'overall'>;

/** A baseline as stored with an audit run: JSON without the NUL that joins a control key. */
export interface StoredBaseline {
  failing: Array<[framework: string, controlId: string]>;
  scores: Record<string, number>;
  overall: number;
}

export function storeBaseline(state: ControlBaseline): StoredBaseline {
  return {
    failing: [...state.failing].map((key) => key.split('\u0000') as [string, string]),
    scores: Object.fromEntries(state.scores),
    overall: state.overall,
  };
}

export function loadBaseline(stored: StoredBaseline): ControlBaseline {
  return {
    failing: new Set(stored.failing.map(([framework, controlId]) => controlKey(framework, controlId))),
    scores: new Map(Object.entries(stored.scores) as Array<[FrameworkId, number]>),
    overall: stored.overall,
  };
}

/**
 * The compliance score of the spec: (passing automated controls + attested controls) / applicable
 * controls x 100. A rule-mapped control passes while no active finding maps to it; a control passes
 * by attestation while its attestation is current and no active finding maps to it.
 */
export async function controlState(db: Kysely<Database>, scope: Scope, enabled: FrameworkId[], rules: Rule[], now: Date): Promise<ControlState> {
  const enabledSet = new Set<string>(enabled);
  const applicable = new Map<FrameworkId, Set<string>>(enabled.map((f) => [f, new Set<string>()]));
  const automated = new Set<string>();
  for (const rule of rules) {
    for (const m of ruleControls(rule)) {
      if (!enabledSet.has(m.framework)) continue;
      applicable.get(m.framework)!.add(m.control_id);
      automated.add(controlKey(m.framework, m.control_id));
    }
  }
  const live = await hasLiveAcceptances(db, scope.workspaceId, now);
  const [failingRows, attestationRows] = await Promise.all([
    // Few distinct (control, text) combinations exist however many findings there are: take those
    // (the text only by its id), and expand their texts' mappings here.
    sql<{ framework: string; control_id: string; framework_mappings: Array<{ framework: string; control_id: string }> }>`
      SELECT d.framework, d.control_id, t.framework_mappings
      FROM (
        SELECT DISTINCT f.framework, f.control_id, f.text_id
        FROM findings f
        WHERE f.workspace_id = ${scope.workspaceId} AND ${activeAt('f', now, live)}
      ) d
      JOIN finding_texts t ON t.workspace_id = ${scope.workspaceId} AND t.id = d.text_id`.execute(db),
    db
      .selectFrom('control_attestations')
      .select(['framework', 'control_id', 'status', 'expires_at'])
      .where('workspace_id', '=', scope.workspaceId)
      .where('tenant_id', '=', scope.tenantId)
      .execute(),
  ]);
  const failing = new Set<string>();
  for (const row of failingRows.rows) {
    failing.add(controlKey(row.framework, row.control_id));
    for (const m of row.framework_mappings) failing.add(controlKey(m.framework, m.control_id));
  }
  const attested = new Set<string>();
  for (const row of attestationRows) {
    if (!enabledSet.has(row.framework)) continue;
    applicable.get(row.framework as FrameworkId)!.add(row.control_id);
    if (row.status === 'attested' && row.expires_at && new Date(row.expires_at) > now) attested.add(controlKey(row.framework, row.control_id));
  }
  const scores = new Map<FrameworkId, number>();
  let passingAll = 0;
  let applicableAll = 0;
  for (const [framework, controls] of applicable) {
    let passing = 0;
    for (const control of controls) {
      const key = controlKey(framework, control);
      if (!failing.has(key) && (automated.has(key) || attested.has(key))) passing++;
    }
    passingAll += passing;
    applicableAll += controls.size;
    scores.set(framework, controls.size === 0 ? 100 : Math.round((100 * passing) / controls.size));
  }
  const overall = applicableAll === 0 ? 100 : Math.round((100 * passingAll) / applicableAll);
  return { applicable, failing, attested, automated, scores, overall };
}
