import type { ColumnType, Generated } from 'kysely';
import type { Json, NullableTimestamp, Timestamp } from '../../platform/db/schema.js';
import type { FrameworkMapping, GroupBy, Remediation, Severity } from './rules/rule-types.js';
import type { StoredBaseline } from './controls/stored-baseline.js';

/** A rule's last audit run in a tenant, as GET /rules/{id} shows it (`evaluation.last_run`). */
export interface RuleLastRun {
  run_id: string;
  workspace_id: string;
  at: string;
  evaluations: number;
  errors: number;
  budget_exceeded: number;
  stopped: string | null;
  error: { resource_id: string; message: string } | null;
}

/**
 * Compliance tables (migration 0003; group_by and group_cause: 0014; audit_runs.baseline: 0015;
 * finding_rows, finding_texts and the findings view: 0017; rule_evaluation_status: 0021).
 */
declare module '../../platform/db/schema.js' {
  interface Database {
    compliance_settings: { tenant_id: string; framework: string; enabled: boolean; updated_at: Timestamp };
    custom_rules: {
      tenant_id: string;
      id: string;
      title: string;
      description: string;
      /** The failure wording of its findings (migration 0026); null: generated from the title. */
      finding_title: ColumnType<string | null, string | null | undefined, string | null>;
      finding_description: ColumnType<string | null, string | null | undefined, string | null>;
      severity: Severity;
      resource_type: string;
      framework: string;
      control_id: string;
      framework_mappings: Json<FrameworkMapping[]>;
      condition: string;
      remediation: Json<Remediation>;
      /** The root cause of a violation, for finding groups (see rule-types.ts); null: none. */
      group_by: ColumnType<GroupBy | null, string | null | undefined, string | null>;
      created_by: string | null;
      created_at: Timestamp;
      updated_at: Timestamp;
    };
    /** How a rule fares in the tenant's audits (rule-status.ts). */
    rule_evaluation_status: {
      tenant_id: string;
      rule_id: string;
      state: 'active' | 'suspended';
      budget_exceeded_runs: number;
      last_run: ColumnType<RuleLastRun | null, string | null, string | null>;
      suspended_at: NullableTimestamp;
      suspended_reason: string | null;
      updated_at: Timestamp;
    };
    audit_runs: {
      id: string;
      tenant_id: string;
      workspace_id: string;
      status: 'queued' | 'running' | 'succeeded' | 'failed';
      frameworks: string[];
      pending_frameworks: string[];
      trigger: string;
      requested_by: string | null;
      stats: Json<Record<string, unknown>>;
      error: string | null;
      /** The control state the run started from (see migration 0015); set by its first attempt. */
      baseline: Json<StoredBaseline> | null;
      created_at: Timestamp;
      started_at: NullableTimestamp;
      finished_at: NullableTimestamp;
    };
    /** A view (finding_rows joined to their texts): read-only, so writing it does not type-check. */
    findings: ReadOnly<FindingsTable>;
    finding_rows: FindingRowsTable;
    finding_texts: FindingTextsTable;
    control_attestations: {
      tenant_id: string;
      workspace_id: string;
      framework: string;
      control_id: string;
      status: 'not_assessed' | 'questionnaire_assigned' | 'in_progress' | 'submitted' | 'changes_requested' | 'attested';
      assessment_id: string | null;
      attested_at: NullableTimestamp;
      expires_at: NullableTimestamp;
      updated_at: Timestamp;
    };
  }
}

export interface FindingsTable {
  tenant_id: string;
  workspace_id: string;
  id: string;
  rule_id: string;
  framework: string;
  control_id: string;
  framework_mappings: Json<FrameworkMapping[]>;
  base_severity: Severity;
  severity: Severity;
  severity_rank: Generated<number>;
  status: 'open' | 'resolved';
  title: string;
  description: string;
  remediation: string;
  resource_id: string;
  resource_type: string;
  resource_name: string;
  region: string;
  account_id: string;
  /** Columns with database defaults are optional on insert. */
  cve_ids: ColumnType<string[], string[] | undefined, string[]>;
  tags: ColumnType<string[], string[] | undefined, string[]>;
  details: ColumnType<Record<string, unknown>, string | undefined, string>;
  group_id: string;
  /** The cause the group is named by ("security group sg-123"); null: rule, account and region. */
  group_cause: ColumnType<string | null, string | null | undefined, string | null>;
  first_seen: Timestamp;
  last_seen: Timestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
  resolved_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  resolved_by: ColumnType<string | null, string | null | undefined, string | null>;
  text_id: string;
  /** Kept by triggers (migration 0027): the latest expiry of the unrevoked, unrecorded acceptances covering it. */
  accepted_until: ColumnType<Date | null, never, never>;
  /** When an open finding breaches its SLA (migration 0027; issue 23 item 5). */
  due_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** The stored 0-100 risk score (migration 0027; NULL until scored). */
  risk_score: ColumnType<number | null, number | null | undefined, number | null>;
  /** When the finding last went from resolved back to open, and how often (migration 0034); kept when resolved again. */
  reopened_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  reopen_count: ColumnType<number, number | undefined, number>;
  /** Who found it (migration 0036): 'controlgraph' for our rules and agents, else the imported tool ('prowler'). */
  source: ColumnType<string, string | undefined, string>;
  /** The tool's check id and its own id of the finding (imports only). */
  source_check_id: ColumnType<string | null, string | null | undefined, string | null>;
  source_finding_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** Where in a file an IaC or code finding is ({uri, start_line, end_line}). */
  location: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
}

/** A finding row as stored: the text columns are in finding_texts, referred to by text_id. */
export type FindingRowsTable = Omit<FindingsTable, 'title' | 'description' | 'remediation' | 'framework_mappings'>;

export interface FindingTextsTable {
  tenant_id: string;
  workspace_id: string;
  id: string;
  title: string;
  description: string;
  remediation: string;
  framework_mappings: Json<FrameworkMapping[]>;
}

type ReadOnly<T> = { [K in keyof T]: ColumnType<SelectType<T[K]>, never, never> };
type SelectType<C> = C extends ColumnType<infer S, unknown, unknown> ? S : C;

export {};
