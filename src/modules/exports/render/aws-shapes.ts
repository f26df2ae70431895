import { lookupTable } from '../../../platform/lookup-table.js';

/**
 * How each node type is drawn: the shape of draw.io's AWS library (`mxgraph.aws4.*`, the 2019+ AWS
 * Architecture Icons) and its category colour, a readable type name, and the short text the PNG's
 * own icon tile carries. The shape names and colours are those of draw.io's AWS sidebar
 * (jgraph/drawio src/main/webapp/js/diagramly/sidebar/Sidebar-AWS4.js): a resource shape is a glyph
 * in the category colour; a service shape (`tile`) is the white glyph on a square of that colour
 * (draw.io's `mxgraph.aws4.resourceIcon` with `resIcon`). `w` and `h` are the shape's proportions
 * in the sidebar, so the icon is not stretched.
 */
export interface AwsShape {
  glyph: string;
  tile: boolean;
  color: string;
  label: string;
  abbr: string;
  w: number;
  h: number;
}

/** The AWS Architecture Icons' category colours, as draw.io's sidebar uses them. */
export const AWS_COLOR = {
  compute: '#ED7100',
  network: '#8C4FFF',
  storage: '#7AA116',
  database: '#C925D1',
  security: '#DD344C',
  integration: '#E7157B',
  management: '#E7157B',
  analytics: '#8C4FFF',
  general: '#232F3D',
} as const;

type Color = keyof typeof AWS_COLOR;

const glyph = (name: string, color: Color, label: string, abbr: string, w = 78, h = 78): AwsShape => ({ glyph: name, tile: false, color: AWS_COLOR[color], label, abbr, w, h });
const tile = (name: string, color: Color, label: string, abbr: string): AwsShape => ({ glyph: name, tile: true, color: AWS_COLOR[color], label, abbr, w: 78, h: 78 });

/** By `<service>.<kind>` of an `aws.<service>.<kind>` node type. */
const AWS_TYPES: Record<string, AwsShape> = lookupTable({
  // Compute and containers
  'ec2.instance': glyph('instance2', 'compute', 'EC2 instance', 'EC2', 48, 48),
  'ec2.launch_template': tile('ec2', 'compute', 'Launch template', 'LT'),
  'ec2.eip': glyph('elastic_ip_address', 'compute', 'Elastic IP', 'EIP', 48, 20),
  'ec2.key_pair': glyph('long_term_security_credential', 'security', 'Key pair', 'KEY', 78, 69),
  'lambda.function': glyph('lambda_function', 'compute', 'Lambda function', 'λ', 48, 48),
  'autoscaling.auto_scaling_group': glyph('auto_scaling2', 'compute', 'Auto Scaling group', 'ASG', 48, 48),
  'ecs.cluster': tile('ecs', 'compute', 'ECS cluster', 'ECS'),
  'ecs.service': glyph('ecs_service', 'compute', 'ECS service', 'SVC', 39, 48),
  'ecs.task_definition': glyph('ecs_task', 'compute', 'ECS task definition', 'TASK', 37, 48),
  'eks.cluster': tile('eks', 'compute', 'EKS cluster', 'EKS'),
  'ecr.repository': glyph('registry', 'compute', 'ECR repository', 'ECR', 48, 48),
  'elasticbeanstalk.environment': tile('elastic_beanstalk', 'compute', 'Beanstalk environment', 'EB'),
  'batch.compute_environment': tile('batch', 'compute', 'Batch environment', 'BAT'),
  // Networking and content delivery
  'ec2.network_interface': glyph('elastic_network_interface', 'network', 'Network interface', 'ENI'),
  'ec2.internet_gateway': glyph('internet_gateway', 'network', 'Internet gateway', 'IGW'),
  'ec2.egress_only_internet_gateway': glyph('internet_gateway', 'network', 'Egress-only IGW', 'EIGW'),
  'ec2.nat_gateway': glyph('nat_gateway', 'network', 'NAT gateway', 'NAT'),
  'ec2.route_table': glyph('route_table', 'network', 'Route table', 'RT', 78, 76),
  'ec2.network_acl': glyph('network_access_control_list', 'network', 'Network ACL', 'ACL'),
  'ec2.vpc_endpoint': glyph('endpoints', 'network', 'VPC endpoint', 'VPCE'),
  'ec2.vpc_endpoint_service': glyph('endpoints', 'network', 'Endpoint service', 'VPCE'),
  'ec2.vpc_peering_connection': glyph('peering', 'network', 'VPC peering', 'PCX'),
  'ec2.vpn_gateway': glyph('vpn_gateway', 'network', 'VPN gateway', 'VGW'),
  'ec2.customer_gateway': glyph('customer_gateway', 'network', 'Customer gateway', 'CGW'),
  'ec2.vpn_connection': glyph('vpn_connection', 'network', 'VPN connection', 'VPN', 70, 78),
  'ec2.transit_gateway': tile('transit_gateway', 'network', 'Transit gateway', 'TGW'),
  'ec2.transit_gateway_attachment': glyph('transit_gateway_attachment', 'network', 'TGW attachment', 'TGWA'),
  'ec2.flow_log': glyph('flow_logs', 'network', 'Flow log', 'FLOW'),
  'ec2.vpc': tile('vpc', 'network', 'VPC', 'VPC'),
  'ec2.subnet': tile('vpc', 'network', 'Subnet', 'SUB'),
  'elasticloadbalancing.load_balancer': glyph('classic_load_balancer', 'network', 'Classic Load Balancer', 'CLB'),
  'elasticloadbalancingv2.load_balancer': tile('elastic_load_balancing', 'network', 'Load balancer', 'ELB'),
  'elasticloadbalancingv2.listener': tile('elastic_load_balancing', 'network', 'Listener', 'LSN'),
  'elasticloadbalancingv2.target_group': tile('elastic_load_balancing', 'network', 'Target group', 'TG'),
  'cloudfront.distribution': tile('cloudfront', 'network', 'CloudFront distribution', 'CF'),
  'route53.hosted_zone': glyph('hosted_zone', 'network', 'Hosted zone', 'R53', 78, 77),
  'apigateway.rest_api': tile('api_gateway', 'network', 'API Gateway API', 'API'),
  'apigatewayv2.api': tile('api_gateway', 'network', 'API Gateway API', 'API'),
  'globalaccelerator.accelerator': tile('global_accelerator', 'network', 'Global Accelerator', 'GA'),
  'networkfirewall.firewall': tile('network_firewall', 'security', 'Network Firewall', 'NFW'),
  // Storage
  's3.bucket': glyph('bucket', 'storage', 'S3 bucket', 'S3', 75, 78),
  's3.account_public_access_block': tile('s3', 'storage', 'S3 account settings', 'S3'),
  'ec2.volume': glyph('volume', 'storage', 'EBS volume', 'EBS', 62, 78),
  'ec2.snapshot': glyph('snapshot', 'storage', 'EBS snapshot', 'SNAP', 56, 78),
  'efs.file_system': tile('elastic_file_system', 'storage', 'EFS file system', 'EFS'),
  'fsx.file_system': tile('fsx', 'storage', 'FSx file system', 'FSX'),
  'backup.backup_vault': glyph('backup_vault', 'storage', 'Backup vault', 'BKP'),
  'backup.backup_plan': glyph('backup_plan', 'storage', 'Backup plan', 'BKP', 60, 78),
  'glacier.vault': glyph('vault', 'storage', 'Glacier vault', 'GLA', 62, 78),
  // Database
  'rds.db_instance': glyph('rds_instance', 'database', 'RDS DB instance', 'RDS'),
  'rds.db_cluster': glyph('aurora_instance', 'database', 'RDS DB cluster', 'RDS'),
  'rds.db_snapshot': tile('rds', 'database', 'RDS snapshot', 'SNAP'),
  'rds.db_cluster_snapshot': tile('rds', 'database', 'RDS cluster snapshot', 'SNAP'),
  'rds.db_subnet_group': tile('rds', 'database', 'DB subnet group', 'DSG'),
  'dynamodb.table': glyph('table', 'database', 'DynamoDB table', 'DDB'),
  'elasticache.cache_cluster': glyph('cache_node', 'database', 'ElastiCache cluster', 'EC'),
  'elasticache.replication_group': glyph('cache_node', 'database', 'ElastiCache group', 'EC'),
  'redshift.cluster': tile('redshift', 'analytics', 'Redshift cluster', 'RS'),
  'docdb.db_cluster': tile('documentdb_with_mongodb_compatibility', 'database', 'DocumentDB cluster', 'DOC'),
  'neptune.db_cluster': tile('neptune', 'database', 'Neptune cluster', 'NEP'),
  'opensearch.domain': tile('elasticsearch_service', 'analytics', 'OpenSearch domain', 'OS'),
  'elasticsearch.domain': tile('elasticsearch_service', 'analytics', 'OpenSearch domain', 'OS'),
  'es.domain': tile('elasticsearch_service', 'analytics', 'OpenSearch domain', 'OS'),
  // Security, identity and compliance
  'ec2.security_group': glyph('generic_firewall', 'security', 'Security group', 'SG', 78, 66),
  'iam.role': glyph('role', 'security', 'IAM role', 'ROLE', 78, 44),
  'iam.user': glyph('user', 'security', 'IAM user', 'USER'),
  'iam.group': glyph('users', 'security', 'IAM group', 'GRP'),
  'iam.policy': glyph('permissions', 'security', 'IAM policy', 'POL', 62, 78),
  'iam.instance_profile': glyph('role', 'security', 'Instance profile', 'PROF', 78, 44),
  'iam.access_key': glyph('long_term_security_credential', 'security', 'Access key', 'KEY', 78, 69),
  'iam.saml_provider': glyph('long_term_security_credential', 'security', 'SAML provider', 'SAML', 78, 69),
  'iam.oidc_provider': glyph('long_term_security_credential', 'security', 'OIDC provider', 'OIDC', 78, 69),
  'iam.account_password_policy': tile('identity_and_access_management', 'security', 'IAM password policy', 'PWD'),
  'kms.key': glyph('data_encryption_key', 'security', 'KMS key', 'KMS', 62, 78),
  'secretsmanager.secret': tile('secrets_manager', 'security', 'Secret', 'SEC'),
  'acm.certificate': glyph('certificate_manager_2', 'security', 'ACM certificate', 'ACM', 78, 72),
  'wafv2.web_acl': tile('waf', 'security', 'WAF web ACL', 'WAF'),
  'waf.web_acl': tile('waf', 'security', 'WAF web ACL', 'WAF'),
  'guardduty.detector': tile('guardduty', 'security', 'GuardDuty detector', 'GD'),
  'securityhub.hub': tile('security_hub', 'security', 'Security Hub', 'SH'),
  'accessanalyzer.analyzer': glyph('access_analyzer', 'security', 'Access Analyzer', 'AA', 78, 77),
  'cognito.user_pool': tile('cognito', 'security', 'Cognito user pool', 'COG'),
  // Application integration
  'sqs.queue': glyph('queue', 'integration', 'SQS queue', 'SQS', 78, 47),
  'sns.topic': glyph('topic', 'integration', 'SNS topic', 'SNS', 78, 67),
  'events.rule': glyph('rule_3', 'integration', 'EventBridge rule', 'EVT', 78, 68),
  'events.event_bus': glyph('eventbridge_custom_event_bus_resource', 'integration', 'Event bus', 'BUS', 78, 69),
  'stepfunctions.state_machine': tile('step_functions', 'integration', 'State machine', 'SFN'),
  'kinesis.stream': tile('kinesis_data_streams', 'analytics', 'Kinesis stream', 'KIN'),
  'msk.cluster': tile('managed_streaming_for_kafka', 'analytics', 'MSK cluster', 'MSK'),
  'mq.broker': glyph('mq_broker', 'integration', 'MQ broker', 'MQ', 78, 69),
  // Management and governance
  'cloudtrail.trail': tile('cloudtrail', 'management', 'CloudTrail trail', 'CT'),
  'cloudwatch.alarm': glyph('alarm', 'management', 'CloudWatch alarm', 'ALM'),
  'logs.log_group': glyph('cloudwatch_logs', 'management', 'Log group', 'LOG', 78, 58),
  'config.config_rule': tile('config', 'management', 'Config rule', 'CFG'),
  'config.configuration_recorder': tile('config', 'management', 'Config recorder', 'CFG'),
  'ssm.parameter': glyph('parameter_store', 'management', 'SSM parameter', 'PRM', 75, 78),
  'ssm.document': glyph('documents', 'management', 'SSM document', 'DOC', 64, 78),
  'cloudformation.stack': glyph('stack', 'management', 'CloudFormation stack', 'CFN', 78, 76),
  'organizations.account': glyph('organizations_account', 'management', 'Organizations account', 'ACCT', 74, 78),
});

const LOAD_BALANCERS_V2: Record<string, AwsShape> = lookupTable({
  application: glyph('application_load_balancer', 'network', 'Application LB', 'ALB'),
  network: glyph('network_load_balancer', 'network', 'Network LB', 'NLB'),
  gateway: glyph('gateway_load_balancer', 'network', 'Gateway LB', 'GWLB'),
});

/** An AWS service's category, for types the table does not name. */
const SERVICE_COLOR: Record<string, Color> = lookupTable({
  ec2: 'compute',
  lambda: 'compute',
  ecs: 'compute',
  eks: 'compute',
  autoscaling: 'compute',
  batch: 'compute',
  apprunner: 'compute',
  elasticloadbalancing: 'network',
  elasticloadbalancingv2: 'network',
  route53: 'network',
  cloudfront: 'network',
  apigateway: 'network',
  apigatewayv2: 'network',
  globalaccelerator: 'network',
  s3: 'storage',
  efs: 'storage',
  fsx: 'storage',
  backup: 'storage',
  glacier: 'storage',
  datasync: 'storage',
  rds: 'database',
  dynamodb: 'database',
  elasticache: 'database',
  docdb: 'database',
  neptune: 'database',
  memorydb: 'database',
  redshift: 'analytics',
  kinesis: 'analytics',
  msk: 'analytics',
  es: 'analytics',
  opensearch: 'analytics',
  iam: 'security',
  kms: 'security',
  secretsmanager: 'security',
  acm: 'security',
  guardduty: 'security',
  wafv2: 'security',
  waf: 'security',
  securityhub: 'security',
  accessanalyzer: 'security',
  cognito: 'security',
  networkfirewall: 'security',
  sqs: 'integration',
  sns: 'integration',
  events: 'integration',
  stepfunctions: 'integration',
  mq: 'integration',
  cloudtrail: 'management',
  cloudwatch: 'management',
  logs: 'management',
  config: 'management',
  ssm: 'management',
  cloudformation: 'management',
  organizations: 'management',
});

const HOST = glyph('traditional_server', 'general', 'Host', 'HOST', 45, 78);

/** The drawing of a node: the table's entry, else a general AWS tile, else a plain square. */
export function shapeOf(type: string, variant?: string | null): AwsShape & { mapped: boolean } {
  const [provider = '', service = '', kind = ''] = type.split('.');
  if (provider === 'aws') {
    if (service === 'elasticloadbalancingv2' && kind === 'load_balancer' && variant) {
      const lb = LOAD_BALANCERS_V2[variant];
      if (lb) return { ...lb, mapped: true };
    }
    const known = AWS_TYPES[`${service}.${kind}`];
    if (known) return { ...known, mapped: true };
    return { ...tile('general', SERVICE_COLOR[service] ?? 'general', type, service.slice(0, 4).toUpperCase()), mapped: false };
  }
  if (provider === 'host') return { ...HOST, mapped: true };
  return { glyph: '', tile: false, color: '#5A6C86', label: type, abbr: (service || provider).slice(0, 4).toUpperCase(), w: 78, h: 78, mapped: false };
}

/** draw.io's own style of the shape (a resource glyph, a service tile, or a plain square for other clouds). */
export function drawioShapeStyle(shape: AwsShape): string {
  const label = 'verticalLabelPosition=bottom;verticalAlign=top;align=center;html=1;fontSize=11;fontStyle=0;fontColor=#232F3E;';
  if (!shape.glyph) return `rounded=1;arcSize=12;fillColor=${shape.color};strokeColor=none;dashed=0;${label}`;
  if (shape.tile) {
    return `sketch=0;outlineConnect=0;fillColor=${shape.color};strokeColor=#ffffff;dashed=0;${label}aspect=fixed;shape=mxgraph.aws4.resourceIcon;resIcon=mxgraph.aws4.${shape.glyph};`;
  }
  return `sketch=0;outlineConnect=0;gradientColor=none;fillColor=${shape.color};strokeColor=none;dashed=0;${label}aspect=fixed;pointerEvents=1;shape=mxgraph.aws4.${shape.glyph};`;
}
