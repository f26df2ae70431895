import { Type, type Static, type TSchema } from 'typebox';

/**
 * Schema helpers shaped for OpenAPI 3.0, which has `enum` and `nullable` but neither `const` nor a
 * `null` type; Ajv and fast-json-stringify understand both keywords.
 */
export function StringEnum<const T extends readonly string[]>(values: T, options: Record<string, unknown> = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

export function Nullable<T extends TSchema>(schema: T) {
  return Type.Unsafe<Static<T> | null>({ ...schema, nullable: true });
}

export const Timestamp = Type.Unsafe<string | Date>({ type: 'string', format: 'date-time' });
export const DateOnly = Type.String({ format: 'date', description: 'YYYY-MM-DD' });
export const Uuid = Type.String({ format: 'uuid' });

/**
 * A UUID of any version, either case: what `format: 'uuid'` accepts, for ids checked outside a route
 * schema (token claims, comma-separated answers, CLI flags).
 */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The path parameters of every `/tenants/{tenantID}/…` route that has no other. */
export const TenantParams = Type.Object({ tenantID: Uuid });

/** A free-form JSON object (properties, tags, payloads). */
export const AnyObject = Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true });

export const ErrorBody = Type.Object(
  {
    error: Type.Object({
      code: Type.String(),
      message: Type.String(),
      details: Nullable(AnyObject),
    }),
    retry_after: Type.Optional(Type.Integer()),
  },
  { $id: 'ErrorResponse', description: 'The error envelope of every failed request' },
);

/** Paged list envelope of findings, nodes and most lists. */
export function Paged<T extends TSchema>(item: T, extra: Record<string, TSchema> = {}) {
  return Type.Object({
    items: Type.Array(item),
    total: Type.Integer(),
    page: Type.Integer(),
    per_page: Type.Integer(),
    total_pages: Type.Integer(),
    ...extra,
  });
}

/** Page numbers are bounded: an offset past any real list is a client mistake, not a database error. */
export const MAX_PAGE = 1_000_000;
export const PageNumber = Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 1 }));

export const PageQuery = {
  page: PageNumber,
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
};

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid body or parameters',
  401: 'Missing, invalid, expired or revoked token',
  403: 'Insufficient permissions or no tenant access',
  404: 'Not found, or belongs to another tenant',
  409: 'Conflict with the current state',
  410: 'Gone',
  413: 'Payload too large',
  429: 'Rate limited',
  503: 'Service unavailable',
};

/**
 * Adds the error envelope for the given statuses to a route's response map, so every route documents
 * its failures the same way.
 */
export function withErrors(responses: Record<number, TSchema>, statuses: number[] = []): Record<number, TSchema> {
  const all: Record<number, TSchema> = { ...responses };
  for (const status of new Set([400, 500, ...statuses])) {
    all[status] = Type.Unsafe({ $ref: 'ErrorResponse#', description: ERROR_DESCRIPTIONS[status] ?? 'Error' });
  }
  return all;
}
