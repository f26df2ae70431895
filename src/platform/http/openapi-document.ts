import { TAG_DESCRIPTIONS } from './openapi-tags.js';

/**
 * Marks, in a route's transformed schema, an operation the per-tenant rate limiter applies to
 * (authenticated and not `config.unlimited`: the authenticator's own rule). `finishDocument` turns
 * it into the 429 response and the rate-limit headers, then removes it.
 */
export const RATE_LIMITED = 'x-controlgraph-rate-limited';
/** Marks a GET whose 200 is a page (pageShapeOf): it documents the Link header. */
export const PAGED = 'x-controlgraph-paged';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
const JSON_MEDIA = 'application/json';

type Json = Record<string, unknown>;
interface MediaType {
  schema?: unknown;
}
interface Response {
  description?: string;
  headers?: Record<string, unknown>;
  content?: Record<string, MediaType>;
  $ref?: string;
}
interface Operation {
  tags?: string[];
  responses?: Record<string, Response>;
  [RATE_LIMITED]?: boolean;
  [PAGED]?: boolean;
}

const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': {
    description: "Requests per minute of the tenant's plan",
    schema: { type: 'integer' },
  },
  'X-RateLimit-Remaining': {
    description: 'Requests left in the bucket after this one',
    schema: { type: 'integer' },
  },
  'X-RateLimit-Reset': {
    description: 'Unix time (seconds) when the bucket is full again',
    schema: { type: 'integer' },
  },
};
const RETRY_AFTER = {
  description: 'Seconds to wait before the next request (also `retry_after` in the body)',
  schema: { type: 'integer' },
};
const LINK = {
  description:
    'RFC 8288 links to the first, previous, next and last pages (`<…>; rel="next"`, …): this request with only its paging parameters changed. ' +
    'prev is absent on the first page, next on the last.',
  schema: { type: 'string' },
};
const headerRefs = (names: string[]) => Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));

/**
 * The document-wide rules applied after @fastify/swagger has built the document from the route
 * schemas, so that a route added later follows them without saying so:
 * - one server (this service; paths carry the /api/v1 prefix), and every tag an operation names
 *   defined at the top level with its description;
 * - a route's `produces` names the media types of its 200 response (the file); every other response
 *   is JSON (errors always are, whatever the route serves on success);
 * - a paged list (GET) documents its Link header;
 * - every operation the rate limiter applies to documents 429 with `Retry-After` and the
 *   `X-RateLimit-*` headers, which its successful responses carry too; any other 429 (the login
 *   throttle) documents `Retry-After`.
 */
export function finishDocument(document: Json): Json {
  const paths = (document.paths ?? {}) as Record<string, Record<string, Operation>>;
  const tags = new Set<string>();
  for (const item of Object.values(paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      for (const tag of operation.tags ?? []) tags.add(tag);
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        if (status !== '200') onlyJson(response);
      }
      const ok = operation.responses?.['200'];
      if (operation[PAGED] && ok) ok.headers = { ...ok.headers, ...headerRefs(['Link']) };
      delete operation[PAGED];
      if (operation[RATE_LIMITED]) documentRateLimit(operation);
      delete operation[RATE_LIMITED];
      // Every 429 is built by rateLimited(), which sets Retry-After (the login throttle's too).
      const tooMany = operation.responses?.['429'];
      if (tooMany && !tooMany.$ref) tooMany.headers = { ...tooMany.headers, ...headerRefs(['Retry-After']) };
    }
  }
  const components = (document.components ?? {}) as Json;
  return {
    ...document,
    servers: [{ url: '/', description: 'This service (the document is served by the API it describes)' }],
    tags: [...tags].sort().map((name) => (TAG_DESCRIPTIONS[name] ? { name, description: TAG_DESCRIPTIONS[name] } : { name })),
    components: {
      ...components,
      headers: { ...(components.headers as Json | undefined), ...RATE_LIMIT_HEADERS, 'Retry-After': RETRY_AFTER, Link: LINK },
      responses: {
        ...(components.responses as Json | undefined),
        RateLimited: {
          description: "Rate limited: the tenant's bucket is empty",
          headers: headerRefs(['Retry-After', ...Object.keys(RATE_LIMIT_HEADERS)]),
          content: { [JSON_MEDIA]: { schema: { $ref: '#/components/schemas/ErrorResponse' } } },
        },
      },
    },
  };
}

/** A response that is not the route's file is JSON: one media type, the schema it had. */
function onlyJson(response: Response): void {
  const content = response.content;
  if (!content) return;
  const types = Object.keys(content);
  if (types.length === 1 && types[0] === JSON_MEDIA) return;
  const media = content[JSON_MEDIA] ?? content[types[0]!]!;
  response.content = { [JSON_MEDIA]: media };
}

function documentRateLimit(operation: Operation): void {
  const responses = (operation.responses ??= {});
  responses['429'] = { $ref: '#/components/responses/RateLimited' };
  for (const [status, response] of Object.entries(responses)) {
    if (!status.startsWith('2') || response.$ref) continue;
    response.headers = { ...response.headers, ...headerRefs(Object.keys(RATE_LIMIT_HEADERS)) };
  }
}
