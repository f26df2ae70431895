import type { Kysely } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import type { Scope } from '../../../platform/db/scope.js';
import type { Rule } from '../rule-catalog.js';
import type { FrameworkId } from '../rules/rule-types.js';
import { frameworks } from '../frameworks.js';
import { controlKey, controlState, type ControlState, type ControlStateOptions } from './control-state.js';
import { EXPIRING_SOON_DAYS } from './expiring-soon.js';

/** Attestation status of a control (contracts section 5). */
export const ATTESTATION_STATUSES = ['not_assessed', 'questionnaire_assigned', 'in_progress', 'submitted', 'changes_requested', 'attested'] as const;
export type AttestationStatus = (typeof ATTESTATION_STATUSES)[number];

/**
 * What the automated checks say of a control: `failing` while an active finding maps to it,
 * `unknown` while none does but a rule could not judge one of its resources (an unknown evaluation
 * maps to it: evaluation_unknowns), `passing` when a rule checks it and neither holds,
 * `not_automated` when no rule checks it (only a questionnaire can make it pass).
 */
export const AUTOMATED_STATES = ['passing', 'failing', 'unknown', 'not_automated'] as const;
export type AutomatedState = (typeof AUTOMATED_STATES)[number];

export interface ControlStatusEntry {
  framework: FrameworkId;
  control_id: string;
  title: string;
  family: string;
  automated_state: AutomatedState;
  /** (rule, resource) evaluations of the control's rules whose latest outcome is unknown; 0 when failing. */
  unknown_evaluations: number;
  attestation_status: AttestationStatus;
  /** The current attestation's end; null unless attested. */
  attestation_expires_at: Date | null;
  expiring_soon: boolean;
  /** Counts towards the score: neither failing nor unknown, and checked by a rule or attested. */
  passing: boolean;
  /** The control has an attestation record (a published questionnaire maps it): what the status counts cover. */
  attestation_recorded: boolean;
}

const EXPIRING_SOON_MS = EXPIRING_SOON_DAYS * 86_400_000;
// One collator for every comparison: localeCompare with options builds a collator per call, which
// made sorting a framework's ~1,000 controls most of /controls/status's time.
const byControlId = new Intl.Collator('en', { numeric: true }).compare;

/**
 * Every applicable control of the enabled frameworks with its automated state and attestation
 * status at `now`, ordered by framework (as enabled) and control id; and the state the scores come
 * from. /controls/status and /controls/gaps both read it, so they cannot disagree. This is the one
 * place the per-control state is computed: a stored read model can replace its body.
 *
 * An attestation whose expiry has passed reads `not_assessed` from that instant, before the
 * expiry sweeper rewrites its record.
 */
export async function controlStatuses(
  db: Kysely<Database>,
  scope: Scope,
  enabled: FrameworkId[],
  rules: Rule[],
  now: Date,
  options: ControlStateOptions = {},
): Promise<{ state: ControlState; controls: ControlStatusEntry[] }> {
  const state = await controlState(db, scope, enabled, rules, now, options);
  const soon = now.getTime() + EXPIRING_SOON_MS;
  const controls: ControlStatusEntry[] = [];
  for (const framework of enabled) {
    const catalog = frameworks().get(framework)!;
    for (const controlId of [...(state.applicable.get(framework) ?? [])].sort(byControlId)) {
      const key = controlKey(framework, controlId);
      const failing = state.failing.has(key);
      const unknown = state.unknown.get(key) ?? 0;
      const automated = state.automated.has(key);
      const attested = state.attested.has(key);
      const record = state.attestations.get(key);
      const expiresAt = attested ? record!.expires_at : null;
      const control = catalog.controls.get(controlId);
      controls.push({
        framework,
        control_id: controlId,
        title: control?.title ?? controlId,
        family: control?.family ?? '',
        automated_state: failing ? 'failing' : unknown > 0 ? 'unknown' : automated ? 'passing' : 'not_automated',
        unknown_evaluations: unknown,
        attestation_status: !record || (record.status === 'attested' && !attested) ? 'not_assessed' : record.status,
        attestation_expires_at: expiresAt,
        expiring_soon: expiresAt !== null && expiresAt.getTime() <= soon,
        passing: !failing && unknown === 0 && (automated || attested),
        attestation_recorded: record !== undefined,
      });
    }
  }
  return { state, controls };
}

/** How many of a framework's applicable controls are in each state: the counts of /controls/status and of every report. */
export interface ControlCounts {
  applicable_controls: number;
  /** Count towards the score. */
  passing_controls: number;
  /** An active finding maps to them. */
  failing_controls: number;
  /** No finding, but an unknown evaluation maps to them. */
  unknown_controls: number;
  /** Checked by no rule and not attested (a questionnaire covers them): only an attestation can make them pass. */
  not_attested_controls: number;
}

/** The counts of these controls (one framework's, for per-framework counts); they add up to applicable_controls. */
export function countControls(controls: ControlStatusEntry[]): ControlCounts {
  const counts: ControlCounts = { applicable_controls: controls.length, passing_controls: 0, failing_controls: 0, unknown_controls: 0, not_attested_controls: 0 };
  for (const c of controls) {
    if (c.automated_state === 'failing') counts.failing_controls++;
    else if (c.automated_state === 'unknown') counts.unknown_controls++;
    else if (c.passing) counts.passing_controls++;
    else counts.not_attested_controls++;
  }
  return counts;
}
