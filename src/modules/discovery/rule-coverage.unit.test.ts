import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { projectPath } from '../../platform/paths.js';
import { builtinRules } from '../compliance/index.js';
import { awsPluginConfigTypes, coverageMarkdown, ruleCoverage } from './rule-coverage.js';

/**
 * Every built-in rule must have a source for the resources it evaluates (issue 27, item 3), and
 * docs/coverage.md must be what rule-coverage.ts generates today. UPDATE_COVERAGE=1 rewrites the doc.
 */

/**
 * Rules allowed to have no source, each with the reason. Empty today: every rule's type is an AWS
 * Config type, so an AWS Config import can provide it, and the rules reading IAM's credential
 * report have the aws plugin. A rule added on a type nothing reads must be listed here, or fixed.
 */
const NO_SOURCE_YET = new Map<string, string>();

const DOC = projectPath('docs', 'coverage.md');

describe('rule coverage', () => {
  it('finds a source for every built-in rule', () => {
    const uncovered = ruleCoverage().filter((r) => r.providers.length === 0 && !NO_SOURCE_YET.has(r.rule));
    expect(uncovered, 'rules whose node type no plugin or import provides').toEqual([]);
    for (const rule of NO_SOURCE_YET.keys()) expect(ruleCoverage().find((r) => r.rule === rule)?.providers, `${rule} is covered now: remove it from NO_SOURCE_YET`).toEqual([]);
  });

  it('would notice a rule on a type nothing provides, and one reading what only the aws plugin writes', () => {
    const s3 = builtinRules().find((r) => r.id === 'aws-s3-bucket-versioning')!;
    const orphan = { ...s3, id: 'custom-orphan', resource_type: 'azure.storage.account', definition: { ...s3.definition!, config_resource_type: undefined } };
    expect(ruleCoverage([orphan])[0]!.providers).toEqual([]);
    const report = builtinRules().find((r) => r.definition?.reads.some((p) => p.startsWith('supplementaryConfiguration.CredentialReport')))!;
    expect(ruleCoverage([report])[0]).toMatchObject({ providers: ['aws plugin'], notes: [expect.stringMatching(/credential report/)] });
    // A type AWS Config does not have (the account password policy): the aws plugin alone, never an import.
    const password = builtinRules().find((r) => r.id === 'aws-iam-password-policy-minimum-length-14')!;
    expect(ruleCoverage([password])[0]).toMatchObject({
      configType: 'AWS::IAM::AccountPasswordPolicy',
      providers: ['aws plugin'],
      notes: [expect.stringMatching(/GetAccountPasswordPolicy/)],
    });
  });

  it('reads the types the aws plugin writes from its source', () => {
    const types = awsPluginConfigTypes();
    for (const t of ['AWS::EC2::SecurityGroup', 'AWS::S3::Bucket', 'AWS::IAM::User', 'AWS::RDS::DBInstance', 'AWS::Lambda::Function']) expect(types).toContain(t);
    // Also from the per-service files (aws-cloudtrail.ts, aws-kms.ts, …).
    for (const t of ['AWS::CloudTrail::Trail', 'AWS::KMS::Key', 'AWS::RDS::DBCluster', 'AWS::S3::AccountPublicAccessBlock', 'AWS::IAM::AccountPasswordPolicy'])
      expect(types).toContain(t);
    expect(awsPluginConfigTypes("add(awsNode({ configType: 'AWS::KMS::Key', nativeId: k.KeyId }))")).toEqual(['AWS::KMS::Key']);
  });

  it('has the aws plugin read every node type a built-in rule reads', () => {
    const plugin = new Set(awsPluginConfigTypes());
    const missing = builtinRules()
      .map((r) => r.definition?.config_resource_type)
      .filter((t): t is string => typeof t === 'string' && !plugin.has(t));
    expect([...new Set(missing)]).toEqual([]);
  });

  it('has docs/coverage.md up to date', () => {
    const generated = coverageMarkdown();
    if (process.env.UPDATE_COVERAGE === '1') writeFileSync(DOC, generated);
    expect(readFileSync(DOC, 'utf8'), 'docs/coverage.md is stale: regenerate it (UPDATE_COVERAGE=1, see its header)').toBe(generated);
  });
});
