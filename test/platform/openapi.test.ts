import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { createTestApp, type TestApp } from '../harness/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/** OpenAPI writes path parameters as {name}; Fastify as :name. */
function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
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

  it('marks authenticated routes with the bearer security scheme and leaves public ones open', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    expect(doc.paths['/healthz'].get.security).toBeUndefined();
    for (const route of t.app.routeTable) {
      if ((route.config as { public?: boolean } | undefined)?.public) continue;
      if ((route.schema as { hide?: boolean } | undefined)?.hide) continue;
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      for (const method of methods.filter((m) => m !== 'HEAD')) {
        expect(doc.paths[openApiPath(route.url)][method.toLowerCase()].security, `${method} ${route.url}`).toEqual([{ bearerAuth: [] }]);
      }
    }
  });
});
