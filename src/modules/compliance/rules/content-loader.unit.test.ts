import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { projectPath } from '../../../platform/paths.js';
import { serviceOf } from '../../../../test/fixtures/rules/fixtures.js';
import { compileCondition } from './cel.js';
import { loadBuiltinRules, RuleContentError } from './content-loader.js';
import { FRAMEWORKS } from './rule-types.js';

const SERVICES = ['cloudtrail', 'cloudwatch', 'ebs', 'ec2', 'elb', 'iam', 'iam-password-policy', 'iam-policies', 'kms', 'lambda', 'rds', 's3', 'vpc'];

describe('built-in rule content', () => {
  const rules = loadBuiltinRules();

  it('loads at least 60 rules covering the 13 services', () => {
    expect(rules.length).toBeGreaterThanOrEqual(60);
    expect([...new Set(rules.map(serviceOf))].sort()).toEqual(SERVICES);
  });

  it('has unique ids without colons, and every condition compiles', () => {
    expect(new Set(rules.map((r) => r.id)).size).toBe(rules.length);
    for (const rule of rules) {
      expect(rule.id).toMatch(/^[a-z0-9-]+$/);
      expect(() => compileCondition(rule.condition), rule.id).not.toThrow();
    }
  });

  it('numbers remediation steps and records where each rule is defined', () => {
    for (const rule of rules) {
      expect(rule.builtin).toBe(true);
      expect(rule.remediation.steps.map((s) => s.order)).toEqual(rule.remediation.steps.map((_, i) => i + 1));
      const line = readFileSync(projectPath(rule.source.file), 'utf8').split('\n')[rule.source.line - 1];
      expect(line, `${rule.source.file}:${rule.source.line}`).toBe(`  - id: ${rule.id}`);
    }
  });

  it('are all listed in the table of content/rules/README.md', () => {
    const readme = readFileSync(projectPath('content', 'rules', 'README.md'), 'utf8');
    for (const rule of rules) {
      expect(readme, rule.id).toContain(`| \`${rule.id}\` | \`${rule.resource_type}\` | ${rule.severity} | ${rule.framework} ${rule.control_id} |`);
    }
  });

  it('names the cause of rules on shared resources and of resources whose setting comes from another', () => {
    const byId = new Map(rules.map((r) => [r.id, r]));
    // A security group (network ACL, subnet, IAM role, …) is its own cause: two open groups are two groups.
    for (const rule of rules.filter((r) => r.resource_type === 'aws.ec2.security_group')) {
      expect(rule.group_by, rule.id).toEqual({ cause: 'security group', self: true });
    }
    expect(byId.get('aws-vpc-nacl-no-ssh-from-internet')!.group_by).toEqual({ cause: 'network ACL', self: true });
    // An unencrypted snapshot is so because its database is.
    expect(byId.get('aws-rds-snapshot-encrypted')!.group_by).toEqual({ cause: 'DB instance', path: 'configuration.dBInstanceIdentifier' });
    // Baseline settings have no cause of their own: account and region.
    expect(byId.get('aws-s3-bucket-versioning')!.group_by).toBeUndefined();
    expect(byId.get('aws-ebs-volume-encrypted')!.group_by).toBeUndefined();
  });

  it('keeps quoted control ids as strings and the Terraform fix shape', () => {
    const cis = rules.find((r) => r.id === 'aws-cloudtrail-multi-region')!;
    expect(cis).toMatchObject({ framework: 'cis-aws', control_id: '4.1', severity: 'HIGH', resource_type: 'aws.cloudtrail.trail' });
    expect(cis.terraform).toEqual({ resource: 'aws_cloudtrail', set: { is_multi_region_trail: true, include_global_service_events: true } });
    const s3 = rules.find((r) => r.id === 'aws-s3-bucket-default-encryption')!;
    expect(s3.terraform?.add_block).toContain('bucket = ${ref}.id');
  });
});

describe('malformed rule files', () => {
  let dir: string;
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const RULE = (overrides: Record<string, string> = {}) => {
    const fields: Record<string, string> = {
      id: 'demo-rule',
      title: 'Demo resource is configured',
      description: 'A rule used by the loader tests.',
      severity: 'HIGH',
      resource_type: 'aws.s3.bucket',
      config_resource_type: 'AWS::S3::Bucket',
      framework: 'cis-aws',
      control_id: '"3.1.4"',
      framework_mappings: '[{ framework: soc2, control_id: CC6.1 }]',
      reads: '[configuration.name]',
      when_missing: 'unknown',
      when_missing_source: 'a demo rule, nothing decides',
      condition: 'resource.properties.configuration.name == "x"',
      remediation: '{ summary: Fix it., steps: [{ action: Do it, command: aws s3api do-it }] }',
      finding_title: 'Demo resource is not configured',
      finding_description: 'The demo resource lacks its configuration.',
      nist_controls: '[{ control_id: CM-6, source: prowler }]',
      ...overrides,
    };
    return (
      '  - ' +
      Object.entries(fields)
        .filter(([, v]) => v !== '')
        .map(([k, v]) => `${k}: ${v}`)
        .join('\n    ')
    );
  };

  /** Writes files into a fresh temp dir and returns the loader's error message. */
  function loadError(files: Record<string, string>): string {
    dir = mkdtempSync(join(tmpdir(), 'rules-'));
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(join(dir, name, '..'), { recursive: true });
      writeFileSync(join(dir, name), text);
    }
    try {
      loadBuiltinRules(dir);
    } catch (err) {
      expect(err).toBeInstanceOf(RuleContentError);
      return (err as Error).message;
    }
    throw new Error('expected the load to fail');
  }

  const file = (...rules: string[]) => `service: demo\nrules:\n${rules.join('\n')}\n`;

  it('accepts a well-formed file (the baseline of the cases below)', () => {
    dir = mkdtempSync(join(tmpdir(), 'rules-'));
    writeFileSync(join(dir, 'demo.yaml'), file(RULE()));
    const [rule] = loadBuiltinRules(dir);
    expect(rule).toMatchObject({ id: 'demo-rule', control_id: '3.1.4', source: { file: join(dir, 'demo.yaml'), line: 3 } });
    expect(rule!.remediation.steps).toEqual([{ order: 1, action: 'Do it', command: 'aws s3api do-it' }]);
  });

  it('reports invalid YAML with its line', () => {
    const message = loadError({ 'aws/bad.yaml': 'service: demo\nrules:\n  - id: x\n    title: [unclosed\n    severity: HIGH\n' });
    expect(message).toMatch(/aws\/bad\.yaml:\d+: invalid YAML/);
  });

  it('reports a missing required field at the rule', () => {
    const message = loadError({ 'demo.yaml': file(RULE(), RULE({ id: 'second-rule', title: '' })) });
    expect(message).toBe(`${join(dir, 'demo.yaml')}:20: rule "second-rule": title is required`);
  });

  it('reports a bad severity at its line', () => {
    const message = loadError({ 'demo.yaml': file(RULE({ severity: 'SEVERE' })) });
    expect(message).toBe(`${join(dir, 'demo.yaml')}:6: rule "demo-rule": severity must be one of CRITICAL, HIGH, MEDIUM, LOW, INFO (got "SEVERE")`);
  });

  it('reports a condition that does not compile, with the compiler message', () => {
    const message = loadError({ 'demo.yaml': file(RULE({ condition: 'resource.properties.configuration.name ==' })) });
    expect(message).toMatch(/demo\.yaml:15: rule "demo-rule": condition does not compile: Unexpected token: EOF \(at character \d+ of the condition\)/);
    const typed = loadError({ 'demo.yaml': file(RULE({ condition: `'"a" + 1 == 2'` })) });
    expect(typed).toMatch(/demo\.yaml:15: rule "demo-rule": condition does not compile: no such overload: string \+ int/);
    const notBool = loadError({ 'demo.yaml': file(RULE({ condition: '1 + 2' })) });
    expect(notBool).toMatch(/condition does not compile: condition must evaluate to bool, not int/);
  });

  it('reports a duplicate id across files with both places', () => {
    const message = loadError({ 'a.yaml': file(RULE()), 'b.yaml': file(RULE()) });
    expect(message).toBe(`${join(dir, 'b.yaml')}:3: rule "demo-rule": duplicate rule id (first defined at ${join(dir, 'a.yaml')}:3)`);
  });

  it('reports ids with colons, unquoted numeric control ids, unknown fields, bad mappings and empty steps together', () => {
    const message = loadError({
      'demo.yaml': file(
        RULE({ id: 'demo:rule' }),
        RULE({ id: 'numeric-control', control_id: '3.10' }),
        RULE({ id: 'typo', serverity: 'HIGH' }),
        RULE({ id: 'bad-mapping', framework_mappings: '[{ framework: iso27001, control_id: A.5.1 }]' }),
        RULE({ id: 'no-steps', remediation: '{ summary: Fix it., steps: [] }' }),
        RULE({ id: 'wrong-type', resource_type: 'aws.ec2.instance' }),
      ),
    });
    expect(message).toMatch(/^6 problems in rule content:/);
    expect(message).toContain('demo.yaml:3: rule "demo:rule": id must be lower-case letters, digits and single hyphens');
    expect(message).toContain('rule "numeric-control": control_id must be a string (quote it)');
    expect(message).toContain('rule "typo": unknown field "serverity"');
    expect(message).toContain(`rule "bad-mapping": framework must be one of ${FRAMEWORKS.join(', ')} (got "iso27001")`);
    expect(message).toContain('rule "no-steps": remediation.steps must be a non-empty list');
    expect(message).toContain('rule "wrong-type": config_resource_type AWS::S3::Bucket is node type aws.s3.bucket, not aws.ec2.instance');
  });

  it('reports a finding title that repeats the title, is missing or spans lines, and bad primary NIST controls', () => {
    const message = loadError({
      'demo.yaml': file(
        RULE({ id: 'same-title', finding_title: 'demo resource is configured' }),
        RULE({ id: 'no-finding-title', finding_title: '' }),
        RULE({ id: 'no-finding-description', finding_description: '' }),
        RULE({ id: 'long-title', finding_title: 'x'.repeat(201) }),
        RULE({ id: 'no-nist', nist_controls: '' }),
        RULE({ id: 'three-nist', nist_controls: '[{ control_id: CM-6, source: prowler }, { control_id: CM-7, source: prowler }, { control_id: SC-7, source: prowler }]' }),
        RULE({ id: 'bad-nist-id', nist_controls: '[{ control_id: cis-aws-3.1.4, source: prowler }]' }),
        RULE({ id: 'bad-source', nist_controls: '[{ control_id: CM-6, source: tenable }]' }),
        RULE({ id: 'nist-primary-elsewhere', framework: 'nist-800-53', control_id: '"SC-7"', nist_controls: '[{ control_id: CM-6, source: prowler }]' }),
      ),
    });
    expect(message).toMatch(/^9 problems in rule content:/);
    expect(message).toContain('rule "same-title": finding_title must word the failure ("… is not encrypted"), not repeat the title');
    expect(message).toContain('rule "no-finding-title": finding_title is required');
    expect(message).toContain('rule "no-finding-description": finding_description is required');
    expect(message).toContain('rule "long-title": finding_title must be at most 200 characters (got 201)');
    expect(message).toContain('rule "no-nist": nist_controls is required');
    expect(message).toContain('rule "three-nist": nist_controls must list one or two {control_id, source}');
    expect(message).toContain('rule "bad-nist-id": nist_controls: "cis-aws-3.1.4" is not a NIST SP 800-53 id such as SC-28 or SC-7(5)');
    expect(message).toContain('rule "bad-source": source must be one of prowler, aws-security-hub, compliance-as-code (got "tenable")');
    expect(message).toContain('rule "nist-primary-elsewhere": the primary control nist-800-53 SC-7 must be one of nist_controls');
  });

  it('reports a terraform fix with both or neither of add_block and set', () => {
    const message = loadError({ 'demo.yaml': file(RULE({ terraform: '{ resource: aws_s3_bucket, set: { acl: private }, add_block: x }' })) });
    expect(message).toContain('terraform needs exactly one of add_block or set');
  });

  it('reads group_by in its three forms', () => {
    dir = mkdtempSync(join(tmpdir(), 'rules-'));
    writeFileSync(
      join(dir, 'demo.yaml'),
      file(
        RULE({ group_by: '{ cause: bucket, self: true }' }),
        RULE({ id: 'by-path', group_by: '{ cause: KMS key, path: configuration.kmsKeyId }' }),
        RULE({ id: 'by-edge', group_by: '{ cause: security group, edge: uses_security_group, node_type: aws.ec2.security_group }' }),
      ),
    );
    expect(loadBuiltinRules(dir).map((r) => r.group_by)).toEqual([
      { cause: 'bucket', self: true },
      { cause: 'KMS key', path: 'configuration.kmsKeyId' },
      { cause: 'security group', edge: 'uses_security_group', node_type: 'aws.ec2.security_group' },
    ]);
  });

  it('reports a group_by without exactly one source, with a bad path, edge or cause, or unknown fields', () => {
    const message = loadError({
      'demo.yaml': file(
        RULE({ id: 'none', group_by: '{ cause: bucket }' }),
        RULE({ id: 'two', group_by: '{ cause: bucket, self: true, path: configuration.name }' }),
        RULE({ id: 'bad-path', group_by: '{ cause: bucket, path: properties.configuration..name }' }),
        RULE({ id: 'bad-self', group_by: '{ cause: bucket, self: yes }' }),
        RULE({ id: 'stray-type', group_by: '{ cause: bucket, path: configuration.name, node_type: aws.s3.bucket }' }),
        RULE({ id: 'no-cause', group_by: '{ self: true }' }),
        RULE({ id: 'typo', group_by: '{ cause: bucket, self: true, edges: x }' }),
        RULE({ id: 'scalar', group_by: 'self' }),
      ),
    });
    expect(message).toMatch(/^8 problems in rule content:/);
    expect(message).toContain('rule "none": group_by needs exactly one of self, path or edge');
    expect(message).toContain('rule "two": group_by needs exactly one of self, path or edge');
    expect(message).toContain('rule "bad-path": group_by.path must be a property path in schema form');
    expect(message).toContain('rule "bad-self": group_by.self must be true');
    expect(message).toContain('rule "stray-type": group_by.node_type goes only with edge');
    expect(message).toContain('rule "no-cause": cause is required');
    expect(message).toContain('rule "typo": group_by: unknown field "edges"');
    expect(message).toContain('rule "scalar": group_by must be a mapping {cause, self | path | edge}');
  });

  it('reads when_missing with its source and optional_reads', () => {
    dir = mkdtempSync(join(tmpdir(), 'rules-'));
    writeFileSync(
      join(dir, 'demo.yaml'),
      file(
        RULE({ when_missing: 'violation', when_missing_source: 'https://docs.aws.amazon.com/AmazonS3/latest/userguide/Versioning.html (unversioned by default)' }),
        RULE({ id: 'unknown-note', when_missing: 'unknown', when_missing_source: `'always recorded: its absence means the inventory did not read it'` }),
        RULE({
          id: 'optional',
          reads: '[configuration.name, configuration.owner]',
          optional_reads: '[configuration.owner]',
          when_missing: 'unknown',
          when_missing_source: 'no default',
        }),
      ),
    );
    expect(loadBuiltinRules(dir).map((r) => [r.when_missing, r.when_missing_source, r.optional_reads])).toEqual([
      ['violation', 'https://docs.aws.amazon.com/AmazonS3/latest/userguide/Versioning.html (unversioned by default)', undefined],
      ['unknown', 'always recorded: its absence means the inventory did not read it', undefined],
      ['unknown', 'no default', ['configuration.owner']],
    ]);
  });

  it('reports when_missing without a source, a pass or violation without a URL, a bad outcome and optional_reads outside reads', () => {
    const message = loadError({
      'demo.yaml': file(
        RULE({ id: 'no-source', when_missing: 'pass', when_missing_source: '' }),
        RULE({ id: 'no-url', when_missing: 'violation', when_missing_source: 'AWS says so' }),
        RULE({ id: 'bad-outcome', when_missing: 'skip', when_missing_source: 'https://docs.aws.amazon.com/' }),
        RULE({ id: 'stray-source', when_missing: '', when_missing_source: 'https://docs.aws.amazon.com/' }),
        RULE({
          id: 'stray-optional',
          reads: '[configuration.name, configuration.creationDate]',
          optional_reads: '[configuration.owner]',
          when_missing: 'unknown',
          when_missing_source: 'n/a',
        }),
        RULE({ id: 'all-optional', optional_reads: '[configuration.name]', when_missing: 'unknown', when_missing_source: 'n/a' }),
      ),
    });
    expect(message).toMatch(/^6 problems in rule content:/);
    expect(message).toContain('rule "no-source": when_missing needs when_missing_source: the AWS documentation (an https URL) or, for unknown, a note saying why');
    expect(message).toContain('rule "no-url": when_missing: violation states what AWS does, so when_missing_source must cite its documentation (an https URL)');
    expect(message).toContain('rule "bad-outcome": when_missing must be one of violation, pass, unknown (got "skip")');
    expect(message).toContain('rule "stray-source": when_missing is required');
    expect(message).toContain('rule "stray-optional": optional_reads: "configuration.owner" is not in reads');
    expect(message).toContain('rule "all-optional": optional_reads must leave at least one path of reads required');
  });

  it('refuses a missing directory and a file without rules', () => {
    expect(() => loadBuiltinRules('/nonexistent/rules')).toThrow(/\/nonexistent\/rules:0: rule directory not found/);
    expect(loadError({ 'demo.yaml': 'service: demo\nrules: []\n' })).toMatch(/demo\.yaml:2: rules must be a non-empty list/);
  });
});
