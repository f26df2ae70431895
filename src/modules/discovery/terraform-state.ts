import type { NodeRecord } from '../graph/index.js';
import type { EdgeRecord } from '../graph/index.js';
import { arnParts, awsNode, regionOfZone, type Inventory } from './inventory.js';
import { lookupTable } from '../../platform/lookup-table.js';

/**
 * The terraform-state plugin: a Terraform state file (JSON, format version 4) becomes nodes in the
 * AWS Config property model and edges, each node keeping its Terraform origin
 * (`source: {kind: 'terraform', address, file?, content?}`) so remediation can patch the block.
 *
 * Mapping: each supported `aws_*` type names its AWS Config resource type and how its attributes
 * become the configuration item (see MAPPED_TYPES and the README's coverage table). Attributes are
 * renamed to AWS Config's camelCase (`storage_encrypted` → `storageEncrypted`) and the names that
 * differ are set explicitly; attributes listed as sensitive in the state, and secrets, are dropped.
 * S3 bucket sub-resources (encryption, versioning, logging, public access block) fold into their
 * bucket's supplementaryConfiguration. Other `aws_*` types and other providers are counted as
 * unmapped and skipped; data sources are ignored.
 */

type Attrs = Record<string, unknown>;

interface TfInstance {
  index_key?: string | number;
  attributes?: Attrs;
  sensitive_attributes?: unknown[];
  dependencies?: string[];
}

interface TfResource {
  module?: string;
  mode: string;
  type: string;
  name: string;
  provider?: string;
  instances?: TfInstance[];
}

export interface TerraformStateOptions {
  /** Region for resources whose attributes do not tell it. */
  defaultRegion?: string;
  /** Account for resources without an ARN. */
  accountId?: string | null;
  /** The configuration files (path relative to the Terraform root → content), to locate each block. */
  files?: Record<string, string>;
}

export class TerraformStateError extends Error {
  override name = 'TerraformStateError';
}

const SECRET_KEY = /(^|_)(password|secret|private_key|token|credentials?)($|_)/;

const camel = (key: string) => key.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());

/** Attributes in AWS Config's spelling, without secrets and sensitive values; single nested blocks unwrapped. */
function configuration(attrs: Attrs, sensitive: Set<string>): Attrs {
  const out: Attrs = {};
  for (const [key, value] of Object.entries(attrs)) {
    if (sensitive.has(key) || SECRET_KEY.test(key) || value === null || key === 'tags_all' || key === 'timeouts') continue;
    out[camel(key)] = convert(value);
  }
  return out;
}

function convert(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(convert);
  if (value && typeof value === 'object') {
    const out: Attrs = {};
    for (const [k, v] of Object.entries(value)) if (v !== null) out[camel(k)] = convert(v);
    return out;
  }
  return value;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const list = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && x !== '') : []);
const first = (v: unknown): Attrs => (Array.isArray(v) && v[0] && typeof v[0] === 'object' ? (v[0] as Attrs) : {});

function permissions(rules: unknown): Attrs[] {
  if (!Array.isArray(rules)) return [];
  return rules.map((r: Attrs) => ({
    fromPort: r.from_port,
    toPort: r.to_port,
    ipProtocol: String(r.protocol ?? '-1'),
    ipRanges: list(r.cidr_blocks),
    ipv4Ranges: list(r.cidr_blocks).map((cidrIp) => ({ cidrIp })),
    ipv6Ranges: list(r.ipv6_cidr_blocks).map((cidrIpv6) => ({ cidrIpv6 })),
    prefixListIds: list(r.prefix_list_ids).map((prefixListId) => ({ prefixListId })),
    userIdGroupPairs: list(r.security_groups).map((groupId) => ({ groupId })),
  }));
}

interface Mapping {
  configType: string;
  nativeId: (a: Attrs) => string | undefined;
  name?: (a: Attrs) => string | undefined;
  global?: boolean;
  /** Explicit AWS Config names where the camelCased attribute differs. */
  shape?: (a: Attrs) => { configuration?: Attrs; supplementaryConfiguration?: Attrs };
}

const byId = (a: Attrs) => str(a.id);

/** The supported resource types (the README lists them with what each maps). */
export const MAPPED_TYPES: Record<string, Mapping> = lookupTable({
  aws_vpc: { configType: 'AWS::EC2::VPC', nativeId: byId, shape: (a) => ({ configuration: { vpcId: a.id, isDefault: false } }) },
  aws_default_vpc: { configType: 'AWS::EC2::VPC', nativeId: byId, shape: (a) => ({ configuration: { vpcId: a.id, isDefault: true } }) },
  aws_subnet: { configType: 'AWS::EC2::Subnet', nativeId: byId, shape: (a) => ({ configuration: { subnetId: a.id } }) },
  aws_security_group: {
    configType: 'AWS::EC2::SecurityGroup',
    nativeId: byId,
    shape: (a) => ({
      configuration: { groupId: a.id, groupName: a.name, ipPermissions: permissions(a.ingress), ipPermissionsEgress: permissions(a.egress), ingress: undefined, egress: undefined },
    }),
  },
  aws_default_security_group: {
    configType: 'AWS::EC2::SecurityGroup',
    nativeId: byId,
    name: () => 'default',
    shape: (a) => ({
      configuration: {
        groupId: a.id,
        groupName: 'default',
        ipPermissions: permissions(a.ingress),
        ipPermissionsEgress: permissions(a.egress),
        ingress: undefined,
        egress: undefined,
      },
    }),
  },
  aws_instance: {
    configType: 'AWS::EC2::Instance',
    nativeId: byId,
    shape: (a) => ({
      configuration: {
        instanceId: a.id,
        imageId: a.ami,
        publicIpAddress: str(a.public_ip),
        privateIpAddress: str(a.private_ip),
        securityGroups: list(a.vpc_security_group_ids).map((groupId) => ({ groupId })),
        metadataOptions: { httpTokens: first(a.metadata_options).http_tokens, httpEndpoint: first(a.metadata_options).http_endpoint },
        iamInstanceProfile: str(a.iam_instance_profile) ? { id: a.iam_instance_profile } : undefined,
        monitoring: { state: a.monitoring ? 'enabled' : 'disabled' },
        placement: { availabilityZone: a.availability_zone },
        ami: undefined,
        publicIp: undefined,
        privateIp: undefined,
      },
    }),
  },
  aws_ebs_volume: { configType: 'AWS::EC2::Volume', nativeId: byId, shape: (a) => ({ configuration: { volumeId: a.id, volumeType: a.type } }) },
  aws_network_interface: { configType: 'AWS::EC2::NetworkInterface', nativeId: byId, shape: (a) => ({ configuration: { networkInterfaceId: a.id } }) },
  aws_internet_gateway: {
    configType: 'AWS::EC2::InternetGateway',
    nativeId: byId,
    shape: (a) => ({ configuration: { internetGatewayId: a.id, attachments: str(a.vpc_id) ? [{ vpcId: a.vpc_id }] : [] } }),
  },
  aws_nat_gateway: { configType: 'AWS::EC2::NatGateway', nativeId: byId, shape: (a) => ({ configuration: { natGatewayId: a.id } }) },
  aws_route_table: { configType: 'AWS::EC2::RouteTable', nativeId: byId, shape: (a) => ({ configuration: { routeTableId: a.id } }) },
  aws_eip: { configType: 'AWS::EC2::EIP', nativeId: byId, shape: (a) => ({ configuration: { allocationId: a.allocation_id ?? a.id, publicIp: a.public_ip } }) },
  aws_vpc_endpoint: { configType: 'AWS::EC2::VPCEndpoint', nativeId: byId, shape: (a) => ({ configuration: { vpcEndpointId: a.id } }) },
  aws_network_acl: { configType: 'AWS::EC2::NetworkAcl', nativeId: byId, shape: (a) => ({ configuration: { networkAclId: a.id } }) },
  aws_s3_bucket: {
    configType: 'AWS::S3::Bucket',
    nativeId: (a) => str(a.bucket) ?? str(a.id),
    name: (a) => str(a.bucket),
    shape: (a) => {
      const supplementary: Attrs = {};
      const sse = first(a.server_side_encryption_configuration);
      if (Object.keys(sse).length) supplementary.ServerSideEncryptionConfiguration = convert(sse);
      const versioning = first(a.versioning);
      if (Object.keys(versioning).length)
        supplementary.BucketVersioningConfiguration = { status: versioning.enabled ? 'Enabled' : 'Off', isMfaDeleteEnabled: versioning.mfa_delete ?? false };
      const logging = first(a.logging);
      if (Object.keys(logging).length) supplementary.BucketLoggingConfiguration = { destinationBucketName: logging.target_bucket, logFilePrefix: logging.target_prefix };
      return {
        configuration: { name: a.bucket, serverSideEncryptionConfiguration: undefined, versioning: undefined, logging: undefined },
        supplementaryConfiguration: supplementary,
      };
    },
  },
  aws_db_instance: {
    configType: 'AWS::RDS::DBInstance',
    // AWS Config's resource id of a DB instance is its DbiResourceId (db-…).
    nativeId: (a) => str(a.resource_id) ?? str(a.identifier) ?? str(a.id),
    name: (a) => str(a.identifier),
    shape: (a) => ({
      configuration: {
        dBInstanceIdentifier: a.identifier,
        dbiResourceId: a.resource_id,
        dBInstanceClass: a.instance_class,
        multiAZ: a.multi_az,
        multiAz: undefined,
        dBSubnetGroup: str(a.db_subnet_group_name) ? { dBSubnetGroupName: a.db_subnet_group_name } : undefined,
        vpcSecurityGroups: list(a.vpc_security_group_ids).map((vpcSecurityGroupId) => ({ vpcSecurityGroupId, status: 'active' })),
        iAMDatabaseAuthenticationEnabled: a.iam_database_authentication_enabled,
        dBInstanceArn: a.arn,
      },
    }),
  },
  aws_lb: {
    configType: 'AWS::ElasticLoadBalancingV2::LoadBalancer',
    nativeId: (a) => str(a.arn) ?? str(a.id),
    shape: (a) => ({
      configuration: {
        loadBalancerArn: a.arn,
        loadBalancerName: a.name,
        scheme: a.internal ? 'internal' : 'internet-facing',
        type: a.load_balancer_type,
        dNSName: a.dns_name,
        availabilityZones: list(a.subnets).map((subnetId) => ({ subnetId })),
        securityGroups: list(a.security_groups),
      },
    }),
  },
  aws_lb_listener: {
    configType: 'AWS::ElasticLoadBalancingV2::Listener',
    nativeId: (a) => str(a.arn) ?? str(a.id),
    shape: (a) => ({ configuration: { ListenerArn: a.arn, LoadBalancerArn: a.load_balancer_arn, Port: a.port, Protocol: a.protocol, SslPolicy: str(a.ssl_policy) } }),
  },
  aws_iam_role: {
    configType: 'AWS::IAM::Role',
    global: true,
    nativeId: (a) => str(a.unique_id) ?? str(a.id),
    name: (a) => str(a.name),
    shape: (a) => ({
      configuration: {
        roleName: a.name,
        roleId: a.unique_id,
        assumeRolePolicyDocument: typeof a.assume_role_policy === 'string' ? encodeURIComponent(a.assume_role_policy) : undefined,
        attachedManagedPolicies: list(a.managed_policy_arns).map((policyArn) => ({ policyArn, policyName: policyArn.split('/').pop() })),
        assumeRolePolicy: undefined,
      },
    }),
  },
  aws_iam_user: {
    configType: 'AWS::IAM::User',
    global: true,
    nativeId: (a) => str(a.unique_id) ?? str(a.id),
    name: (a) => str(a.name),
    shape: (a) => ({ configuration: { userName: a.name, userId: a.unique_id } }),
  },
  aws_iam_group: {
    configType: 'AWS::IAM::Group',
    global: true,
    nativeId: (a) => str(a.unique_id) ?? str(a.id),
    name: (a) => str(a.name),
    shape: (a) => ({ configuration: { groupName: a.name, groupId: a.unique_id } }),
  },
  aws_iam_policy: {
    configType: 'AWS::IAM::Policy',
    global: true,
    nativeId: (a) => str(a.policy_id) ?? str(a.id),
    name: (a) => str(a.name),
    shape: (a) => ({ configuration: { policyName: a.name, policyId: a.policy_id, policy: undefined } }),
  },
  aws_lambda_function: {
    configType: 'AWS::Lambda::Function',
    nativeId: (a) => str(a.function_name) ?? str(a.id),
    name: (a) => str(a.function_name),
    shape: (a) => {
      const vpc = first(a.vpc_config);
      return {
        configuration: {
          functionArn: a.arn,
          kmskeyArn: str(a.kms_key_arn),
          kmsKeyArn: undefined,
          vpcConfig: Object.keys(vpc).length ? { subnetIds: list(vpc.subnet_ids), securityGroupIds: list(vpc.security_group_ids), vpcId: str(vpc.vpc_id) } : undefined,
          tracingConfig: { mode: first(a.tracing_config).mode ?? 'PassThrough' },
          environment: undefined,
        },
      };
    },
  },
  aws_kms_key: {
    configType: 'AWS::KMS::Key',
    nativeId: (a) => str(a.key_id) ?? str(a.id),
    shape: (a) => ({
      configuration: {
        keyId: a.key_id,
        arn: a.arn,
        keyManager: 'CUSTOMER',
        // aws_kms_key always has AWS-generated material (aws_kms_external_key is another type).
        origin: 'AWS_KMS',
        keySpec: str(a.customer_master_key_spec) ?? 'SYMMETRIC_DEFAULT',
        keyUsage: a.key_usage,
        keyState: a.is_enabled === false ? 'Disabled' : 'Enabled',
        enabled: a.is_enabled !== false,
        multiRegion: a.multi_region,
        customerMasterKeySpec: undefined,
        policy: undefined,
      },
      supplementaryConfiguration: { KeyRotationStatus: a.enable_key_rotation === true },
    }),
  },
  aws_cloudtrail: {
    configType: 'AWS::CloudTrail::Trail',
    nativeId: (a) => str(a.name) ?? str(a.id),
    name: (a) => str(a.name),
    shape: (a) => ({ configuration: { trailARN: a.arn, logFileValidationEnabled: a.enable_log_file_validation, enableLogFileValidation: undefined } }),
  },
  aws_sqs_queue: {
    configType: 'AWS::SQS::Queue',
    nativeId: (a) => str(a.url) ?? str(a.id),
    name: (a) => str(a.name),
    shape: (a) => ({ configuration: { queueUrl: a.url, queueArn: a.arn } }),
  },
  aws_sns_topic: { configType: 'AWS::SNS::Topic', nativeId: (a) => str(a.arn) ?? str(a.id), name: (a) => str(a.name), shape: (a) => ({ configuration: { topicArn: a.arn } }) },
  aws_dynamodb_table: {
    configType: 'AWS::DynamoDB::Table',
    nativeId: (a) => str(a.name) ?? str(a.id),
    name: (a) => str(a.name),
    shape: (a) => ({ configuration: { tableName: a.name, tableArn: a.arn } }),
  },
  aws_cloudwatch_log_group: {
    configType: 'AWS::Logs::LogGroup',
    nativeId: (a) => str(a.name) ?? str(a.id),
    name: (a) => str(a.name),
    shape: (a) => ({ configuration: { logGroupName: a.name } }),
  },
  aws_ecr_repository: {
    configType: 'AWS::ECR::Repository',
    nativeId: (a) => str(a.name) ?? str(a.id),
    name: (a) => str(a.name),
    shape: (a) => ({ configuration: { repositoryName: a.name, repositoryArn: a.arn } }),
  },
});

/** Bucket sub-resources folded into the bucket's supplementaryConfiguration. */
const BUCKET_PARTS: Record<string, (a: Attrs) => Attrs> = lookupTable({
  aws_s3_bucket_server_side_encryption_configuration: (a) => ({
    ServerSideEncryptionConfiguration: {
      rules: (Array.isArray(a.rule) ? a.rule : []).map((r: Attrs) => ({
        applyServerSideEncryptionByDefault: convert(first(r.apply_server_side_encryption_by_default)),
        bucketKeyEnabled: r.bucket_key_enabled ?? false,
      })),
    },
  }),
  aws_s3_bucket_versioning: (a) => ({
    BucketVersioningConfiguration: { status: first(a.versioning_configuration).status ?? 'Off', isMfaDeleteEnabled: first(a.versioning_configuration).mfa_delete === 'Enabled' },
  }),
  aws_s3_bucket_logging: (a) => ({ BucketLoggingConfiguration: { destinationBucketName: a.target_bucket, logFilePrefix: a.target_prefix } }),
  aws_s3_bucket_public_access_block: (a) => ({
    PublicAccessBlockConfiguration: {
      blockPublicAcls: a.block_public_acls ?? false,
      ignorePublicAcls: a.ignore_public_acls ?? false,
      blockPublicPolicy: a.block_public_policy ?? false,
      restrictPublicBuckets: a.restrict_public_buckets ?? false,
    },
  }),
});

/** References between resources, by attribute: the edge type each becomes. */
const REFERENCES: Array<{ attr: string; edge: string }> = [
  { attr: 'vpc_id', edge: 'in_vpc' },
  { attr: 'subnet_id', edge: 'in_subnet' },
  { attr: 'subnet_ids', edge: 'in_subnet' },
  { attr: 'subnets', edge: 'in_subnet' },
  { attr: 'vpc_security_group_ids', edge: 'uses_security_group' },
  { attr: 'security_groups', edge: 'uses_security_group' },
  { attr: 'kms_key_id', edge: 'encrypted_by' },
  { attr: 'kms_key_arn', edge: 'encrypted_by' },
  { attr: 'role', edge: 'assumes_role' },
  { attr: 'load_balancer_arn', edge: 'listener_of' },
  { attr: 's3_bucket_name', edge: 'writes_to' },
];

function address(resource: TfResource, instance: TfInstance): string {
  const key = instance.index_key === undefined ? '' : typeof instance.index_key === 'number' ? `[${instance.index_key}]` : `["${instance.index_key}"]`;
  return `${resource.module ? `${resource.module}.` : ''}${resource.type}.${resource.name}${key}`;
}

/** The file declaring `resource "<type>" "<name>"`, among the given configuration files. */
function locate(files: Record<string, string> | undefined, type: string, name: string): { file: string; content: string } | undefined {
  if (!files) return undefined;
  const pattern = new RegExp(`^\\s*resource\\s+"${type}"\\s+"${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"\\s*\\{`, 'm');
  for (const [file, content] of Object.entries(files)) if (pattern.test(content)) return { file, content };
  return undefined;
}

function sensitivePaths(instance: TfInstance): Set<string> {
  const out = new Set<string>();
  for (const path of instance.sensitive_attributes ?? []) {
    // v4 writes each path as a list of steps: [{type: 'get_attr', value: 'password'}, …]; the top key is enough.
    const step = Array.isArray(path) ? (path[0] as { value?: unknown } | undefined) : undefined;
    if (step && typeof step.value === 'string') out.add(step.value);
  }
  return out;
}

/** Parses and maps a Terraform state (object or JSON text). */
export function terraformStateInventory(state: unknown, options: TerraformStateOptions = {}): Inventory {
  let doc = state;
  if (typeof doc === 'string') {
    try {
      doc = JSON.parse(doc);
    } catch (error) {
      throw new TerraformStateError(`the Terraform state is not JSON: ${(error as Error).message}`);
    }
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new TerraformStateError('the Terraform state must be a JSON object');
  const s = doc as { version?: unknown; resources?: unknown };
  if (s.version !== 4) throw new TerraformStateError(`unsupported Terraform state format version ${JSON.stringify(s.version)}: only version 4 is read`);
  if (!Array.isArray(s.resources)) throw new TerraformStateError('the Terraform state has no resources array');

  const counts = { resources: 0, mapped: 0, unmapped: 0, data_sources: 0, merged: 0 };
  const unmappedTypes = new Set<string>();
  const nodes: NodeRecord[] = [];
  const lookup = new Map<string, string>();
  const pending: Array<{ node: NodeRecord; attrs: Attrs; dependencies: string[]; address: string }> = [];
  const bucketParts: Array<{ bucket: string; part: Attrs }> = [];

  for (const resource of s.resources as TfResource[]) {
    if (!resource || typeof resource !== 'object' || typeof resource.type !== 'string') continue;
    if (resource.mode === 'data') {
      counts.data_sources++;
      continue;
    }
    for (const instance of resource.instances ?? []) {
      counts.resources++;
      const attrs = instance.attributes ?? {};
      const part = BUCKET_PARTS[resource.type];
      if (part) {
        if (str(attrs.bucket)) bucketParts.push({ bucket: attrs.bucket as string, part: part(attrs) });
        counts.merged++;
        continue;
      }
      const mapping = MAPPED_TYPES[resource.type];
      const nativeId = mapping?.nativeId(attrs);
      if (!mapping || !nativeId) {
        counts.unmapped++;
        unmappedTypes.add(resource.type);
        continue;
      }
      const arn = str(attrs.arn) ?? null;
      const fromArn = arnParts(arn);
      const region = mapping.global ? 'global' : (fromArn.region ?? str(attrs.region) ?? regionOfZone(attrs.availability_zone) ?? options.defaultRegion ?? 'us-east-1');
      const shaped = mapping.shape?.(attrs) ?? {};
      const config = { ...configuration(attrs, sensitivePaths(instance)), ...(shaped.configuration ?? {}) };
      for (const [k, v] of Object.entries(config)) if (v === undefined) delete config[k];
      const addr = address(resource, instance);
      const located = locate(options.files, resource.type, resource.name);
      const tags = (attrs.tags && typeof attrs.tags === 'object' ? attrs.tags : {}) as Record<string, unknown>;
      const name = mapping.name?.(attrs) ?? str(tags.Name) ?? str(attrs.name) ?? nativeId;
      const node = awsNode({
        configType: mapping.configType,
        nativeId,
        name,
        region,
        account: fromArn.account ?? options.accountId ?? null,
        arn,
        configuration: config,
        supplementaryConfiguration: shaped.supplementaryConfiguration,
        tags,
        source: { kind: 'terraform', address: addr, ...(located ? { file: located.file, content: located.content } : {}) },
      });
      nodes.push(node);
      counts.mapped++;
      for (const key of [
        nativeId,
        str(attrs.id),
        arn,
        addr,
        `${resource.module ? `${resource.module}.` : ''}${resource.type}.${resource.name}`,
        mapping.configType === 'AWS::S3::Bucket' ? `bucket:${nativeId}` : undefined,
      ]) {
        if (key) lookup.set(key, node.id);
      }
      pending.push({ node, attrs, dependencies: instance.dependencies ?? [], address: addr });
    }
  }

  const byNodeId = new Map(nodes.map((n) => [n.id, n]));
  for (const { bucket, part } of bucketParts) {
    const node = byNodeId.get(lookup.get(`bucket:${bucket}`) ?? '');
    if (!node) continue;
    const props = node.properties as { supplementaryConfiguration: Attrs };
    props.supplementaryConfiguration = { ...props.supplementaryConfiguration, ...part };
  }

  const edges: EdgeRecord[] = [];
  const seen = new Set<string>();
  const link = (source: string, target: string | undefined, type: string) => {
    if (!target || target === source) return;
    const key = `${source}|${target}|${type}`;
    if (seen.has(key)) return;
    seen.add(key);
    edges.push({ source, target, type, properties: {} });
  };
  const linked = new Set<string>();
  for (const { node, attrs, dependencies } of pending) {
    for (const ref of REFERENCES) {
      const value = attrs[ref.attr];
      for (const v of Array.isArray(value) ? value : [value]) {
        if (typeof v !== 'string') continue;
        const target = lookup.get(v);
        if (target) {
          link(node.id, target, ref.edge);
          linked.add(`${node.id}|${target}`);
        }
      }
    }
    for (const dep of dependencies) {
      const target = lookup.get(dep);
      if (target && !linked.has(`${node.id}|${target}`)) link(node.id, target, 'depends_on');
    }
  }
  const warnings = unmappedTypes.size ? [`unmapped resource types skipped: ${[...unmappedTypes].sort().join(', ')}`] : [];
  return { nodes, edges, counts, warnings };
}
