import { Type } from 'typebox';
import { AnyObject, Nullable, PageQuery, Paged, StringEnum, Timestamp, Uuid } from '../../platform/http/schemas.js';

export const DISCOVERY_PLUGINS = ['terraform-state', 'aws'] as const;
export type DiscoveryPlugin = (typeof DISCOVERY_PLUGINS)[number];
export const DISCOVERY_STATUSES = ['pending', 'queued', 'running', 'completed', 'failed', 'cancelled'] as const;

export const JobParams = Type.Object({ tenantID: Uuid, jobID: Uuid });

const REGION = '^[a-z]{2}(-[a-z]+)+-\\d$';
const ACCOUNT = '^\\d{12}$';

const TerraformStateConfig = Type.Object(
  {
    state: Type.Optional(
      Type.Union([AnyObject, Type.String({ maxLength: 100_000_000 })], {
        description: 'The state file itself (JSON format version 4), as an object or as its JSON text. Give this or state_uri.',
      }),
    ),
    state_uri: Type.Optional(
      Type.String({
        pattern: '^s3://[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]/.+$',
        maxLength: 1100,
        description:
          "s3://bucket/key of a state kept in S3 (the Terraform S3 backend), read with the cloud connection named in connection_id (the service's own AWS credentials only for a tenant the operator granted them)",
      }),
    ),
    connection_id: Type.Optional(Type.String({ format: 'uuid', description: 'the cloud connection state_uri is read with (POST /cloud-connections)' })),
    files: Type.Optional(
      Type.Unsafe<Record<string, string>>({
        type: 'object',
        additionalProperties: { type: 'string', maxLength: 1_000_000 },
        maxProperties: 500,
        description: 'The configuration files (path relative to the Terraform root → text), so findings can offer Terraform patches',
      }),
    ),
    default_region: Type.Optional(Type.String({ pattern: REGION, description: 'region of resources whose attributes do not tell it' })),
    account_id: Type.Optional(Type.String({ pattern: ACCOUNT, description: 'account of resources without an ARN' })),
  },
  { additionalProperties: false },
);

const AwsConfig = Type.Object(
  {
    regions: Type.Optional(
      Type.Array(Type.String({ pattern: REGION }), {
        minItems: 1,
        maxItems: 30,
        uniqueItems: true,
        description: 'default: every region the account has enabled (EC2 DescribeRegions)',
      }),
    ),
    services: Type.Optional(
      Type.Array(StringEnum(['ec2', 'elbv2', 'elb', 'rds', 'lambda', 's3', 'iam', 'cloudtrail', 'kms', 'cloudwatch', 's3control'] as const), {
        minItems: 1,
        uniqueItems: true,
        description: 'default all',
      }),
    ),
    account_id: Type.Optional(Type.String({ pattern: ACCOUNT })),
    connection_id: Type.Optional(
      Type.String({ format: 'uuid', description: "the cloud connection the account is read with (the service's own AWS credentials only for a tenant the operator granted them)" }),
    ),
  },
  { additionalProperties: false },
);

export const JobCreate = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    plugins: Type.Array(StringEnum(DISCOVERY_PLUGINS), { minItems: 1, maxItems: DISCOVERY_PLUGINS.length, uniqueItems: true }),
    config: Type.Optional(
      Type.Object(
        { 'terraform-state': Type.Optional(TerraformStateConfig), aws: Type.Optional(AwsConfig) },
        { additionalProperties: false, description: 'Per plugin, keyed by its name' },
      ),
    ),
    start: Type.Optional(Type.Boolean({ default: false, description: 'queue the job at once instead of leaving it pending' })),
  },
  { additionalProperties: false },
);

export const JobStats = Type.Object({
  nodes_discovered: Type.Integer({ description: 'distinct nodes the plugins found' }),
  nodes_updated: Type.Integer({ description: 'of those, nodes that already existed' }),
  findings_created: Type.Integer(),
  findings_resolved: Type.Integer(),
  duration_seconds: Type.Integer(),
});

export const DiscoveryJob = Type.Object({
  id: Uuid,
  name: Type.String(),
  plugins: Type.Array(Type.String()),
  status: StringEnum(DISCOVERY_STATUSES),
  status_url: Type.String(),
  config: AnyObject,
  stats: Nullable(JobStats),
  details: Nullable(AnyObject),
  warnings: Type.Array(Type.String()),
  error: Nullable(Type.String()),
  attempts: Type.Integer(),
  created_by: Nullable(Type.String()),
  created_at: Timestamp,
  queued_at: Nullable(Timestamp),
  started_at: Nullable(Timestamp),
  completed_at: Nullable(Timestamp),
});

export const JobListQuery = Type.Object(
  {
    status: Type.Optional(Type.String({ maxLength: 100, description: `one or more of ${DISCOVERY_STATUSES.join(', ')}, comma-separated` })),
    older_than: Type.Optional(Type.String({ maxLength: 20, description: 'created longer ago than this: 30s, 5m, 1h, 7d' })),
    ...PageQuery,
  },
  { additionalProperties: false },
);

export const JobList = Paged(DiscoveryJob);
