import { describe, expect, it } from 'vitest';
import { loadPropertyModel, propertyModel } from './property-paths.js';

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

  it('fails clearly when the schema directory is missing', () => {
    expect(() => loadPropertyModel('/nonexistent')).toThrow(/AWS Config schema not found/);
  });
});
