import type { ColumnType } from 'kysely';
import type { Timestamp } from '../../../platform/db/schema.js';

/**
 * Why an evaluation's outcome is unknown (migration 0025):
 * - `missing_configuration`: a path the rule reads is absent and its content says `when_missing: unknown`;
 * - `evaluation_error`: the condition failed on the resource;
 * - `budget_exceeded`: the evaluation ran past its time budget, or its rule was stopped for the run for that;
 * - `not_collected`: a host rule needs data the agent did not collect, or no item it read decides.
 */
export const UNKNOWN_REASONS = ['missing_configuration', 'evaluation_error', 'budget_exceeded', 'not_collected'] as const;
export type UnknownReason = (typeof UNKNOWN_REASONS)[number];

export interface EvaluationUnknownsTable {
  tenant_id: string;
  workspace_id: string;
  resource_id: string;
  rule_id: string;
  resource_type: string;
  resource_name: string;
  region: string;
  account_id: string;
  /** The rule's primary control and text (its mappings), as on a finding of the rule. */
  framework: string;
  control_id: string;
  text_id: string;
  reason: UnknownReason;
  missing_paths: ColumnType<string[], string[] | undefined, string[]>;
  detail: ColumnType<string | null, string | null | undefined, string | null>;
  run_id: ColumnType<string | null, string | null | undefined, string | null>;
  first_seen: Timestamp;
  last_seen: Timestamp;
}

declare module '../../../platform/db/schema.js' {
  interface Database {
    evaluation_unknowns: EvaluationUnknownsTable;
  }
}
