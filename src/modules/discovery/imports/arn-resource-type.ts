import { lookupTable } from '../../../platform/lookup-table.js';

/**
 * The AWS Config resource type an ARN names, for `select-resource-config` results that were selected
 * without `resourceType` (Cloud Custodian's queries select only `resourceId, configuration,
 * supplementaryConfiguration`): the ARN in the result still says what the resource is. Only ARN forms
 * whose resource part names the type unambiguously are listed; anything else stays unknown and the
 * result is reported as missing its resource type.
 */

/** `<service>:<resource kind>` (the resource part up to its first `/` or `:`) → AWS Config type. */
const BY_KIND = lookupTable<string>({
  'ec2:instance': 'AWS::EC2::Instance',
  'ec2:security-group': 'AWS::EC2::SecurityGroup',
  'ec2:vpc': 'AWS::EC2::VPC',
  'ec2:subnet': 'AWS::EC2::Subnet',
  'ec2:volume': 'AWS::EC2::Volume',
  'ec2:network-interface': 'AWS::EC2::NetworkInterface',
  'ec2:network-acl': 'AWS::EC2::NetworkAcl',
  'ec2:launch-template': 'AWS::EC2::LaunchTemplate',
  'ec2:transit-gateway': 'AWS::EC2::TransitGateway',
  'ec2:vpn-connection': 'AWS::EC2::VPNConnection',
  'ec2:client-vpn-endpoint': 'AWS::EC2::ClientVpnEndpoint',
  'rds:db': 'AWS::RDS::DBInstance',
  'rds:cluster': 'AWS::RDS::DBCluster',
  'rds:snapshot': 'AWS::RDS::DBSnapshot',
  'rds:cluster-snapshot': 'AWS::RDS::DBClusterSnapshot',
  'ecr:repository': 'AWS::ECR::Repository',
  'iam:user': 'AWS::IAM::User',
  'iam:role': 'AWS::IAM::Role',
  'iam:group': 'AWS::IAM::Group',
  'iam:policy': 'AWS::IAM::Policy',
  'lambda:function': 'AWS::Lambda::Function',
  'kms:key': 'AWS::KMS::Key',
  'cloudtrail:trail': 'AWS::CloudTrail::Trail',
  'cloudwatch:alarm': 'AWS::CloudWatch::Alarm',
  'logs:log-group': 'AWS::Logs::LogGroup',
  'dynamodb:table': 'AWS::DynamoDB::Table',
  'eks:cluster': 'AWS::EKS::Cluster',
  'ecs:task-definition': 'AWS::ECS::TaskDefinition',
  'elasticloadbalancing:listener': 'AWS::ElasticLoadBalancingV2::Listener',
});

/** Services whose ARN resource part is the resource's bare name: one type per service. */
const BY_SERVICE = lookupTable<string>({
  sns: 'AWS::SNS::Topic',
  sqs: 'AWS::SQS::Queue',
  s3: 'AWS::S3::Bucket',
});

export function configTypeOfArn(arn: string): string | undefined {
  const parts = arn.split(':');
  if (parts.length < 6 || parts[0] !== 'arn') return undefined;
  const service = parts[2]!;
  const resource = parts.slice(5).join(':');
  const kind = /^[^/:]+/.exec(resource)?.[0] ?? '';
  if (service === 'elasticloadbalancing' && kind === 'loadbalancer') {
    // Application and network load balancers are `loadbalancer/app/…`, `…/net/…`; classic ones `loadbalancer/<name>`.
    return /^loadbalancer\/(app|net|gwy)\//.test(resource) ? 'AWS::ElasticLoadBalancingV2::LoadBalancer' : 'AWS::ElasticLoadBalancing::LoadBalancer';
  }
  if (service === 's3' && resource.includes('/')) return undefined;
  if (Object.hasOwn(BY_SERVICE, service) && !resource.includes('/')) return BY_SERVICE[service];
  return BY_KIND[`${service}:${kind}`];
}

/**
 * The resource's own ARN in a result: `arn`/`ARN`, a resource id that is an ARN, or a top-level
 * configuration member named `…Arn` (`Arn`, `TopicArn`, `dbclusterArn`). Members such as
 * `kmsKeyId` name other resources and are not looked at.
 */
export function ownArn(item: Record<string, unknown>, configuration: Record<string, unknown>): string | undefined {
  for (const value of [item.arn, item.ARN, item.resourceId]) if (typeof value === 'string' && value.startsWith('arn:')) return value;
  for (const [key, value] of Object.entries(configuration)) if (/arn$/i.test(key) && typeof value === 'string' && value.startsWith('arn:')) return value;
  return undefined;
}
