import type { TestApp } from './app.js';
import { call } from './identity.js';

/** An AWS node input shaped like an AWS Config configuration item. */
export function awsNode(type: string, nativeId: string, overrides: Record<string, unknown> = {}) {
  return {
    provider: 'aws',
    region: 'us-east-1',
    type,
    native_id: nativeId,
    name: nativeId,
    account_id: '123456789012',
    properties: { configuration: {}, supplementaryConfiguration: {}, relationships: [] },
    tags: {},
    ...overrides,
  };
}

export async function putNodes(t: TestApp, token: string, tenantId: string, nodes: unknown[]) {
  const res = await call(t.app, token, { method: 'POST', url: `/api/v1/tenants/${tenantId}/nodes`, payload: { nodes }, expect: 201 });
  return res.json() as { items: Array<{ id: string }>; created: number; updated: number };
}

export async function putEdges(t: TestApp, token: string, tenantId: string, edges: unknown[]) {
  const res = await call(t.app, token, { method: 'POST', url: `/api/v1/tenants/${tenantId}/edges`, payload: { edges }, expect: 201 });
  return res.json() as { items: Array<{ id: string }>; created: number; updated: number };
}
