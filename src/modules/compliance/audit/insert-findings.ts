import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import type { Scope } from '../../../platform/db/scope.js';
import { announceEvents } from '../../../platform/events/outbox.js';
import type { Rule } from '../rule-catalog.js';
import type { FindingGroupKey } from '../findings/grouping.js';
import type { AuditNode } from './evaluate.js';

/** A violation with no finding yet: the finding to create. */
export interface NewFinding {
  id: string;
  rule: Rule;
  node: AuditNode;
  group: FindingGroupKey;
}

const CHUNK = 5000;

/**
 * Creates the findings of new violations and their finding.created events in one statement per
 * chunk. Two things keep it lean, which is most of what a first audit costs:
 * - a rule's text (title, description, remediation, framework mappings: about 1 kB) is sent once
 *   per rule, not once per finding; the server joins it to the rows by the rule's position;
 * - the events are built by the server from the rows it has just inserted (RETURNING), so the
 *   finding's data is not serialised, sent and parsed a second time. The event data is the spec's
 *   finding.created shape, as `eventFinding` builds it for every other writer (a test compares the
 *   two), with the same ISO-8601 created_at text.
 */
export async function insertNewFindings(trx: Kysely<Database>, scope: Scope, now: Date, findings: NewFinding[]): Promise<void> {
  for (let i = 0; i < findings.length; i += CHUNK) await insertChunk(trx, scope, now, findings.slice(i, i + CHUNK));
  if (findings.length) await announceEvents(trx, [scope.tenantId]);
}

async function insertChunk(trx: Kysely<Database>, scope: Scope, now: Date, findings: NewFinding[]): Promise<void> {
  const rules: Rule[] = [];
  const position = new Map<string, number>();
  const ruleOf = findings.map(({ rule }) => {
    let n = position.get(rule.id);
    if (n === undefined) {
      rules.push(rule);
      n = rules.length;
      position.set(rule.id, n);
    }
    return n;
  });
  const column = <T>(pick: (f: NewFinding) => T) => findings.map(pick);
  const ruleColumn = <T>(pick: (r: Rule) => T) => rules.map(pick);
  await sql`
    WITH rule_text AS (
      SELECT * FROM unnest(
        ${ruleColumn((r) => r.id)}::text[], ${ruleColumn((r) => r.framework)}::text[], ${ruleColumn((r) => r.control_id)}::text[],
        ${ruleColumn((r) => JSON.stringify(r.framework_mappings))}::text[], ${ruleColumn((r) => r.severity)}::text[],
        ${ruleColumn((r) => r.title)}::text[], ${ruleColumn((r) => r.description)}::text[], ${ruleColumn((r) => r.remediation.summary)}::text[]
      ) WITH ORDINALITY AS r(rule_id, framework, control_id, mappings, severity, title, description, remediation, n)
    ),
    violation AS (
      SELECT * FROM unnest(
        ${column((f) => f.id)}::text[], ${ruleOf}::int[], ${column((f) => f.node.id)}::text[], ${column((f) => f.node.type)}::text[],
        ${column((f) => f.node.name)}::text[], ${column((f) => f.node.region)}::text[], ${column((f) => f.node.account_id ?? '')}::text[],
        ${column((f) => f.group.group_id)}::text[], ${column((f) => f.group.group_cause)}::text[]
      ) AS u(id, n, resource_id, resource_type, resource_name, region, account_id, group_id, group_cause)
    ),
    inserted AS (
      INSERT INTO findings (tenant_id, workspace_id, id, rule_id, framework, control_id, framework_mappings, base_severity, severity,
        status, title, description, remediation, resource_id, resource_type, resource_name, region, account_id, group_id, group_cause,
        first_seen, last_seen, created_at, updated_at)
      SELECT ${scope.tenantId}::uuid, ${scope.workspaceId}::uuid, violation.id, rule_text.rule_id, rule_text.framework, rule_text.control_id, rule_text.mappings::jsonb,
        rule_text.severity, rule_text.severity, 'open', rule_text.title, rule_text.description, rule_text.remediation,
        violation.resource_id, violation.resource_type, violation.resource_name, violation.region, violation.account_id,
        violation.group_id, violation.group_cause, ${now}, ${now}, ${now}, ${now}
      FROM violation JOIN rule_text USING (n)
      RETURNING id, rule_id, framework, control_id, severity, title, description, resource_id, resource_type, resource_name, region, remediation
    )
    INSERT INTO outbox_events (id, tenant_id, workspace_id, type, data, created_at)
    SELECT gen_random_uuid(), ${scope.tenantId}::uuid, ${scope.workspaceId}::uuid, 'finding.created',
      jsonb_build_object('finding', jsonb_build_object(
        'id', i.id, 'rule_id', i.rule_id, 'framework', i.framework, 'control_id', i.control_id, 'severity', i.severity,
        'title', i.title, 'description', i.description, 'resource_id', i.resource_id, 'resource_type', i.resource_type,
        'resource_name', i.resource_name, 'region', i.region, 'remediation', i.remediation, 'created_at', ${now.toISOString()}::text)),
      ${now}
    FROM inserted i`.execute(trx);
}
