import { describe, expect, it } from 'vitest';
import { compileCondition } from './cel.js';
import { loadBuiltinRules } from './content-loader.js';
import { missingJudgementOf } from './missing-paths.js';
import { judge } from '../audit/judge.js';

/**
 * Fail closed (issue 22): every built-in rule says what a resource lacking the configuration it
 * reads is, on the AWS documentation of what AWS does when that setting is absent, and a bare
 * resource (a node with only `configuration.name`) gets exactly that: never an evaluation error,
 * never a pass the content did not declare.
 */

const rules = loadBuiltinRules();
const AWS_DOCS = /https:\/\/docs\.aws\.amazon\.com\/\S+/;

describe('when_missing in the built-in rules', () => {
  it.each(rules.map((r) => [r.id, r] as const))('%s declares when_missing with its source', (_id, rule) => {
    expect(rule.when_missing, 'when_missing').toMatch(/^(violation|pass|unknown)$/);
    expect(rule.when_missing_source?.trim().length ?? 0, 'when_missing_source').toBeGreaterThan(20);
    // A violation or a pass states what AWS does: it cites the AWS documentation.
    if (rule.when_missing !== 'unknown') expect(rule.when_missing_source).toMatch(AWS_DOCS);
  });

  it.each(rules.map((r) => [r.id, r] as const))('%s judges a bare resource as it declares', (_id, rule) => {
    const bare = { id: 'bare', type: rule.resource_type, name: 'bare', region: 'eu-west-1', account_id: '123456789012', properties: { configuration: { name: 'bare' } }, tags: {} };
    const result = judge(compileCondition(rule.condition), missingJudgementOf(rule), bare, Infinity);
    const expected = { violation: 'violated', pass: 'passed', unknown: 'unknown' }[rule.when_missing!];
    expect(result.outcome).toBe(expected);
    if (result.outcome === 'unknown') expect(result).toMatchObject({ reason: 'missing_configuration', detail: null });
    expect(result.missing?.length, 'the paths it lacks are named').toBeGreaterThan(0);
  });

  it('covers the three outcomes, each where AWS documents it', () => {
    const by = (outcome: string) => rules.filter((r) => r.when_missing === outcome).map((r) => r.id);
    // S3 has encrypted every bucket with SSE-S3 since January 2023: a bucket without its own configuration passes the
    // default-encryption rule and fails the KMS one.
    expect(by('pass')).toContain('aws-s3-bucket-default-encryption');
    expect(by('violation')).toEqual(expect.arrayContaining(['aws-s3-bucket-kms-encryption', 'aws-s3-bucket-versioning', 'aws-s3-bucket-public-access-block']));
    // A security group's rules are not a setting with a default: a group recorded without them cannot be judged.
    expect(by('unknown')).toContain('aws-ec2-sg-no-ssh-from-internet');
  });
});
