import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { unnestInsert } from '../../../platform/db/unnest-insert.js';
import type { Database } from '../../../platform/db/schema.js';
import type { Scope } from '../../../platform/db/scope.js';
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

/** The text of a rule's findings (the audit asks once per rule and batch). */
export function ruleText(rule: Rule): FindingText {
  let text = ruleTexts.get(rule);
  if (!text) {
    text = { title: rule.title, description: rule.description, remediation: rule.remediation.summary, framework_mappings: rule.framework_mappings };
    ruleTexts.set(rule, text);
  }
  return text;
}
