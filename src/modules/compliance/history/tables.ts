import type { Json, Timestamp } from '../../../platform/db/schema.js';

/** A history point's kind: the state an audit ended with, or a day's state (migration 0028). */
export type HistoryKind = 'run' | 'day';

/** One framework's (or 'overall') state at one point (migration 0028). */
export interface ComplianceHistoryTable {
  tenant_id: string;
  workspace_id: string;
  /** A framework id, or 'overall'. */
  framework: string;
  kind: HistoryKind;
  /** run: when the audit ended; day: the day's 00:00 UTC. */
  point_at: Timestamp;
  /** When the state was measured. */
  taken_at: Timestamp;
  run_id: string | null;
  score: number;
  /** Active findings (open, not accepted) per severity, every severity present. */
  by_severity: Json<Record<string, number>>;
  open_findings: number;
  accepted_findings: number;
  resolved_findings: number;
  applicable_controls: number;
  passing_controls: number;
  failing_controls: number;
  unknown_controls: number;
}

/** Findings opened, resolved and reopened per (workspace, UTC day, severity), kept by triggers (migration 0028). */
export interface FindingDailyCountsTable {
  tenant_id: string;
  workspace_id: string;
  /** date column: read back as 'YYYY-MM-DD' (see platform/db/database.ts). */
  day: string;
  severity: string;
  opened: number;
  resolved: number;
  reopened: number;
  /** Seconds from (re)opening to resolution, summed over the day's resolutions. */
  resolve_seconds: number;
}

declare module '../../../platform/db/schema.js' {
  interface Database {
    compliance_history: ComplianceHistoryTable;
    finding_daily_counts: FindingDailyCountsTable;
    finding_reopenings: { workspace_id: string; finding_id: string; reopened_at: Timestamp };
  }
}
