/**
 * A Terraform rendering of a node that did not come from Terraform (or whose file is unknown), so a
 * fix can still be shown as a patch: `resource "<type>" "<name>" { … }` built from the AWS Config
 * configuration item. It is minimal but faithful: the identifying and required arguments plus the
 * current value of every argument a built-in fix sets, so a fix visibly changes `false` to `true`
 * rather than adding a line. Arguments AWS Config does not record (passwords, user data) are left out,
 * as are `aws:` tags, which AWS reserves and Terraform cannot set.
 */
import { renderBlock, type HclBodyItem, type HclValue } from './hcl-values.js';
import type { PatchNode } from './terraform-source.js';
import { lookupTable } from '../../../platform/lookup-table.js';

type Obj = Record<string, unknown>;

interface GeneratedType {
  /** The node type this Terraform type renders. */
  nodeType: string;
  /** For node types that map to several Terraform types: whether this one is the node's. */
  matches?: (node: PatchNode) => boolean;
  body: (node: PatchNode) => HclBodyItem[];
}

const obj = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const config = (node: PatchNode): Obj => obj(node.properties.configuration);
const supplementary = (node: PatchNode): Obj => obj(node.properties.supplementaryConfiguration);
const strings = (items: unknown[]): string[] => items.filter((v): v is string => typeof v === 'string' && v !== '');

/** Attributes whose value is known: null, undefined, '' and empty lists are left out. */
function attrs(entries: Array<[string, unknown]>): HclBodyItem[] {
  const out: HclBodyItem[] = [];
  for (const [attr, value] of entries) {
    if (value === undefined || value === null || value === '') continue;
    if (Array.isArray(value) && value.length === 0) continue;
    if (typeof value === 'object' && !Array.isArray(value)) continue;
    out.push({ attr, value: value as HclValue });
  }
  return out;
}

function tags(node: PatchNode): HclBodyItem[] {
  const entries = Object.entries(node.tags ?? {}).filter((e): e is [string, string] => typeof e[1] === 'string' && !e[0].toLowerCase().startsWith('aws:'));
  return entries.length === 0 ? [] : [{ attr: 'tags', value: Object.fromEntries(entries) }];
}

const isDefaultGroup = (node: PatchNode): boolean => config(node).groupName === 'default';

/** An AWS Config ipPermissions entry as an `ingress`/`egress` block of aws_security_group. */
function sgRule(kind: 'ingress' | 'egress', groupId: unknown, p: Obj): HclBodyItem {
  const pairs = list(p.userIdGroupPairs).map(obj);
  const allProtocols = p.ipProtocol === '-1';
  return {
    block: kind,
    body: attrs([
      ['protocol', String(p.ipProtocol ?? '-1')],
      ['from_port', allProtocols ? 0 : (p.fromPort ?? 0)],
      ['to_port', allProtocols ? 0 : (p.toPort ?? 0)],
      ['cidr_blocks', strings(list(p.ipv4Ranges).map((r) => obj(r).cidrIp))],
      ['ipv6_cidr_blocks', strings(list(p.ipv6Ranges).map((r) => obj(r).cidrIpv6))],
      ['prefix_list_ids', strings(list(p.prefixListIds).map((r) => obj(r).prefixListId))],
      ['security_groups', strings(pairs.filter((g) => g.groupId !== groupId).map((g) => g.groupId))],
      ['self', pairs.some((g) => g.groupId === groupId) ? true : undefined],
    ]),
  };
}

function securityGroup(node: PatchNode, isDefault: boolean): HclBodyItem[] {
  const c = config(node);
  return [
    ...attrs(
      isDefault
        ? [['vpc_id', c.vpcId]]
        : [
            ['name', c.groupName],
            ['description', c.description],
            ['vpc_id', c.vpcId],
          ],
    ),
    ...list(c.ipPermissions).map((p) => sgRule('ingress', c.groupId, obj(p))),
    ...list(c.ipPermissionsEgress).map((p) => sgRule('egress', c.groupId, obj(p))),
    ...tags(node),
  ];
}

function listenerAction(a: Obj): HclBodyItem {
  const redirect = obj(a.RedirectConfig);
  const fixed = obj(a.FixedResponseConfig);
  const body = attrs([
    ['type', a.Type],
    ['order', a.Order],
    ['target_group_arn', a.TargetGroupArn],
  ]);
  if (a.RedirectConfig) {
    body.push({
      block: 'redirect',
      body: attrs([
        ['host', redirect.Host],
        ['path', redirect.Path],
        ['port', redirect.Port],
        ['protocol', redirect.Protocol],
        ['query', redirect.Query],
        ['status_code', redirect.StatusCode],
      ]),
    });
  }
  if (a.FixedResponseConfig) {
    body.push({
      block: 'fixed_response',
      body: attrs([
        ['content_type', fixed.ContentType],
        ['message_body', fixed.MessageBody],
        ['status_code', fixed.StatusCode],
      ]),
    });
  }
  return { block: 'default_action', body };
}

const GENERATED: Record<string, GeneratedType> = lookupTable({
  aws_s3_bucket: {
    nodeType: 'aws.s3.bucket',
    body: (node) => [
      ...attrs([
        ['bucket', config(node).name ?? node.native_id],
        ['object_lock_enabled', obj(supplementary(node).ObjectLockConfiguration).objectLockEnabled === 'Enabled' ? true : undefined],
      ]),
      ...tags(node),
    ],
  },
  aws_s3_account_public_access_block: {
    nodeType: 'aws.s3.account_public_access_block',
    body: (node) => {
      const c = config(node);
      return attrs([
        ['account_id', node.account_id ?? node.native_id],
        ['block_public_acls', c.blockPublicAcls],
        ['block_public_policy', c.blockPublicPolicy],
        ['ignore_public_acls', c.ignorePublicAcls],
        ['restrict_public_buckets', c.restrictPublicBuckets],
      ]);
    },
  },
  aws_iam_account_password_policy: {
    nodeType: 'aws.iam.account_password_policy',
    // Only the settings the policy has: an account without one (an empty configuration) renders an
    // empty block, which is IAM's defaults as Terraform would set them.
    body: (node) => {
      const c = config(node);
      return attrs([
        ['minimum_password_length', c.minimumPasswordLength],
        ['require_lowercase_characters', c.requireLowercaseCharacters],
        ['require_uppercase_characters', c.requireUppercaseCharacters],
        ['require_numbers', c.requireNumbers],
        ['require_symbols', c.requireSymbols],
        ['allow_users_to_change_password', c.allowUsersToChangePassword],
        ['max_password_age', c.expirePasswords === true ? c.maxPasswordAge : undefined],
        ['password_reuse_prevention', c.passwordReusePrevention],
        ['hard_expiry', c.hardExpiry],
      ]);
    },
  },
  aws_cloudtrail: {
    nodeType: 'aws.cloudtrail.trail',
    body: (node) => {
      const c = config(node);
      return [
        ...attrs([
          ['name', c.name ?? node.name],
          ['s3_bucket_name', c.s3BucketName],
          ['s3_key_prefix', c.s3KeyPrefix],
          ['include_global_service_events', c.includeGlobalServiceEvents],
          ['is_multi_region_trail', c.isMultiRegionTrail],
          ['is_organization_trail', c.isOrganizationTrail],
          ['enable_log_file_validation', c.logFileValidationEnabled],
          ['kms_key_id', c.kmsKeyId],
          ['cloud_watch_logs_group_arn', c.cloudWatchLogsLogGroupArn],
          ['cloud_watch_logs_role_arn', c.cloudWatchLogsRoleArn],
        ]),
        ...tags(node),
      ];
    },
  },
  aws_ebs_volume: {
    nodeType: 'aws.ec2.volume',
    body: (node) => {
      const c = config(node);
      return [
        ...attrs([
          ['availability_zone', c.availabilityZone],
          ['size', c.size],
          ['type', c.volumeType],
          ['iops', c.iops],
          ['throughput', c.throughput],
          ['snapshot_id', c.snapshotId],
          ['encrypted', c.encrypted],
          ['kms_key_id', c.kmsKeyId],
          ['multi_attach_enabled', c.multiAttachEnabled === true ? true : undefined],
        ]),
        ...tags(node),
      ];
    },
  },
  aws_security_group: {
    nodeType: 'aws.ec2.security_group',
    matches: (node) => !isDefaultGroup(node),
    body: (node) => securityGroup(node, false),
  },
  aws_default_security_group: {
    nodeType: 'aws.ec2.security_group',
    matches: isDefaultGroup,
    body: (node) => securityGroup(node, true),
  },
  aws_instance: {
    nodeType: 'aws.ec2.instance',
    body: (node) => {
      const c = config(node);
      const metadata = obj(c.metadataOptions);
      const profile = obj(c.iamInstanceProfile).arn;
      const publicIp = typeof c.publicIpAddress === 'string' && c.publicIpAddress !== '';
      return [
        ...attrs([
          ['ami', c.imageId],
          ['instance_type', c.instanceType],
          ['subnet_id', c.subnetId],
          ['vpc_security_group_ids', strings(list(c.securityGroups).map((g) => obj(g).groupId))],
          ['iam_instance_profile', typeof profile === 'string' ? profile.split('/').pop() : undefined],
          ['associate_public_ip_address', publicIp],
          ['ebs_optimized', c.ebsOptimized],
          ['monitoring', obj(c.monitoring).state === undefined ? undefined : obj(c.monitoring).state === 'enabled'],
        ]),
        ...(Object.keys(metadata).length === 0
          ? []
          : [
              {
                block: 'metadata_options',
                body: attrs([
                  ['http_endpoint', metadata.httpEndpoint],
                  ['http_tokens', metadata.httpTokens],
                  ['http_put_response_hop_limit', metadata.httpPutResponseHopLimit],
                ]),
              },
            ]),
        ...tags(node),
      ];
    },
  },
  aws_lb_listener: {
    nodeType: 'aws.elasticloadbalancingv2.listener',
    body: (node) => {
      const c = config(node);
      const certificates = list(c.Certificates).map(obj);
      const certificate = (certificates.find((x) => x.IsDefault === true) ?? certificates[0])?.CertificateArn;
      return [
        ...attrs([
          ['load_balancer_arn', c.LoadBalancerArn],
          ['port', c.Port],
          ['protocol', c.Protocol],
          ['ssl_policy', c.SslPolicy],
          ['certificate_arn', certificate],
        ]),
        ...list(c.DefaultActions).map((a) => listenerAction(obj(a))),
        ...tags(node),
      ];
    },
  },
  aws_kms_key: {
    nodeType: 'aws.kms.key',
    body: (node) => {
      const c = config(node);
      return [
        ...attrs([
          ['description', c.description],
          ['key_usage', c.keyUsage],
          ['customer_master_key_spec', c.keySpec ?? c.customerMasterKeySpec],
          ['is_enabled', c.enabled],
          ['enable_key_rotation', supplementary(node).KeyRotationStatus === true],
          ['multi_region', c.multiRegion],
        ]),
        ...tags(node),
      ];
    },
  },
  aws_db_instance: {
    nodeType: 'aws.rds.db_instance',
    body: (node) => {
      const c = config(node);
      return [
        ...attrs([
          ['identifier', c.dBInstanceIdentifier ?? node.name],
          ['engine', c.engine],
          ['engine_version', c.engineVersion],
          ['instance_class', c.dBInstanceClass],
          ['allocated_storage', c.allocatedStorage],
          ['storage_type', c.storageType],
          ['storage_encrypted', c.storageEncrypted],
          ['kms_key_id', c.kmsKeyId],
          ['username', c.masterUsername],
          ['db_name', c.dBName],
          ['port', obj(c.endpoint).port],
          ['db_subnet_group_name', obj(c.dBSubnetGroup).dBSubnetGroupName],
          ['vpc_security_group_ids', strings(list(c.vpcSecurityGroups).map((g) => obj(g).vpcSecurityGroupId))],
          ['parameter_group_name', obj(list(c.dBParameterGroups)[0]).dBParameterGroupName],
          ['publicly_accessible', c.publiclyAccessible],
          ['multi_az', c.multiAZ],
          ['backup_retention_period', c.backupRetentionPeriod],
          ['backup_window', c.preferredBackupWindow],
          ['deletion_protection', c.deletionProtection],
          ['auto_minor_version_upgrade', c.autoMinorVersionUpgrade],
          ['iam_database_authentication_enabled', c.iAMDatabaseAuthenticationEnabled],
          ['enabled_cloudwatch_logs_exports', strings(list(c.enabledCloudwatchLogsExports))],
          ['monitoring_interval', c.monitoringInterval],
          ['monitoring_role_arn', c.monitoringRoleArn],
          ['copy_tags_to_snapshot', c.copyTagsToSnapshot],
          ['performance_insights_enabled', c.performanceInsightsEnabled],
          ['ca_cert_identifier', c.cACertificateIdentifier],
        ]),
        ...tags(node),
      ];
    },
  },
  aws_rds_cluster: {
    nodeType: 'aws.rds.db_cluster',
    body: (node) => {
      const c = config(node);
      return [
        ...attrs([
          ['cluster_identifier', c.dbclusterIdentifier ?? node.name],
          ['engine', c.engine],
          ['engine_version', c.engineVersion],
          ['engine_mode', c.engineMode],
          ['master_username', c.masterUsername],
          ['port', c.port],
          ['storage_encrypted', c.storageEncrypted],
          ['kms_key_id', c.kmsKeyId],
          ['db_subnet_group_name', c.dbsubnetGroup],
          ['vpc_security_group_ids', strings(list(c.vpcSecurityGroups).map((g) => obj(g).vpcSecurityGroupId))],
          ['availability_zones', strings(list(c.availabilityZones).map((z) => obj(z).value))],
          ['backup_retention_period', c.backupRetentionPeriod],
          ['deletion_protection', c.deletionProtection],
          ['iam_database_authentication_enabled', c.iamdatabaseAuthenticationEnabled],
          ['enabled_cloudwatch_logs_exports', strings(list(c.enabledCloudwatchLogsExports))],
          ['copy_tags_to_snapshot', c.copyTagsToSnapshot],
        ]),
        ...tags(node),
      ];
    },
  },
  aws_subnet: {
    nodeType: 'aws.ec2.subnet',
    body: (node) => {
      const c = config(node);
      return [
        ...attrs([
          ['vpc_id', c.vpcId],
          ['cidr_block', c.cidrBlock],
          ['availability_zone', c.availabilityZone],
          ['map_public_ip_on_launch', c.mapPublicIpOnLaunch],
          ['assign_ipv6_address_on_creation', c.assignIpv6AddressOnCreation],
        ]),
        ...tags(node),
      ];
    },
  },
  aws_ec2_transit_gateway: {
    nodeType: 'aws.ec2.transit_gateway',
    body: (node) => {
      const c = config(node);
      return [
        ...attrs([
          ['description', c.Description],
          ['amazon_side_asn', c.AmazonSideAsn],
          ['auto_accept_shared_attachments', c.AutoAcceptSharedAttachments],
          ['default_route_table_association', c.DefaultRouteTableAssociation],
          ['default_route_table_propagation', c.DefaultRouteTablePropagation],
          ['dns_support', c.DnsSupport],
          ['vpn_ecmp_support', c.VpnEcmpSupport],
          ['multicast_support', c.MulticastSupport],
        ]),
        ...tags(node),
      ];
    },
  },
});

/** Whether `tfType` has a renderer for nodes of this node's type. */
export function canRender(tfType: string, node: PatchNode): boolean {
  return Object.hasOwn(GENERATED, tfType) && GENERATED[tfType]!.nodeType === node.type;
}

/** The Terraform type a node without a Terraform source is rendered as, if any. */
export function generatedTypeOf(node: PatchNode): string | undefined {
  return Object.entries(GENERATED).find(([, g]) => g.nodeType === node.type && (g.matches?.(node) ?? true))?.[0];
}

/**
 * `resource "<tfType>" "<name>" { … }` for the node, after a comment saying where it came from; the
 * text uses `\n` line breaks and ends with one. Undefined when the type has no renderer.
 */
export function renderGeneratedResource(tfType: string, name: string, node: PatchNode): string | undefined {
  if (!Object.hasOwn(GENERATED, tfType)) return undefined;
  const generated = GENERATED[tfType]!;
  const origin = [node.id, node.region, node.account_id ? `account ${node.account_id}` : ''].filter(Boolean).join(', ');
  const header =
    `# Generated by ControlGraph from ${origin.replace(/[\r\n]+/g, ' ')}.\n` +
    '# A minimal rendering of the live resource: arguments AWS Config does not record are not reproduced.\n';
  return header + renderBlock('resource', [tfType, name], generated.body(node));
}
