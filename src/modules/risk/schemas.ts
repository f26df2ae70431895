import { Type } from 'typebox';
import { Nullable, Paged, StringEnum, Timestamp, Uuid, PageNumber } from '../../platform/http/schemas.js';

export const AcceptanceBody = Type.Object(
  {
    reason: Type.Optional(Type.String({ maxLength: 4000 })),
    owner: Type.Optional(Type.String({ maxLength: 300 })),
    expires_at: Type.Optional(Type.String({ maxLength: 64, description: 'ISO 8601; in the future, at most 365 days out' })),
  },
  { additionalProperties: false },
);

export const Acceptance = Type.Object({
  id: Uuid,
  scope: StringEnum(['finding', 'group'] as const),
  finding_id: Nullable(Type.String()),
  group_id: Type.String(),
  group_label: Nullable(Type.String()),
  owner: Type.String(),
  reason: Type.String(),
  expires_at: Timestamp,
  state: StringEnum(['active', 'partial', 'expired', 'revoked'] as const, {
    description: 'partial: a live group acceptance whose group has open findings that appeared after it',
  }),
  orphaned: Type.Boolean({ description: 'live, but none of its snapshot findings is still open' }),
  snapshot: Type.Object({
    finding_ids: Type.Array(Type.String()),
    resource_ids: Type.Array(Type.String()),
    controls: Type.Array(Type.String({ description: '<framework>:<control_id>' })),
  }),
  created_by: Type.String(),
  created_at: Timestamp,
  revoked_at: Nullable(Timestamp),
  revoked_by: Nullable(Type.String()),
});

const Counts = {
  active: Type.Integer({ description: 'live acceptances (active or partial)' }),
  expired: Type.Integer(),
  revoked: Type.Integer(),
  orphaned: Type.Integer(),
};
export const AcceptanceList = Paged(Acceptance, {
  ...Counts,
  counts: Type.Object({ total: Type.Integer({ description: 'all acceptances of the workspace' }), ...Counts }),
});

export const AcceptanceListQuery = Type.Object({
  state: Type.Optional(StringEnum(['active', 'partial', 'expired', 'revoked', 'orphaned'] as const)),
  scope: Type.Optional(StringEnum(['finding', 'group'] as const)),
  owner: Type.Optional(Type.String({ maxLength: 300 })),
  page: PageNumber,
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
});

export const FindingParams = Type.Object({ tenantID: Uuid, findingID: Type.String({ minLength: 3, maxLength: 1200 }) });
export const GroupParams = Type.Object({ tenantID: Uuid, groupID: Type.String({ minLength: 1, maxLength: 100 }) });
export const AcceptanceParams = Type.Object({ tenantID: Uuid, acceptanceID: Uuid });
