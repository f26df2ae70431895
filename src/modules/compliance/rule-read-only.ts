import type { Static } from 'typebox';
import { badRequest } from '../../platform/http/errors.js';
import type { RuleUpdate } from './schemas.js';

/** What a custom rule's read-only fields hold, as GET /rules/{id} shows them. */
export interface StoredCustomRule {
  id: string;
  created_at: Date;
  updated_at: Date;
}

const instant = (value: string | Date | null) => (value === null ? null : new Date(value).getTime());
const shown = (value: unknown) => JSON.stringify(value instanceof Date ? value.toISOString() : value);

/**
 * PUT /rules/{id} takes the representation GET returns, so a client can read a rule, change it and
 * send it back. The read-only fields in it are ignored when they hold the rule's values; another
 * value is refused (400 naming the field) rather than silently dropped, since the client asked for a
 * change we will not make. A different `updated_at` means the rule was changed since it was read:
 * refusing it keeps one client from overwriting another's change. `evaluation` is not checked: it
 * describes audits, which change it between a GET and a PUT without the client, and an update resets
 * it anyway.
 */
export function checkReadOnly(rule: StoredCustomRule, input: Static<typeof RuleUpdate>): void {
  const refuse = (field: string, expected: unknown, why: string) => {
    const given = (input as Record<string, unknown>)[field];
    throw badRequest(`${field} is read-only: ${why} (got ${shown(given)})`, { field, expected: expected instanceof Date ? expected.toISOString() : expected });
  };
  if (input.id !== undefined && input.id !== rule.id) refuse('id', rule.id, `this rule is ${shown(rule.id)}; a rule cannot be renamed`);
  if (input.builtin !== undefined && input.builtin) refuse('builtin', false, 'this is a custom rule');
  if (input.terraform_fix_available !== undefined && input.terraform_fix_available) refuse('terraform_fix_available', false, 'custom rules have no Terraform fix');
  if (input.related_mappings?.length) refuse('related_mappings', [], 'only built-in rules have related mappings; list controls a failure fails in framework_mappings');
  if (input.nist_controls?.length) refuse('nist_controls', [], 'only built-in rules cite primary NIST controls; list NIST controls in framework_mappings');
  if (input.created_at !== undefined && instant(input.created_at) !== rule.created_at.getTime()) {
    refuse('created_at', rule.created_at, `the rule was created at ${rule.created_at.toISOString()}`);
  }
  if (input.updated_at !== undefined && instant(input.updated_at) !== rule.updated_at.getTime()) {
    refuse('updated_at', rule.updated_at, `the rule was last updated at ${rule.updated_at.toISOString()}, so it changed since it was read: read it again`);
  }
}
