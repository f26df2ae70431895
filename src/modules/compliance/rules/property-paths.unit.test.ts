import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectPath } from '../../../platform/paths.js';
import { defaultSchemaDir, loadPropertyModel, propertyModel } from './property-paths.js';

/** The shipped schema without additions.json: the copied files alone. */
function mkdtempCopyWithoutAdditions(): string {
  const dir = mkdtempSync(join(tmpdir(), 'cg-schema-'));
  cpSync(join(defaultSchemaDir(), 'resource-types'), join(dir, 'resource-types'), { recursive: true });
  return dir;
}

describe('AWS property model', () => {
  const model = propertyModel();

  it('knows leaf paths, the objects and lists on the way to them, and their types', () => {
    expect(model.hasPath('AWS::EC2::SecurityGroup', 'configuration.ipPermissions.ipv4Ranges.cidrIp')).toBe(true);
    expect(model.hasPath('AWS::EC2::SecurityGroup', 'configuration.ipPermissions')).toBe(true);
    expect(model.typeOf('AWS::EC2::SecurityGroup', 'configuration.ipPermissions.fromPort')).toBe('integer');
    expect(model.typeOf('AWS::EC2::SecurityGroup', 'configuration.ipPermissions')).toBe('object');
    expect(model.hasPath('AWS::EC2::SecurityGroup', 'configuration.ipPermissions.port')).toBe(false);
    expect(model.hasPath('AWS::EC2::SecurityGroup', 'configuration.ipPermissions.ipv4')).toBe(false);
  });

  it('keeps types apart and treats unknown types as having no paths', () => {
    expect(model.hasPath('AWS::S3::Bucket', 'supplementaryConfiguration.PublicAccessBlockConfiguration.blockPublicAcls')).toBe(true);
    expect(model.hasPath('AWS::S3::Bucket', 'configuration.ipPermissions')).toBe(false);
    expect(model.hasResourceType('AWS::Nope::Thing')).toBe(false);
    expect(model.paths('AWS::Nope::Thing').size).toBe(0);
  });

  it('adds the paths of additions.json (IAM policy documents, the credential report) to the copied schema, never one it already has', () => {
    expect(model.typeOf('AWS::IAM::Role', 'configuration.assumeRolePolicyDocument')).toBe('string');
    expect(model.hasPath('AWS::IAM::Role', 'configuration.rolePolicyList.policyDocument')).toBe(true);
    expect(model.typeOf('AWS::IAM::User', 'supplementaryConfiguration.CredentialReport.accessKeys')).toBe('object');
    expect(model.hasPath('AWS::IAM::Group', 'configuration.assumeRolePolicyDocument')).toBe(false);
    const additions = JSON.parse(readFileSync(projectPath('content', 'aws-config-schema', 'additions.json'), 'utf8')) as Record<string, Record<string, string>>;
    const dir = mkdtempCopyWithoutAdditions();
    try {
      const copied = loadPropertyModel(dir);
      for (const [type, paths] of Object.entries(additions)) {
        expect(model.hasResourceType(type), type).toBe(true);
        for (const path of Object.keys(paths)) expect(copied.hasPath(type, path), `${type} ${path} is already in the copied schema`).toBe(false);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fails clearly when the schema directory is missing', () => {
    expect(() => loadPropertyModel('/nonexistent')).toThrow(/AWS Config schema not found/);
  });
});
