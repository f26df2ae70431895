import type { FastifyRequest, FastifySchemaValidationError } from 'fastify';

/**
 * Ajv's validation errors, turned into issues a client can act on:
 *
 * - an enum violation names the allowed values (Ajv's own text is only "must be equal to one of the
 *   allowed values") and the value given;
 * - a value that must match one of several schemas (`anyOf`/`oneOf`: one node or {nodes: [...]})
 *   reports only the errors of the alternative the value meant, not those of every alternative
 *   plus "must match a schema in anyOf".
 */

export interface ValidationIssue {
  path: string;
  message: string;
  allowed_values?: unknown[];
}

type Location = 'body' | 'querystring' | 'params' | 'headers';

/** At most this many allowed values are spelled out in a message (all are in allowed_values). */
const LISTED_VALUES = 30;
/** Errors that say the value has another shape, not that it is a wrong value of the right shape. */
const SHAPE_KEYWORDS = new Set(['required', 'additionalProperties', 'type']);

function pointer(path: string): string[] {
  return path === ''
    ? []
    : path
        .slice(1)
        .split('/')
        .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function at(root: unknown, segments: string[]): unknown {
  let node = root;
  for (const segment of segments) {
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, segment)) return undefined;
    node = (node as Record<string, unknown>)[segment];
  }
  return node;
}

function requestPart(request: FastifyRequest, where: Location): unknown {
  switch (where) {
    case 'body':
      return request.body;
    case 'querystring':
      return request.query;
    case 'params':
      return request.params;
    case 'headers':
      return request.headers;
  }
}

/** The schema the route declared for that part of the request, if it can be walked. */
function routeSchema(request: FastifyRequest, where: Location): unknown {
  return (request.routeOptions?.schema as Record<string, unknown> | undefined)?.[where];
}

/** How well the value fits one alternative: its properties the value has, then how deep the branch got. */
function fit(errors: FastifySchemaValidationError[], union: FastifySchemaValidationError, branch: unknown, value: unknown): [number, number] {
  let shared = 0;
  const properties = (branch as { properties?: Record<string, unknown> } | undefined)?.properties;
  if (properties && value && typeof value === 'object' && !Array.isArray(value)) {
    for (const key of Object.keys(value)) if (Object.hasOwn(properties, key)) shared++;
  }
  const base = pointer(union.instancePath).length;
  // A type error on the value itself means the value is not of that alternative's type at all: it
  // fits worse than an alternative of its type missing a property ({} for "text or {summary, steps}").
  const depth = (e: FastifySchemaValidationError) => pointer(e.instancePath).length - base;
  const reach = Math.max(...errors.map((e) => (e.keyword === 'type' && depth(e) === 0 ? -1 : 2 * depth(e) + (SHAPE_KEYWORDS.has(e.keyword) ? 0 : 1))));
  return [shared, reach];
}

/**
 * Replaces each failed anyOf/oneOf (innermost first) by the errors of the alternative that fits the
 * value best; when two fit equally well, nothing is dropped (the client sees every alternative).
 */
function meantAlternatives(errors: FastifySchemaValidationError[], request: FastifyRequest, where: Location): FastifySchemaValidationError[] {
  let list = errors;
  const unions = errors.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf').sort((a, b) => b.schemaPath.length - a.schemaPath.length);
  for (const union of unions) {
    const prefix = `${union.schemaPath}/`;
    const branches = new Map<string, FastifySchemaValidationError[]>();
    for (const e of list) {
      if (!e.schemaPath.startsWith(prefix)) continue;
      const index = e.schemaPath.slice(prefix.length).split('/')[0]!;
      branches.set(index, [...(branches.get(index) ?? []), e]);
    }
    if (branches.size < 2) continue;
    // The union's schemaPath ("#/anyOf", "#/properties/x/anyOf") points at its list of alternatives.
    const schemas = at(routeSchema(request, where), pointer(union.schemaPath.replace(/^#/, '')));
    const value = at(requestPart(request, where), pointer(union.instancePath));
    const ranked = [...branches].map(([index, errs]) => ({ errs, score: fit(errs, union, Array.isArray(schemas) ? schemas[Number(index)] : undefined, value) }));
    ranked.sort((a, b) => b.score[0] - a.score[0] || b.score[1] - a.score[1]);
    const [best, second] = ranked;
    if (best!.score[0] === second!.score[0] && best!.score[1] === second!.score[1]) continue;
    const keep = new Set(best!.errs);
    list = list.filter((e) => keep.has(e) || (e !== union && !e.schemaPath.startsWith(prefix)));
  }
  return list;
}

function describe(e: FastifySchemaValidationError, request: FastifyRequest, where: Location): ValidationIssue {
  const params = (e.params ?? {}) as Record<string, unknown>;
  // Ajv names the missing or extra property in params, not in the path: fold it in.
  const property = (params.missingProperty ?? params.additionalProperty) as string | undefined;
  const base = e.instancePath || '';
  const path = property ? `${base}/${property}` : base || '/';
  if (e.keyword === 'enum' && Array.isArray(params.allowedValues)) {
    const allowed = params.allowedValues as unknown[];
    const shown = allowed.slice(0, LISTED_VALUES).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
    const more = allowed.length > LISTED_VALUES ? ` and ${allowed.length - LISTED_VALUES} more` : '';
    const given = at(requestPart(request, where), pointer(e.instancePath));
    const text = given === undefined ? undefined : JSON.stringify(given);
    const got = text === undefined ? '' : ` (got ${text.length > 100 ? `${text.slice(0, 100)}…` : text})`;
    return { path, message: `must be one of ${shown.join(', ')}${more}${got}`, allowed_values: allowed };
  }
  return { path, message: e.message ?? 'is invalid' };
}

export function validationIssues(errors: FastifySchemaValidationError[], request: FastifyRequest, where: string): ValidationIssue[] {
  const location = where as Location;
  return meantAlternatives(errors, request, location).map((e) => describe(e, request, location));
}
