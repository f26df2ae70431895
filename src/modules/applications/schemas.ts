import { Type } from 'typebox';
import { Nullable, Paged, StringEnum, Timestamp, Uuid } from '../../platform/http/schemas.js';
import { MAX_FILTER_LENGTH } from './filter/language.js';
import { HEALTH_VALUES } from './rollup.js';
import { CRITICALITIES } from './tables.js';

export { Paged };

const FilterText = Type.String({
  minLength: 1,
  maxLength: MAX_FILTER_LENGTH,
  description:
    'filter expression: attributes (name, type, id, provider, region, account_id, native_id, vpc_id, subnet_id, availability_zone, arn, resource_type, tags.<key>, properties.<path>) compared with =, !=, contains, in (...), exists; combined with AND, OR, NOT and parentheses. Example: tags.app = checkout AND vpc_id = "vpc-0a1b"',
});

export const SeverityCounts = Type.Object(
  { CRITICAL: Type.Integer(), HIGH: Type.Integer(), MEDIUM: Type.Integer(), LOW: Type.Integer(), INFO: Type.Integer() },
  { description: 'active findings (open, not covered by a live risk acceptance) by severity' },
);
export const Health = StringEnum(HEALTH_VALUES, {
  description: 'Critical when any critical finding exists; Warning when high findings exist and no critical; Healthy otherwise',
});

const Page = {
  page: Type.Optional(Type.Integer({ minimum: 1, default: 1 })),
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
};

// ---------------------------------------------------------------------------------------------------
// Applications

export const ApplicationParams = Type.Object({ tenantID: Uuid, app_id: Uuid });

export const ApplicationBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(Type.String({ maxLength: 4000 })),
    filter: FilterText,
  },
  { additionalProperties: false },
);

const ServiceRef = Type.Object({ id: Uuid, name: Type.String(), criticality: StringEnum(CRITICALITIES) });

export const Application = Type.Object({
  id: Uuid,
  name: Type.String(),
  description: Type.String(),
  filter: Type.String(),
  derived: Type.Boolean({ description: 'discovered from the tag keys application, app, project, service, workload; read-only' }),
  derived_from: Nullable(Type.Object({ tag_value: Type.String(), tag_keys: Type.Array(Type.String(), { description: 'the key spellings the value was found under' }) })),
  resource_count: Type.Integer(),
  findings_by_severity: SeverityCounts,
  health: Health,
  services: Type.Array(ServiceRef, { description: 'business services that list this application' }),
  created_by: Type.String(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const MemberResource = Type.Object({
  id: Type.String(),
  name: Type.String(),
  type: Type.String(),
  region: Type.String(),
  account_id: Nullable(Type.String()),
  findings_by_severity: SeverityCounts,
  health: Health,
});

export const ApplicationDetail = Type.Object({
  ...Application.properties,
  resources: Paged(MemberResource),
});

export const ApplicationListQuery = Type.Object({
  derived: Type.Optional(Type.Boolean({ description: 'true: only derived applications; false: only defined ones' })),
  search: Type.Optional(Type.String({ maxLength: 200, description: 'matches the name (case-insensitive)' })),
  ...Page,
});

export const ApplicationDetailQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 1, default: 1, description: 'page of the member resources' })),
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
});

// ---------------------------------------------------------------------------------------------------
// Business services

export const ServiceParams = Type.Object({ tenantID: Uuid, svcID: Uuid });
export const ServiceSubParams = Type.Object({ tenantID: Uuid, serviceID: Uuid });
export const ServiceMemberParams = Type.Object({ tenantID: Uuid, svcID: Uuid, appID: Uuid });

export const ServiceBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(Type.String({ maxLength: 4000 })),
    criticality: StringEnum(CRITICALITIES),
    sla_tier: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 100, description: 'e.g. tier-1, gold, 99.95%' }))),
    owner: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 300, description: 'a person or team' }))),
    application_ids: Type.Optional(Type.Array(Uuid, { maxItems: 1000, uniqueItems: true, description: 'member applications (PUT: replaces them when given)' })),
  },
  { additionalProperties: false },
);

export const AddApplicationsBody = Type.Object({ application_ids: Type.Array(Uuid, { minItems: 1, maxItems: 1000, uniqueItems: true }) }, { additionalProperties: false });

export const ServiceApplication = Type.Object({
  id: Uuid,
  name: Type.String(),
  derived: Type.Boolean(),
  resource_count: Type.Integer(),
  findings_by_severity: SeverityCounts,
  health: Health,
  added_at: Timestamp,
});

export const Service = Type.Object({
  id: Uuid,
  name: Type.String(),
  description: Type.String(),
  criticality: StringEnum(CRITICALITIES),
  sla_tier: Nullable(Type.String()),
  owner: Nullable(Type.String()),
  application_count: Type.Integer(),
  resource_count: Type.Integer({ description: 'distinct resources of all member applications' }),
  findings_by_severity: SeverityCounts,
  health: Health,
  created_by: Type.String(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const ServiceDetail = Type.Object({
  ...Service.properties,
  applications: Type.Array(ServiceApplication),
});

export const ServiceListQuery = Type.Object({
  criticality: Type.Optional(StringEnum(CRITICALITIES)),
  search: Type.Optional(Type.String({ maxLength: 200 })),
  ...Page,
});

export const SuggestBody = Type.Object(
  {
    include_assigned: Type.Optional(Type.Boolean({ description: 'also group applications already in a service (default false)' })),
    min_applications: Type.Optional(Type.Integer({ minimum: 2, maximum: 50, default: 2 })),
  },
  { additionalProperties: false },
);

export const Suggestion = Type.Object({
  name: Type.String(),
  reason: StringEnum(['shared_tag', 'shared_vpc', 'connected'] as const),
  explanation: Type.String(),
  evidence: Type.Object(
    {
      tag_key: Type.Optional(Type.String()),
      tag_value: Type.Optional(Type.String()),
      vpc_id: Type.Optional(Type.String()),
      edges: Type.Optional(Type.Integer({ description: 'edges between the resources of different applications' })),
    },
    { additionalProperties: false },
  ),
  applications: Type.Array(Type.Object({ id: Uuid, name: Type.String(), derived: Type.Boolean(), resource_count: Type.Integer() })),
  service: Type.Object(
    {
      name: Type.String(),
      description: Type.String(),
      criticality: StringEnum(CRITICALITIES),
      sla_tier: Nullable(Type.String()),
      owner: Nullable(Type.String()),
      application_ids: Type.Array(Uuid),
    },
    { description: 'a body ready for POST /services' },
  ),
});

export const SuggestResult = Type.Object({
  items: Type.Array(Suggestion),
  total: Type.Integer(),
  applications_considered: Type.Integer(),
  unassigned_applications: Type.Array(Type.Object({ id: Uuid, name: Type.String() }), { description: 'considered applications no rule grouped' }),
});

// ---------------------------------------------------------------------------------------------------
// Asset groups

export const AssetGroupParams = Type.Object({ tenantID: Uuid, id: Uuid });
export const AssetGroupBody = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 200 }), description: Type.Optional(Type.String({ maxLength: 4000 })), filter: FilterText },
  { additionalProperties: false },
);
export const AssetGroupPatch = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    description: Type.Optional(Type.String({ maxLength: 4000 })),
    filter: Type.Optional(FilterText),
  },
  { additionalProperties: false },
);
export const AssetGroup = Type.Object({
  id: Uuid,
  name: Type.String(),
  description: Type.String(),
  filter: Type.String(),
  member_count: Type.Integer(),
  created_by: Type.String(),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export const AssetGroupListQuery = Type.Object({ search: Type.Optional(Type.String({ maxLength: 200 })), ...Page });
export const MemberNode = Type.Object({ id: Type.String(), name: Type.String(), type: Type.String(), region: Type.String(), account_id: Nullable(Type.String()) });
export const MembersQuery = Type.Object({ ...Page });
export const PreviewBody = Type.Object({ filter: FilterText, ...Page }, { additionalProperties: false });
export const Preview = Paged(MemberNode, { filter: Type.String() });
