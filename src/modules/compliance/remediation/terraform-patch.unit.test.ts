import { describe, expect, it } from 'vitest';
import { loadRuleFixtures } from '../../../../test/fixtures/rules/fixtures.js';
import { gitApply, hasTerraform, terraformFixture, terraformFmtAll } from '../../../../test/fixtures/terraform/harness.js';
import { loadBuiltinRules } from '../rules/content-loader.js';
import type { RuleDefinition } from '../rules/rule-types.js';
import { findResource, type HclItem } from './hcl-blocks.js';
import { renderValue } from './hcl-values.js';
import { terraformPatch, patchAvailable, type PatchNode } from './terraform-patch.js';

/**
 * Every built-in rule with a Terraform fix, patched for real: the patch is applied with `git apply`
 * to a realistic source file (in several layouts) and to the generated block, and the result must
 * hold the fix with every other byte unchanged.
 */

const rules = loadBuiltinRules();
const fixable = rules.filter((r) => r.terraform);
const fixtures = loadRuleFixtures();

/** The fixture file and block standing for each Terraform type a fix targets. */
const SOURCES: Record<string, { file: string; name: string }> = {
  aws_s3_bucket: { file: 's3.tf', name: 'payments' },
  aws_s3_account_public_access_block: { file: 'account.tf', name: 'this' },
  aws_iam_account_password_policy: { file: 'account.tf', name: 'this' },
  aws_cloudtrail: { file: 'cloudtrail.tf', name: 'org' },
  aws_ebs_volume: { file: 'ebs.tf', name: 'data' },
  aws_default_security_group: { file: 'default-sg.tf', name: 'default' },
  aws_instance: { file: 'instance.tf', name: 'app' },
  aws_lb_listener: { file: 'lb-listener.tf', name: 'https' },
  aws_kms_key: { file: 'kms.tf', name: 'payments' },
  aws_db_instance: { file: 'rds.tf', name: 'orders' },
  aws_rds_cluster: { file: 'rds.tf', name: 'ledger' },
  aws_subnet: { file: 'network.tf', name: 'public_a' },
  aws_ec2_transit_gateway: { file: 'network.tf', name: 'hub' },
};

interface Layout {
  label: string;
  file: string;
  module: string;
  content: (text: string, type: string, name: string) => string;
}
const LAYOUTS: Layout[] = [
  { label: 'LF', file: 'main.tf', module: '', content: (t) => t },
  { label: 'CRLF', file: 'main.tf', module: '', content: (t) => t.replace(/\n/g, '\r\n') },
  {
    label: 'block last, no final line break',
    file: 'main.tf',
    module: '',
    content: (t, type, name) => t.slice(0, findResource(t, type, name)!.end),
  },
  {
    label: 'module-qualified address, CRLF, no final line break',
    file: 'modules/platform/main.tf',
    module: 'module.platform["eu-west-1"].',
    content: (t) => t.replace(/\n/g, '\r\n').replace(/\r\n$/, ''),
  },
];

let verified = 0;
// Checked with one `terraform fmt` run at the end: every patched file must parse, every generated file be in fmt layout.
const patched: Record<string, string> = {};
const generated: Record<string, string> = {};

function fixtureNode(rule: RuleDefinition, source: PatchNode['source'] = null): PatchNode {
  const fixture = fixtures.get(rule.id);
  if (!fixture) throw new Error(`no rule fixture for ${rule.id}`);
  const p = fixture.violating.properties;
  return {
    id: `aws:${p.awsRegion}:${rule.resource_type}:${p.resourceId}`,
    type: rule.resource_type,
    name: p.resourceName ?? p.resourceId,
    native_id: p.resourceId,
    region: p.awsRegion,
    account_id: p.accountId,
    properties: p,
    tags: fixture.violating.tags,
    source,
  };
}

const eolOf = (text: string) => (text.includes('\r\n') ? '\r\n' : '\n');
const itemText = (text: string, item: HclItem) => text.slice(item.start, item.end);

/** The lines of a block other than comments and the items a `set` rewrites, in order. */
function untouchedLines(text: string, block: HclItem, keys: string[]): string[] {
  const rewritten = block.items.filter((i) => keys.includes(i.name));
  const out: string[] = [];
  let at = block.lineStart;
  for (const line of text.slice(block.lineStart, block.lineEnd).split(/(?<=\n)/)) {
    const inRewritten = rewritten.some((i) => at >= i.lineStart && at < i.lineEnd);
    if (!inRewritten && !/^\s*(#|\/\/)/.test(line)) out.push(line.replace(/\r?\n$/, ''));
    at += line.length;
  }
  return out;
}

/** Checks that `after` is `before` with the rule's fix applied to the block, and nothing else changed. */
function expectFixed(rule: RuleDefinition, before: string, after: string, type: string, name: string, nameVar: string, ref: string) {
  const fix = rule.terraform!;
  const old = findResource(before, type, name)!;
  const now = findResource(after, type, name);
  expect(now, 'the resource block is still there').toBeDefined();
  expect(after.startsWith(before.slice(0, old.lineStart)), 'the text before the block is unchanged').toBe(true);
  if (fix.set) {
    expect(after.slice(now!.lineEnd), 'the text after the block is unchanged').toBe(before.slice(old.lineEnd));
    for (const [key, value] of Object.entries(fix.set)) {
      const items = now!.items.filter((i) => i.name === key);
      expect(items.map((i) => itemText(after, i).replace(/ +=/, ' ='))).toEqual([`${key} = ${renderValue(value)}`]);
    }
    const keys = Object.keys(fix.set);
    expect(untouchedLines(after, now!, keys), 'the other lines of the block are unchanged').toEqual(untouchedLines(before, old, keys));
  } else {
    const eol = eolOf(before);
    const snippet = fix.add_block!.split('${name}').join(nameVar).split('${ref}').join(ref).replace(/\n/g, eol);
    expect(after.slice(now!.lineStart, now!.end), 'the block itself is unchanged').toBe(before.slice(old.lineStart, old.end));
    const tail = before.slice(old.lineEnd);
    expect(after.endsWith(tail), 'the text after the block is unchanged').toBe(true);
    const inserted = after.slice(now!.end, after.length - tail.length);
    expect(inserted.trim(), 'the fix block follows the resource').toBe(snippet.trim());
    expect(inserted.startsWith(eol + eol), 'a blank line separates the blocks').toBe(true);
  }
}

describe('terraformPatch on every built-in rule with a Terraform fix', () => {
  it('covers the fixable rules with source fixtures', () => {
    expect(fixable.length).toBeGreaterThanOrEqual(25);
    for (const rule of fixable) expect(SOURCES[rule.terraform!.resource], rule.id).toBeDefined();
  });

  for (const rule of fixable) {
    describe(rule.id, () => {
      const type = rule.terraform!.resource;
      const { file: fixtureFile, name } = SOURCES[type]!;

      for (const layout of LAYOUTS) {
        it(`patches the source file (${layout.label})`, () => {
          const content = layout.content(terraformFixture(fixtureFile), type, name);
          const node = fixtureNode(rule, { kind: 'terraform', address: `${layout.module}${type}.${name}`, file: layout.file, content });
          expect(patchAvailable(rule, node)).toBe(true);
          const patch = terraformPatch(rule, node)!;
          expect(patch).toMatchObject({ path: layout.file, base: null, strategy: 'source' });
          expect(patch.patch.startsWith(`--- a/${layout.file}\n+++ b/${layout.file}\n@@ `)).toBe(true);
          const after = gitApply({ [layout.file]: content }, patch.patch, layout.file);
          expectFixed(rule, content, after, type, name, name, `${type}.${name}`);
          patched[`${rule.id}/${layout.label.replace(/\W+/g, '-')}.tf`] = after;
          verified++;
        });
      }

      it('patches the generated block when the node has no Terraform source', () => {
        const node = fixtureNode(rule);
        expect(patchAvailable(rule, node)).toBe(true);
        const patch = terraformPatch(rule, node)!;
        expect(patch.strategy).toBe('generated');
        expect(patch.base!.path).toMatch(new RegExp(`^generated/${type}\\.[a-z][a-z0-9_]*\\.tf$`));
        expect(patch.path).toBe(patch.base!.path);
        const generatedName = patch.base!.path.split('.').at(-2)!;
        const base = patch.base!.content;
        expect(base).toContain(`resource "${type}" "${generatedName}" {\n`);
        const after = gitApply({ [patch.path]: base }, patch.patch, patch.path);
        expectFixed(rule, base, after, type, generatedName, generatedName, `${type}.${generatedName}`);
        generated[`${rule.id}.tf`] = base;
        patched[`${rule.id}/generated.tf`] = after;
        verified++;
      });
    });
  }

  it('applied every patch with git apply', () => {
    // 25 fixable rules x (4 source layouts + the generated block) = 125 at the time of writing.
    expect(verified).toBe(fixable.length * (LAYOUTS.length + 1));
  });

  it.skipIf(!hasTerraform())('produces files terraform can parse, and generated files in fmt layout', () => {
    expect(Object.keys(patched)).toHaveLength(verified);
    expect(terraformFmtAll(patched).error).toBeUndefined();
    expect(terraformFmtAll(generated)).toEqual({ error: undefined, unformatted: [] });
  });
});
