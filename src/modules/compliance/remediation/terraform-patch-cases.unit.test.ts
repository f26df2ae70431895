import { describe, expect, it } from 'vitest';
import { gitApply, terraformFixture } from '../../../../test/fixtures/terraform/harness.js';
import type { NodeRecord } from '../../graph/node-repo.js';
import { loadBuiltinRules } from '../rules/content-loader.js';
import type { RuleDefinition } from '../rules/rule-types.js';
import { InvalidTerraformFixError, patchAvailable, terraformFixError, terraformPatch, type PatchNode } from './terraform-patch.js';

/** How terraformPatch chooses between the source file and the generated block, and its edge cases. */

const rules = new Map(loadBuiltinRules().map((r) => [r.id, r]));
const rule = (id: string) => rules.get(id)!;
const versioning = rule('aws-s3-bucket-versioning');
// A `set` fix on aws_db_instance (the storage-encryption fix was removed: it would replace the database).
const encrypted = rule('aws-rds-instance-deletion-protection');

const bucket = (source: PatchNode['source'] = null): PatchNode => ({
  id: 'aws:eu-west-1:aws.s3.bucket:acme-payments-data',
  type: 'aws.s3.bucket',
  name: 'acme-payments-data',
  native_id: 'acme-payments-data',
  region: 'eu-west-1',
  account_id: '123456789012',
  properties: { configuration: { name: 'acme-payments-data' }, supplementaryConfiguration: {} },
  tags: { Environment: 'production' },
  source,
});
const database = (source: PatchNode['source'] = null): PatchNode => ({
  ...bucket(source),
  id: 'aws:eu-west-1:aws.rds.db_instance:db-1',
  type: 'aws.rds.db_instance',
  name: 'orders-db',
  native_id: 'db-1',
  properties: { configuration: { dBInstanceIdentifier: 'orders-db', engine: 'postgres', storageEncrypted: false } },
});
const tf = (address: string, content?: string, file = 'main.tf') => ({ kind: 'terraform', address, file, ...(content === undefined ? {} : { content }) });
const applied = (patch: NonNullable<ReturnType<typeof terraformPatch>>, files: Record<string, string> = {}) =>
  gitApply(patch.base ? { [patch.base.path]: patch.base.content } : files, patch.patch, patch.path);

describe('terraformPatch: when there is no patch', () => {
  it('is null for a rule without a Terraform fix', () => {
    const noFix = rule('aws-s3-bucket-mfa-delete');
    expect(noFix.terraform).toBeUndefined();
    expect(terraformPatch(noFix, bucket())).toBeNull();
    expect(patchAvailable(noFix, bucket())).toBe(false);
  });

  it('is null when the node is not of the fix resource type', () => {
    expect(terraformPatch(versioning, database())).toBeNull();
    expect(terraformPatch(versioning, bucket(tf('aws_s3_bucket_acl.payments', 'resource "aws_s3_bucket_acl" "payments" {}\n')))).toBeNull();
    const regularGroup: PatchNode = { ...bucket(), type: 'aws.ec2.security_group', properties: { configuration: { groupName: 'web' } } };
    expect(terraformPatch(rule('aws-ec2-default-sg-restricts-all-traffic'), regularGroup)).toBeNull();
    expect(patchAvailable(versioning, database())).toBe(false);
  });

  it('is null when the block is not in the source and the node cannot be rendered', () => {
    const custom: RuleDefinition = { ...versioning, terraform: { resource: 'aws_custom_thing', set: { enabled: true } } };
    const node: PatchNode = { ...bucket(), type: 'aws.custom.thing' };
    expect(terraformPatch(custom, { ...node, source: tf('aws_custom_thing.x', '') })).toBeNull();
    expect(patchAvailable(custom, { ...node, source: tf('aws_custom_thing.x', '') })).toBe(false);
    // ...but a source holding the block is enough, whatever the type.
    const withBlock = { ...node, source: tf('aws_custom_thing.x', 'resource "aws_custom_thing" "x" {\n}\n') };
    expect(patchAvailable(custom, withBlock)).toBe(true);
    expect(applied(terraformPatch(custom, withBlock)!, { 'main.tf': withBlock.source.content! })).toBe('resource "aws_custom_thing" "x" {\n  enabled = true\n}\n');
  });
});

describe('terraformPatch: falling back to the generated block', () => {
  it('falls back when the source has no file text, naming the block after the address', () => {
    const patch = terraformPatch(versioning, bucket(tf('module.storage.aws_s3_bucket.payments')))!;
    expect(patch.strategy).toBe('generated');
    expect(patch.base!.path).toBe('generated/aws_s3_bucket.payments.tf');
    expect(applied(patch)).toContain('resource "aws_s3_bucket_versioning" "payments" {\n  bucket = aws_s3_bucket.payments.id\n');
  });

  it('falls back when the resource is not in the file, or the file is empty', () => {
    for (const content of [terraformFixture('ebs.tf'), '', '\n']) {
      const node = bucket(tf('aws_s3_bucket.payments', content));
      expect(patchAvailable(versioning, node)).toBe(true);
      expect(terraformPatch(versioning, node)!.strategy).toBe('generated');
    }
  });

  it('falls back when the file cannot be scanned', () => {
    const broken = terraformFixture('s3.tf').replace('bucket = aws_s3_bucket.logs.id', 'bucket = "unterminated');
    expect(terraformPatch(versioning, bucket(tf('aws_s3_bucket.payments', broken)))!.strategy).toBe('generated');
  });

  it('falls back when the file path is not a plain relative path', () => {
    const patch = terraformPatch(versioning, bucket(tf('aws_s3_bucket.payments', terraformFixture('s3.tf'), '../outside/main.tf')))!;
    expect(patch.strategy).toBe('generated');
    expect(patch.patch).not.toContain('outside');
  });

  it('ignores sources of other kinds', () => {
    const patch = terraformPatch(versioning, bucket({ kind: 'aws-config', address: 'aws_s3_bucket.payments' }))!;
    expect(patch.base!.path).toBe('generated/aws_s3_bucket.acme_payments_data.tf');
  });

  it('accepts a stored node as is', () => {
    const stored: NodeRecord = { ...bucket(), provider: 'aws', source: { kind: 'terraform', address: 'aws_s3_bucket.payments', file: 'main.tf' } };
    expect(terraformPatch(versioning, stored)!.base!.path).toBe('generated/aws_s3_bucket.payments.tf');
  });
});

describe('terraformPatch: source edge cases', () => {
  it('uses the instance for ${ref} and ${name} of a counted resource', () => {
    const content = 'resource "aws_s3_bucket" "logs" {\n  count  = 2\n  bucket = "logs-${count.index}"\n}\n';
    const patch = terraformPatch(versioning, bucket(tf('aws_s3_bucket.logs[1]', content)))!;
    expect(patch.strategy).toBe('source');
    expect(applied(patch, { 'main.tf': content })).toBe(
      `${content}\nresource "aws_s3_bucket_versioning" "logs_1" {\n  bucket = aws_s3_bucket.logs[1].id\n  versioning_configuration {\n    status = "Enabled"\n  }\n}\n`,
    );
  });

  it('replaces an attribute that already has a different multi-line value', () => {
    const exports: RuleDefinition = { ...encrypted, terraform: { resource: 'aws_db_instance', set: { enabled_cloudwatch_logs_exports: ['postgresql', 'iam-db-auth-error'] } } };
    const content = terraformFixture('rds.tf');
    const after = applied(terraformPatch(exports, database(tf('aws_db_instance.orders', content)))!, { 'main.tf': content });
    expect(after).toBe(
      content.replace('enabled_cloudwatch_logs_exports = [\n    "postgresql",\n    "upgrade",\n  ]', 'enabled_cloudwatch_logs_exports = ["postgresql", "iam-db-auth-error"]'),
    );
  });

  it('replaces a heredoc value', () => {
    const custom: RuleDefinition = { ...versioning, terraform: { resource: 'aws_s3_bucket_policy', set: { policy: '{}' } } };
    const content = terraformFixture('s3.tf');
    const after = applied(terraformPatch(custom, bucket(tf('aws_s3_bucket_policy.payments', content)))!, { 'main.tf': content });
    expect(after).toMatch(/resource "aws_s3_bucket_policy" "payments" \{\n {2}bucket = aws_s3_bucket.payments.id\n {2}policy = "\{\}"\n\}\n\nresource "aws_s3_object"/);
    expect(after.replace(/resource "aws_s3_bucket_policy"[\s\S]*?\n\}\n/, '')).toBe(content.replace(/resource "aws_s3_bucket_policy"[\s\S]*?\nEOT\n\}\n/, ''));
  });

  it('replaces an existing fix block for the same bucket instead of adding a duplicate', () => {
    const content = terraformFixture('s3.tf');
    const patch = terraformPatch(versioning, bucket(tf('aws_s3_bucket.logs', content)))!;
    const after = applied(patch, { 'main.tf': content });
    expect(after.match(/resource "aws_s3_bucket_versioning"/g)).toHaveLength(1);
    expect(after).toBe(content.replace('  versioning_configuration { status = "Enabled" }\n', '  versioning_configuration {\n    status = "Enabled"\n  }\n'));
  });

  it('returns an empty patch when the file already holds the fix', () => {
    const content = 'resource "aws_db_instance" "orders" {\n  deletion_protection = true\n}\n';
    const patch = terraformPatch(encrypted, database(tf('aws_db_instance.orders', content)))!;
    expect(patch).toEqual({ path: 'main.tf', patch: '', base: null, strategy: 'source' });
  });

  it('edits a one-line block and a CRLF file without a final line break', () => {
    const content = 'resource "aws_db_instance" "orders" {}\r\nresource "aws_db_instance" "other" {}';
    const after = applied(terraformPatch(encrypted, database(tf('aws_db_instance.orders', content)))!, { 'main.tf': content });
    expect(after).toBe('resource "aws_db_instance" "orders" {\r\n  deletion_protection = true\r\n}\r\nresource "aws_db_instance" "other" {}');
  });

  it('removes dynamic blocks of the attribute being set', () => {
    const content = [
      'resource "aws_default_security_group" "default" {',
      '  vpc_id = var.vpc_id',
      '  dynamic "ingress" {',
      '    for_each = var.rules',
      '    content {',
      '      from_port = ingress.value.port',
      '    }',
      '  }',
      '}',
      '',
    ].join('\n');
    const node: PatchNode = { ...bucket(tf('aws_default_security_group.default', content)), type: 'aws.ec2.security_group' };
    const after = applied(terraformPatch(rule('aws-ec2-default-sg-restricts-all-traffic'), node)!, { 'main.tf': content });
    expect(after).toBe('resource "aws_default_security_group" "default" {\n  vpc_id = var.vpc_id\n  ingress = []\n  egress  = []\n}\n');
  });
});

describe('terraformFixError', () => {
  it('accepts every built-in fix', () => {
    for (const r of rules.values()) if (r.terraform) expect(terraformFixError(r.terraform), r.id).toBeUndefined();
  });

  it('reports an add_block that is not blocks, and terraformPatch refuses it', () => {
    expect(terraformFixError({ resource: 'aws_s3_bucket', add_block: 'resource "x" "${name}" {\n  a = "open\n}\n' })).toMatch(/not valid HCL: unterminated string/);
    expect(terraformFixError({ resource: 'aws_s3_bucket', add_block: '# nothing\n' })).toBe('add_block holds no block');
    expect(terraformFixError({ resource: 'aws_s3_bucket', add_block: 'a = 1\n' })).toMatch(/only blocks/);
    const broken: RuleDefinition = { ...versioning, terraform: { resource: 'aws_s3_bucket', add_block: 'resource "x" "y" {' } };
    expect(() => terraformPatch(broken, bucket())).toThrow(InvalidTerraformFixError);
  });
});
