import { describe, expect, it } from 'vitest';
import { awsNodeTypeIndex, configTypeFromNodeType, nodeTypeFromConfigType } from './aws-node-type.js';
import { propertyModel } from './property-paths.js';

describe('AWS node types', () => {
  it.each([
    ['AWS::S3::Bucket', 'aws.s3.bucket'],
    ['AWS::EC2::SecurityGroup', 'aws.ec2.security_group'],
    ['AWS::ElasticLoadBalancingV2::LoadBalancer', 'aws.elasticloadbalancingv2.load_balancer'],
    ['AWS::IAM::User', 'aws.iam.user'],
    ['AWS::EC2::VPC', 'aws.ec2.vpc'],
    ['AWS::RDS::DBInstance', 'aws.rds.db_instance'],
    ['AWS::EC2::VPCEndpointService', 'aws.ec2.vpc_endpoint_service'],
    ['AWS::EC2::EC2Fleet', 'aws.ec2.ec2_fleet'],
    ['AWS::EC2::IPAMPool', 'aws.ec2.ipam_pool'],
    ['AWS::DataSync::LocationS3', 'aws.datasync.location_s3'],
    ['AWS::Cloud9::EnvironmentEC2', 'aws.cloud9.environment_ec2'],
    ['AWS::WAFv2::WebACL', 'aws.wafv2.web_acl'],
  ])('%s is %s', (configType, nodeType) => {
    expect(nodeTypeFromConfigType(configType)).toBe(nodeType);
    expect(configTypeFromNodeType(nodeType)).toBe(configType);
  });

  it('is a bijection over every resource type of the shipped AWS Config schema and the plugin-only types of additions.json', () => {
    const types = propertyModel().resourceTypes();
    expect(types.filter((t) => propertyModel().recordedByConfig(t)).length).toBe(413);
    expect(types.filter((t) => !propertyModel().recordedByConfig(t))).toEqual(['AWS::IAM::AccountPasswordPolicy']);
    const nodeTypes = types.map(nodeTypeFromConfigType);
    expect(new Set(nodeTypes).size).toBe(types.length);
    for (const [i, nodeType] of nodeTypes.entries()) {
      expect(nodeType).toMatch(/^aws\.[a-z0-9]+\.[a-z0-9]+(_[a-z0-9]+)*$/);
      expect(configTypeFromNodeType(nodeType)).toBe(types[i]);
    }
  });

  it('answers undefined for unknown node types and rejects malformed config types', () => {
    expect(configTypeFromNodeType('aws.s3.nonexistent')).toBeUndefined();
    expect(() => nodeTypeFromConfigType('S3::Bucket')).toThrow(/not an AWS Config resource type/);
    expect(() => awsNodeTypeIndex(['AWS::X::DBThing', 'AWS::X::DbThing'])).toThrow(/both map to node type aws\.x\.db_thing/);
  });
});
