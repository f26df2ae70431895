/**
 * The findings read model (migration 0032): counts kept by triggers on finding_rows and
 * evaluation_unknowns. Written only by those triggers (and `controlgraph check --repair`); the
 * application reads them.
 */
export interface FindingRollupTable {
  workspace_id: string;
  rule_id: string;
  framework: string;
  control_id: string;
  text_id: string;
  severity_rank: number;
  /** 'open' (active), 'accepted' (open, accepted_until set) or 'resolved'. */
  state: string;
  n: string | number;
}

export interface FindingGroupRollupTable {
  workspace_id: string;
  group_id: string;
  severity_rank: number;
  state: string;
  n: string | number;
}

export interface FindingGroupRankTable {
  workspace_id: string;
  state: string;
  group_id: string;
  /** The highest severity rank among the group's findings in the state; null when none is left. */
  top: number | null;
  findings: string | number;
}

export interface FindingGroupTotalsTable {
  workspace_id: string;
  state: string;
  groups: string | number;
}

export interface UnknownRollupTable {
  workspace_id: string;
  rule_id: string;
  framework: string;
  control_id: string;
  text_id: string;
  n: string | number;
}

export interface UnknownResourceRollupTable {
  workspace_id: string;
  resource_id: string;
  n: string | number;
}

export interface UnknownWorkspaceRollupTable {
  workspace_id: string;
  resources: string | number;
}

declare module '../../../platform/db/schema.js' {
  interface Database {
    finding_rollup: FindingRollupTable;
    finding_group_rollup: FindingGroupRollupTable;
    finding_group_rank: FindingGroupRankTable;
    finding_group_totals: FindingGroupTotalsTable;
    unknown_rollup: UnknownRollupTable;
    unknown_resource_rollup: UnknownResourceRollupTable;
    unknown_workspace_rollup: UnknownWorkspaceRollupTable;
  }
}
