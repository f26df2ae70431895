import { sql } from 'kysely';
import type { NewEvent } from '../../../platform/events/outbox.js';
import type { Scope } from '../../../platform/db/scope.js';

/** The finding as events carry it (the spec's finding.created data shape). */
export interface EventFinding {
  id: string;
  rule_id: string;
  framework: string;
  control_id: string;
  severity: string;
  title: string;
  description: string;
  resource_id: string;
  resource_type: string;
  resource_name: string;
  region: string;
  remediation: string;
  created_at: Date | string;
}

function iso(value: Date | string): string {
  return value instanceof Date ? value.toISOString() : new Date(value).toISOString();
}

export function eventFinding(f: EventFinding) {
  return {
    id: f.id,
    rule_id: f.rule_id,
    framework: f.framework,
    control_id: f.control_id,
    severity: f.severity,
    title: f.title,
    description: f.description,
    resource_id: f.resource_id,
    resource_type: f.resource_type,
    resource_name: f.resource_name,
    region: f.region,
    remediation: f.remediation,
    created_at: iso(f.created_at),
  };
}

export const findingCreated = (scope: Scope, f: EventFinding): NewEvent => ({
  tenantId: scope.tenantId,
  workspaceId: scope.workspaceId,
  type: 'finding.created',
  data: { finding: eventFinding(f) },
});

export const findingReopened = (scope: Scope, f: EventFinding, at: Date): NewEvent => ({
  tenantId: scope.tenantId,
  workspaceId: scope.workspaceId,
  type: 'finding.reopened',
  data: { finding: eventFinding(f), reopened_at: at.toISOString() },
});

/**
 * The columns every writer that reopens a finding sets with its finding.reopened event (migration
 * 0034): the finding's history keeps when it was last found again, and how often.
 */
export const reopening = (at: Date) => ({ reopened_at: at, reopen_count: sql<number>`reopen_count + 1` });

export const findingResolved = (scope: Scope, f: { id: string; rule_id: string; resource_id: string }, at: Date, resolvedBy: string): NewEvent => ({
  tenantId: scope.tenantId,
  workspaceId: scope.workspaceId,
  type: 'finding.resolved',
  data: { finding_id: f.id, resolved_at: at.toISOString(), rule_id: f.rule_id, resource_id: f.resource_id, resolved_by: resolvedBy },
});

export const severityChanged = (scope: Scope, f: { id: string; rule_id: string; resource_id: string }, previous: string, current: string, reason: string): NewEvent => ({
  tenantId: scope.tenantId,
  workspaceId: scope.workspaceId,
  type: 'finding.severity_changed',
  data: { finding_id: f.id, rule_id: f.rule_id, resource_id: f.resource_id, previous_severity: previous, severity: current, reason },
});
