import type { TestApp } from '../harness/app.js';
import { call } from '../harness/identity.js';

type NodeInput = { provider: string; region: string; type: string; native_id: string; name: string; properties: Record<string, any>; tags: Record<string, unknown> };

/** A copy of a node input with other tags (replacing them) and configuration fields merged in. */
export function shaped<T extends NodeInput>(
  node: T,
  changes: { tags?: Record<string, string>; configuration?: Record<string, unknown>; properties?: Record<string, unknown>; name?: string },
): T {
  const copy = structuredClone(node);
  if (changes.tags) copy.tags = changes.tags;
  if (changes.name) copy.name = changes.name;
  if (changes.configuration) copy.properties.configuration = { ...(copy.properties.configuration ?? {}), ...changes.configuration };
  if (changes.properties) Object.assign(copy.properties, changes.properties);
  return copy;
}

/** JSON requests against one tenant, as one token. */
export function client(t: TestApp, tenantId: string, token: string) {
  const base = `/api/v1/tenants/${tenantId}`;
  return {
    async get(path: string, expect = 200) {
      return (await call(t.app, token, { url: `${base}${path}`, expect })).json();
    },
    async post(path: string, payload: unknown, expect = 200) {
      return (await call(t.app, token, { method: 'POST', url: `${base}${path}`, payload: payload as object, expect })).json();
    },
    async put(path: string, payload: unknown, expect = 200) {
      return (await call(t.app, token, { method: 'PUT', url: `${base}${path}`, payload: payload as object, expect })).json();
    },
    async patch(path: string, payload: unknown, expect = 200) {
      return (await call(t.app, token, { method: 'PATCH', url: `${base}${path}`, payload: payload as object, expect })).json();
    },
    async del(path: string, expect = 204) {
      const res = await call(t.app, token, { method: 'DELETE', url: `${base}${path}`, expect });
      return res.body ? res.json() : null;
    },
  };
}

export type Client = ReturnType<typeof client>;

export const SEVERITIES = ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'INFO'] as const;

/** Active findings by severity of some resources, counted through GET /findings (the reference). */
export async function activeBySeverity(api: Client, resourceIds: string[]): Promise<Record<string, number>> {
  const counts: Record<string, number> = { CRITICAL: 0, HIGH: 0, MEDIUM: 0, LOW: 0, INFO: 0 };
  for (const id of resourceIds) {
    const page = await api.get(`/findings?per_page=500&resource_id=${encodeURIComponent(id)}`);
    for (const f of page.items as Array<{ severity: string; status: string }>) counts[f.severity]!++;
  }
  return counts;
}

export function expectedHealth(counts: Record<string, number>): 'Critical' | 'Warning' | 'Healthy' {
  if (counts.CRITICAL! > 0) return 'Critical';
  if (counts.HIGH! > 0) return 'Warning';
  return 'Healthy';
}
