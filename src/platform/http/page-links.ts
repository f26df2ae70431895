import type { FastifyInstance, FastifyRequest } from 'fastify';

/**
 * RFC 8288 `Link` headers for every paged list, built here from the page the handler returns, so a
 * list added later gets them without asking. Two envelopes are recognised:
 * - `{items, total, page, per_page, total_pages}` (Paged): links by `page` and `per_page`;
 * - `{items, total, limit, offset, has_more}` (GET /exports): links by `limit` and `offset`;
 * - `{items, page: null, per_page, next_cursor}` (a findings list asked for by cursor): links by `cursor`;
 * or a resource with exactly one Paged property (the list the request's `page` moves through).
 * Which routes answer a page is read from their response schema (pageShapeOf).
 * Each link is the request's own path and query with only the paging parameters changed, so filters
 * and sort orders carry over. Links are path-absolute references (RFC 3986 section 4.2), resolved
 * against the URL the client called, whatever host or proxy it went through.
 */

interface NumberedPage {
  items: unknown[];
  total: number;
  page: number;
  per_page: number;
  total_pages: number;
}

interface OffsetPage {
  items: unknown[];
  total: number;
  limit: number | null;
  offset: number;
  has_more: boolean;
}

type Relation = 'first' | 'prev' | 'next' | 'last';

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

const isInteger = (value: unknown): value is number => Number.isInteger(value);

function isNumberedPage(body: Record<string, unknown>): body is Record<string, unknown> & NumberedPage {
  return Array.isArray(body.items) && isInteger(body.total) && isInteger(body.page) && isInteger(body.per_page) && isInteger(body.total_pages);
}

function isOffsetPage(body: Record<string, unknown>): body is Record<string, unknown> & OffsetPage {
  return Array.isArray(body.items) && isInteger(body.total) && (body.limit === null || isInteger(body.limit)) && isInteger(body.offset) && typeof body.has_more === 'boolean';
}

/** A request target split as received: the path untouched (no URL normalisation), the query parsed. */
interface Target {
  path: string;
  query: string;
}

/** The request's path and query with the given parameters set (in place when present) and others kept. */
function linkTo(target: Target, set: Record<string, number | string | null>): string {
  const params = new URLSearchParams(target.query);
  for (const [name, value] of Object.entries(set)) {
    if (value === null) params.delete(name);
    else params.set(name, String(value));
  }
  const query = params.toString();
  return query ? `${target.path}?${query}` : target.path;
}

function format(links: Array<[Relation, string]>): string {
  return links.map(([rel, href]) => `<${href}>; rel="${rel}"`).join(', ');
}

/** Links of a numbered page: `prev` leads back into range from a page past the end. */
export function numberedPageLinks(url: Target, page: NumberedPage): string {
  const last = Math.max(page.total_pages, 1);
  const at = (n: number) => linkTo(url, { page: n, per_page: page.per_page });
  const links: Array<[Relation, string]> = [['first', at(1)]];
  if (page.page > 1) links.push(['prev', at(Math.min(page.page - 1, last))]);
  if (page.page < page.total_pages) links.push(['next', at(page.page + 1)]);
  links.push(['last', at(last)]);
  return format(links);
}

/** Links of an offset page; without a limit (or with 0) the whole list is one page. */
export function offsetPageLinks(url: Target, page: OffsetPage): string {
  const limit = page.limit;
  if (!limit) {
    const whole = linkTo(url, { offset: null });
    return format([
      ['first', whole],
      ['last', whole],
    ]);
  }
  const at = (offset: number) => linkTo(url, { limit, offset });
  const links: Array<[Relation, string]> = [['first', at(0)]];
  if (page.offset > 0) links.push(['prev', at(Math.max(0, page.offset - limit))]);
  if (page.offset + limit < page.total) links.push(['next', at(page.offset + limit)]);
  links.push(['last', at(page.total > 0 ? Math.floor((page.total - 1) / limit) * limit : 0)]);
  return format(links);
}

/**
 * A page asked for by cursor (keyset paging: the findings lists): `page` is null and `next_cursor`
 * says where the next page starts. Links: `first` (the list from its start, by number) and `next`
 * (this request with the cursor moved) unless this is the last page; no `prev` or `last`, which a
 * cursor cannot name.
 */
interface CursorPage {
  items: unknown[];
  page: null;
  per_page: number;
  next_cursor: string | null;
}

function isCursorPage(body: Record<string, unknown>): body is Record<string, unknown> & CursorPage {
  return Array.isArray(body.items) && body.page === null && isInteger(body.per_page) && (body.next_cursor === null || typeof body.next_cursor === 'string');
}

export function cursorPageLinks(url: Target, page: CursorPage): string {
  const links: Array<[Relation, string]> = [['first', linkTo(url, { cursor: null, page: 1, per_page: page.per_page })]];
  if (page.next_cursor !== null) links.push(['next', linkTo(url, { cursor: page.next_cursor, per_page: page.per_page })]);
  return format(links);
}

/** Where a route's 200 response holds its page, read from the response schema once per route. */
export interface PageShape {
  /** `null`: the body is the page; otherwise the property of the body that is. */
  property: string | null;
}

const propertyNames = (schema: unknown): string[] =>
  schema && typeof schema === 'object' && 'properties' in schema && schema.properties && typeof schema.properties === 'object' ? Object.keys(schema.properties) : [];

function isEnvelopeSchema(schema: unknown, numberedOnly: boolean): boolean {
  const names = propertyNames(schema);
  const has = (...wanted: string[]) => wanted.every((name) => names.includes(name));
  return has('items', 'total') && (has('page', 'per_page', 'total_pages') || (!numberedOnly && has('limit', 'offset', 'has_more')));
}

/**
 * The page of a response schema: the body itself when it is an envelope, or its one property that
 * is a numbered page (a resource that pages a list of its own: an application's resources, the
 * controls of /controls/status); null otherwise. The OpenAPI document documents Link from the same
 * answer (platform/http/openapi.ts), so the two cannot disagree.
 */
export function pageShapeOf(schema: unknown): PageShape | null {
  if (isEnvelopeSchema(schema, false)) return { property: null };
  const properties = (schema as { properties?: Record<string, unknown> } | undefined)?.properties ?? {};
  const nested = Object.keys(properties).filter((name) => isEnvelopeSchema(properties[name], true));
  return nested.length === 1 ? { property: nested[0]! } : null;
}

const shapes = new WeakMap<object, PageShape | null>();

function routePageShape(request: FastifyRequest): PageShape | null {
  const schema = (request.routeOptions.schema?.response as Record<string, unknown> | undefined)?.['200'];
  if (!schema || typeof schema !== 'object') return null;
  let shape = shapes.get(schema);
  if (shape === undefined) {
    shape = pageShapeOf(schema);
    shapes.set(schema, shape);
  }
  return shape;
}

/** The Link header value for a response body, or null when the body is not a page. */
export function pageLinksOf(request: FastifyRequest, body: unknown): string | null {
  const shape = routePageShape(request);
  if (!shape || !body || typeof body !== 'object') return null;
  const page = shape.property === null ? body : (body as Record<string, unknown>)[shape.property];
  if (!page || typeof page !== 'object' || Array.isArray(page)) return null;
  const record = page as Record<string, unknown>;
  const at = request.url.indexOf('?');
  const url = at < 0 ? { path: request.url, query: '' } : { path: request.url.slice(0, at), query: request.url.slice(at + 1) };
  if (isCursorPage(record)) return cursorPageLinks(url, record);
  if (isNumberedPage(record)) return numberedPageLinks(url, record);
  if (isOffsetPage(record)) return offsetPageLinks(url, record);
  return null;
}

/**
 * Adds the Link header to every successful GET whose route answers a page. A POST that answers a
 * page (a preview) gets none: a link is followed with GET.
 */
export function installPageLinks(app: FastifyInstance): void {
  app.addHook('preSerialization', async (request, reply, payload) => {
    if (request.method !== 'GET' || reply.statusCode !== 200) return payload;
    const links = pageLinksOf(request, payload);
    // The path is echoed as received: one that is not plain ASCII gets no header rather than a 500.
    if (links && PRINTABLE_ASCII.test(links)) reply.header('link', links);
    return payload;
  });
}
