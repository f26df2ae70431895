import type { FastifyInstance } from 'fastify';
import { badRequest } from './errors.js';
import { MAX_PROPERTIES_DEPTH, nestsDeeperThan } from './json-depth.js';

/**
 * Guards on request values that the schemas cannot express: JSON bodies nested too deep (see
 * json-depth.ts), and non-finite numbers.
 *
 * Non-finite numbers: Ajv coerces "Infinity" or "1e309" in a query string to Infinity and,
 * with Fastify's options, accepts it as an integer whatever its maximum; JSON.parse turns 1e309 in a
 * body into Infinity too. Either then fails deep inside (SQL, serialisation) instead of as a 400.
 */
const NON_FINITE_TEXT = /^\s*[+-]?(infinity|nan|\d*\.?\d*e[+-]?\d{3,})\s*$/i;
// Only a body with an exponent of three or more digits can hold a number JSON.parse makes infinite.
const HUGE_EXPONENT = /\d[eE][+-]?\d{3}/;

function hasNonFinite(value: unknown, depth = 0): boolean {
  if (typeof value === 'number') return !Number.isFinite(value);
  if (depth > 64 || value === null || typeof value !== 'object') return false;
  for (const item of Array.isArray(value) ? value : Object.values(value)) if (hasNonFinite(item, depth + 1)) return true;
  return false;
}

function hasNonFiniteText(record: unknown): string | null {
  if (!record || typeof record !== 'object') return null;
  for (const [key, value] of Object.entries(record)) {
    const values = Array.isArray(value) ? value : [value];
    if (values.some((v) => typeof v === 'string' && NON_FINITE_TEXT.test(v) && !Number.isFinite(Number(v)))) return key;
  }
  return null;
}

export function installInputGuards(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const key = hasNonFiniteText(request.query) ?? hasNonFiniteText(request.params);
    if (key) throw badRequest(`${key} must be a finite number`, { field: key });
  });
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (nestsDeeperThan(body as string, MAX_PROPERTIES_DEPTH)) return done(badRequest(`the body is nested deeper than ${MAX_PROPERTIES_DEPTH} levels`));
    parseJson(request, body as string, (error, value) => {
      if (error) return done(error);
      if (HUGE_EXPONENT.test(body as string) && hasNonFinite(value)) return done(badRequest('the body holds a number too large to represent'));
      done(null, value);
    });
  });
}
