import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadRuleFixtures } from '../../../../test/fixtures/rules/fixtures.js';
import { gitApply, hasTerraform } from '../../../../test/fixtures/terraform/harness.js';
import { loadBuiltinRules } from '../rules/content-loader.js';
import { terraformPatch } from './terraform-patch.js';

/**
 * Opt-in: `terraform validate` of every fixed generated file against the AWS provider's schema,
 * which catches a misspelt argument or a wrong type in a rule's fix or in a generated rendering.
 * Needs a provider mirror (no network): TF_PROVIDER_MIRROR=<dir holding registry.terraform.io/hashicorp/aws/...>.
 */
const mirror = process.env.TF_PROVIDER_MIRROR;

describe.skipIf(!mirror || !hasTerraform())('terraform validate (TF_PROVIDER_MIRROR)', () => {
  it('accepts every built-in fix applied to its generated block', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cg-tfvalidate-'));
    try {
      const fixtures = loadRuleFixtures();
      let root = 'terraform {\n  required_providers {\n    aws = { source = "hashicorp/aws" }\n  }\n}\n\nprovider "aws" {\n  region = "eu-west-1"\n}\n';
      for (const rule of loadBuiltinRules().filter((r) => r.terraform)) {
        const p = fixtures.get(rule.id)!.violating.properties;
        const patch = terraformPatch(rule, {
          id: rule.id,
          type: rule.resource_type,
          name: p.resourceName ?? p.resourceId,
          native_id: p.resourceId,
          region: p.awsRegion,
          account_id: p.accountId,
          properties: p,
          tags: fixtures.get(rule.id)!.violating.tags,
          source: null,
        })!;
        mkdirSync(join(dir, rule.id));
        writeFileSync(join(dir, rule.id, 'main.tf'), gitApply({ [patch.path]: patch.base!.content }, patch.patch, patch.path));
        root += `\nmodule "${rule.id}" {\n  source = "./${rule.id}"\n}\n`;
      }
      writeFileSync(join(dir, 'main.tf'), root);
      writeFileSync(
        join(dir, 'cli.tfrc'),
        `provider_installation {\n  filesystem_mirror {\n    path = ${JSON.stringify(mirror)}\n  }\n  direct {\n    exclude = ["registry.terraform.io/*/*"]\n  }\n}\n`,
      );
      const env = { ...process.env, TF_CLI_CONFIG_FILE: join(dir, 'cli.tfrc'), TF_IN_AUTOMATION: '1' };
      const run = (args: string[]) => spawnSync('terraform', args, { cwd: dir, env, encoding: 'utf8' });
      const init = run(['init', '-input=false', '-no-color', '-backend=false']);
      expect(init.status, init.stderr).toBe(0);
      const validate = run(['validate', '-no-color']);
      expect(validate.status, validate.stdout + validate.stderr).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
