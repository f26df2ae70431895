import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import type { Scope } from '../../../platform/db/scope.js';
import { announceEvents } from '../../../platform/events/outbox.js';
import type { Rule } from '../rule-catalog.js';
import { ruleText, storeFindingTexts } from '../findings/finding-texts.js';
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
 * chunk. Three things keep it lean, which is most of what a first audit costs:
 * - the rows refer to their rule's text (title, description, remediation, framework mappings: about
 *   800 bytes) in finding_texts instead of carrying a copy (migration 0017);
 * - that text is sent once per rule, not once per finding; the server joins it to the rows by the
 *   rule's position, for the events;
 * - the events are built by the server from the rows it has just inserted (RETURNING), so the
 *   finding's data is not serialised, sent and parsed a second time. The event data is the spec's
 *   finding.created shape, as `eventFinding` builds it for every other writer (a test compares the
 *   two), with the same ISO-8601 created_at text;
 * - the SLA's due time is computed here, the tenant's window looked up once per rule, and the rows
 *   carry opened_at, so migration 0029's row trigger (which covers every other writer) is skipped.
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
  // Stored already when the engine stored every audited rule's text before its first batch (then
  // this finds them all and waits for no other batch); here so no row can refer to a missing text.
  const textIds = await storeFindingTexts(trx, scope, rules.map(ruleText));
  await sql`
    WITH rule_text AS (
      SELECT *, finding_sla_hours(${scope.tenantId}::uuid, r.severity) AS sla_hours FROM unnest(
        ${ruleColumn((r) => r.id)}::text[], ${ruleColumn((r) => r.framework)}::text[], ${ruleColumn((r) => r.control_id)}::text[],
        ${textIds}::text[], ${ruleColumn((r) => r.severity)}::text[],
        ${ruleColumn((r) => r.finding_title)}::text[], ${ruleColumn((r) => r.finding_description)}::text[], ${ruleColumn((r) => r.remediation.summary)}::text[]
      ) WITH ORDINALITY AS r(rule_id, framework, control_id, text_id, severity, title, description, remediation, n)
    ),
    violation AS (
      SELECT * FROM unnest(
        ${column((f) => f.id)}::text[], ${ruleOf}::int[], ${column((f) => f.node.id)}::text[], ${column((f) => f.node.type)}::text[],
        ${column((f) => f.node.name)}::text[], ${column((f) => f.node.region)}::text[], ${column((f) => f.node.account_id ?? '')}::text[],
        ${column((f) => f.group.group_id)}::text[], ${column((f) => f.group.group_cause)}::text[]
      ) AS u(id, n, resource_id, resource_type, resource_name, region, account_id, group_id, group_cause)
    ),
    inserted AS (
      INSERT INTO finding_rows (tenant_id, workspace_id, id, rule_id, framework, control_id, text_id, base_severity, severity,
        status, resource_id, resource_type, resource_name, region, account_id, group_id, group_cause,
        first_seen, last_seen, created_at, updated_at, opened_at, due_at)
      SELECT ${scope.tenantId}::uuid, ${scope.workspaceId}::uuid, violation.id, rule_text.rule_id, rule_text.framework, rule_text.control_id, rule_text.text_id,
        rule_text.severity, rule_text.severity, 'open',
        violation.resource_id, violation.resource_type, violation.resource_name, violation.region, violation.account_id,
        violation.group_id, violation.group_cause, ${now}, ${now}, ${now}, ${now},
        ${now}, ${now}::timestamptz + make_interval(hours => rule_text.sla_hours)
      FROM violation JOIN rule_text USING (n)
      RETURNING id, rule_id, severity, resource_id, resource_type, resource_name, region
    )
    INSERT INTO outbox_events (id, tenant_id, workspace_id, type, data, created_at)
    SELECT gen_random_uuid(), ${scope.tenantId}::uuid, ${scope.workspaceId}::uuid, 'finding.created',
      jsonb_build_object('finding', jsonb_build_object(
        'id', i.id, 'rule_id', r.rule_id, 'framework', r.framework, 'control_id', r.control_id, 'severity', i.severity,
        'title', r.title, 'description', r.description, 'resource_id', i.resource_id, 'resource_type', i.resource_type,
        'resource_name', i.resource_name, 'region', i.region, 'remediation', r.remediation, 'created_at', ${now.toISOString()}::text)),
      ${now}
    FROM inserted i JOIN rule_text r ON r.rule_id = i.rule_id`.execute(trx);
}
