import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { unnestInsert } from '../../../platform/db/unnest-insert.js';
import type { Database } from '../../../platform/db/schema.js';
import { workspaceIs, type Scope } from '../../../platform/db/scope.js';
import type { FrameworkMapping } from '../rules/rule-types.js';
import type { Rule } from '../rule-catalog.js';
import '../tables.js';

/**
 * A finding's text, stored once per workspace in finding_texts and referred to by the finding rows
 * (migration 0017): the findings of one rule share it.
 */
export interface FindingText {
  title: string;
  description: string;
  remediation: string;
  framework_mappings: FrameworkMapping[];
}

/** The id of a text: a digest of its content, so equal texts share a row and a changed text is a new one. */
export function textIdOf(text: FindingText): string {
  let id = textIds.get(text);
  if (id === undefined) {
    const content = JSON.stringify([text.title, text.description, text.remediation, text.framework_mappings]);
    id = 't' + createHash('sha256').update(content).digest('base64url').slice(0, 32);
    textIds.set(text, id);
  }
  return id;
}
const textIds = new WeakMap<FindingText, string>();

/**
 * Stores the texts a write is about to refer to (those already stored are left alone) and returns
 * their ids in order. One statement, whatever the count.
 */
export async function storeFindingTexts(trx: Kysely<Database>, scope: Scope, texts: FindingText[]): Promise<string[]> {
  const ids = texts.map(textIdOf);
  const unique = new Map<string, FindingText>();
  texts.forEach((text, i) => unique.set(ids[i]!, text));
  if (unique.size === 0) return ids;
  await unnestInsert(trx, {
    table: 'finding_texts',
    columns: { id: 'text', title: 'text', description: 'text', remediation: 'text', framework_mappings: 'jsonb' },
    constants: { tenant_id: { type: 'uuid', value: scope.tenantId }, workspace_id: { type: 'uuid', value: scope.workspaceId } },
    rows: [...unique].map(([id, t]) => ({ id, title: t.title, description: t.description, remediation: t.remediation, framework_mappings: t.framework_mappings })),
    onConflictDoNothing: ['workspace_id', 'id'],
  });
  return ids;
}

const ruleTexts = new WeakMap<Rule, FindingText>();

/**
 * The text of a rule's findings (the audit asks once per rule and batch): the rule's failure wording,
 * never its check title, and the mappings that count (rules/primary-controls.ts).
 */
export function ruleText(rule: Rule): FindingText {
  let text = ruleTexts.get(rule);
  if (!text) {
    text = { title: rule.finding_title, description: rule.finding_description, remediation: rule.remediation.summary, framework_mappings: rule.framework_mappings };
    ruleTexts.set(rule, text);
  }
  return text;
}

/**
 * Moves every finding of these rules (open or resolved) whose text is not its rule's current one to
 * the current text: a rule whose wording or counted controls changed (a new release's content, an
 * edited custom rule) shows the new text from the next audit on, not only on findings created after
 * it. The texts must be stored already. One statement over the findings of the rules (an index on
 * workspace and rule); `updated_at` is left alone, since the finding's state did not change.
 */
export async function retextFindings(db: Kysely<Database>, scope: Scope, rules: Rule[]): Promise<number> {
  if (rules.length === 0) return 0;
  const result = await sql`
    UPDATE finding_rows AS f SET text_id = v.text_id
    FROM unnest(${rules.map((r) => r.id)}::text[], ${rules.map((r) => textIdOf(ruleText(r)))}::text[]) AS v(rule_id, text_id)
    WHERE ${workspaceIs(scope, 'f')} AND f.rule_id = v.rule_id AND f.text_id <> v.text_id`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}
