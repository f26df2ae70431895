import { randomUUID } from 'node:crypto';
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import type { Module } from '../../src/modules/module.js';
import { TenantParams, withErrors } from '../../src/platform/http/schemas.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { call, loginAdmin } from '../harness/identity.js';

/**
 * A route added after this test was written, declaring no 429, no security and a file it produces:
 * the document rules (security, rate limit, media types) must reach it without its saying so.
 */
const laterModule: Module = {
  name: 'later',
  routes: async (app) => {
    app.get(
      '/tenants/:tenantID/later-widgets.csv',
      {
        config: { permission: 'nodes:read' },
        schema: {
          operationId: 'laterWidgetsCsv',
          tags: ['graph'],
          summary: 'A CSV added later',
          params: TenantParams,
          produces: ['text/csv'],
          response: withErrors({ 200: Type.String({ description: 'the file' }) }, [401, 403, 404]),
        },
      },
      async (_request, reply) => reply.type('text/csv').send('a,b\n'),
    );
  },
};

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ extraModules: [laterModule] });
});
afterAll(() => t.close());

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/** OpenAPI writes path parameters as {name}; Fastify as :name. */
function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/** Every documented operation with the route that declares it. */
function operations(doc: any) {
  const found = [];
  for (const route of t.app.routeTable) {
    if ((route.schema as { hide?: boolean } | undefined)?.hide) continue;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods.filter((m) => m !== 'HEAD')) {
      found.push({ route, method, operation: doc.paths[openApiPath(route.url)][method.toLowerCase()] });
    }
  }
  return found;
}

describe('OpenAPI document', () => {
  it('is served as YAML and JSON with the same content', async () => {
    const yamlRes = await t.app.inject({ method: 'GET', url: '/api/v1/openapi.yaml' });
    expect(yamlRes.statusCode).toBe(200);
    expect(yamlRes.headers['content-type']).toMatch(/yaml/);
    const fromYaml = YAML.parse(yamlRes.body);
    const jsonRes = await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    expect(jsonRes.statusCode).toBe(200);
    expect(fromYaml).toEqual(jsonRes.json());
    expect(fromYaml.openapi).toMatch(/^3\.0\./);
    expect(fromYaml.components.schemas.ErrorResponse).toBeDefined();
  });

  it('documents every registered route with request and response schemas', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const problems: string[] = [];
    const routes = t.app.routeTable.filter((r) => r.method !== 'HEAD' && !(r.schema as { hide?: boolean } | undefined)?.hide);
    expect(routes.length).toBeGreaterThan(0);
    for (const route of routes) {
      const methods = (Array.isArray(route.method) ? route.method : [route.method]).filter((m) => m !== 'HEAD');
      const schema = (route.schema ?? {}) as Record<string, unknown>;
      for (const method of methods) {
        const name = `${method} ${route.url}`;
        if (!schema.response) problems.push(`${name}: no response schema`);
        if (route.url.includes(':') && !schema.params) problems.push(`${name}: path parameters without a params schema`);
        const config = route.config as { rawBody?: boolean; bodyless?: boolean } | undefined;
        const takesBody = BODY_METHODS.has(method) && !config?.rawBody && !config?.bodyless;
        if (takesBody && !schema.body && !schema.consumes) problems.push(`${name}: no body schema`);
        const operation = doc.paths?.[openApiPath(route.url)]?.[method.toLowerCase()];
        if (!operation) problems.push(`${name}: missing from the OpenAPI document`);
        else if (!operation.operationId) problems.push(`${name}: no operationId`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('marks authenticated routes with the bearer security scheme and public ones with an empty requirement', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    expect(doc.paths['/healthz'].get.security).toEqual([]);
    for (const { route, method, operation } of operations(doc)) {
      const expected = (route.config as { public?: boolean } | undefined)?.public ? [] : [{ bearerAuth: [] }];
      expect(operation.security, `${method} ${route.url}`).toEqual(expected);
    }
  });

  it('documents 429 with Retry-After and X-RateLimit-* on every operation the rate limiter applies to, from route config', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const limited = doc.components.responses.RateLimited;
    expect(Object.keys(limited.headers).sort()).toEqual(['Retry-After', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']);
    expect(limited.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ErrorResponse' });
    const problems: string[] = [];
    let count = 0;
    for (const { route, method, operation } of operations(doc)) {
      const config = (route.config ?? {}) as { public?: boolean; unlimited?: boolean };
      const rateLimited = !config.public && !config.unlimited;
      const has429 = operation.responses['429']?.$ref === '#/components/responses/RateLimited';
      if (rateLimited !== has429) problems.push(`${method} ${route.url}: rate limited ${rateLimited}, documents RateLimited ${has429}`);
      if (!rateLimited) continue;
      count += 1;
      for (const [status, response] of Object.entries(operation.responses as Record<string, { headers?: object }>)) {
        if (status.startsWith('2') && !Object.hasOwn(response.headers ?? {}, 'X-RateLimit-Remaining')) problems.push(`${method} ${route.url} ${status}: no X-RateLimit headers`);
      }
    }
    expect(problems).toEqual([]);
    expect(count).toBeGreaterThan(150);
    // The login throttle's 429 (a public route) names Retry-After, which rateLimited() sets.
    expect(doc.paths['/api/v1/auth/token'].post.responses['429'].headers['Retry-After']).toBeDefined();
    // A route added later gets them without declaring them.
    const later = doc.paths['/api/v1/tenants/{tenantID}/later-widgets.csv'].get;
    expect(later.responses['429']).toEqual({ $ref: '#/components/responses/RateLimited' });
    expect(later.security).toEqual([{ bearerAuth: [] }]);
  });

  it('documents a file under its media types and every other response, errors included, as JSON (as served)', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const problems: string[] = [];
    for (const { route, method, operation } of operations(doc)) {
      for (const [status, response] of Object.entries(operation.responses as Record<string, { content?: object }>)) {
        if (status === '200' || !response.content) continue;
        const types = Object.keys(response.content);
        if (types.join() !== 'application/json') problems.push(`${method} ${route.url} ${status}: ${types.join(', ')}`);
      }
    }
    expect(problems).toEqual([]);
    const download = doc.paths['/api/v1/tenants/{tenantID}/exports/{jobID}/download'].get.responses;
    expect(Object.keys(download['200'].content)).toEqual(['image/png', 'image/svg+xml', 'application/vnd.jgraph.mxfile+xml']);
    expect(Object.keys(download['404'].content)).toEqual(['application/json']);
    const diagram = doc.paths['/api/v1/tenants/{tenantID}/topology/export/diagram'].get.responses;
    expect(Object.keys(diagram['202'].content)).toEqual(['application/json']);
    const metadata = doc.paths['/api/v1/auth/saml/{slug}/metadata'].get.responses;
    expect(Object.keys(metadata['200'].content)).toEqual(['application/samlmetadata+xml']);
    expect(Object.keys(metadata['404'].content)).toEqual(['application/json']);
    const later = doc.paths['/api/v1/tenants/{tenantID}/later-widgets.csv'].get.responses;
    expect(Object.keys(later['200'].content)).toEqual(['text/csv']);
    expect(Object.keys(later['404'].content)).toEqual(['application/json']);

    // And the server does answer a download's error in JSON.
    const admin = await loginAdmin(t);
    const res = await call(t.app, admin.token, { url: `/api/v1/tenants/${admin.tenant_id}/exports/${randomUUID()}/download`, expect: 404 });
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json().error.code).toBe('NOT_FOUND');
  });

  it('names a server, gives every operation a summary and defines every tag it uses, with a description', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    expect(doc.servers).toEqual([expect.objectContaining({ url: '/' })]);
    const defined = new Map<string, string | undefined>((doc.tags as Array<{ name: string; description?: string }>).map((tag) => [tag.name, tag.description]));
    const problems: string[] = [];
    for (const { route, method, operation } of operations(doc)) {
      if (!operation.summary) problems.push(`${method} ${route.url}: no summary`);
      for (const tag of operation.tags ?? []) {
        if (!defined.has(tag)) problems.push(`${method} ${route.url}: tag ${tag} not defined`);
        else if (!defined.get(tag)) problems.push(`tag ${tag}: no description (src/platform/http/openapi-tags.ts)`);
      }
    }
    expect([...new Set(problems)]).toEqual([]);
  });
});
