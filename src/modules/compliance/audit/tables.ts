/**
 * What the last audit that evaluated a node saw (migration 0031, audit/incremental.ts): an audit
 * skips a node whose input and rule-set version are both unchanged.
 */
export interface NodeAuditStateTable {
  tenant_id: string;
  workspace_id: string;
  node_id: string;
  /** The node's content_hash, combined with its neighbours over the edges its rules group by. */
  input_hash: string;
  /** The version of the rules the audit evaluated on the node's type (ruleset-version.ts). */
  ruleset_version: string;
}

/** Nodes deleted or retyped since the audits checked them (migration 0031, vanished.ts). */
export interface AuditRemovedNodesTable {
  tenant_id: string;
  workspace_id: string;
  node_id: string;
}

/** Rules whose open findings an audit has checked against the nodes ('*': the unknown evaluations). */
export interface AuditVanishedCheckedTable {
  tenant_id: string;
  workspace_id: string;
  rule_id: string;
}

declare module '../../../platform/db/schema.js' {
  interface Database {
    node_audit_state: NodeAuditStateTable;
    audit_removed_nodes: AuditRemovedNodesTable;
    audit_vanished_checked: AuditVanishedCheckedTable;
  }
}

export {};
