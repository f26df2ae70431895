import type { TestApp } from './app.js';
import { call } from './identity.js';
import { loadRuleFixtures, type FixtureResource } from '../fixtures/rules/fixtures.js';
import { builtinRule } from '../../src/modules/compliance/rule-catalog.js';

export const fixtures = loadRuleFixtures();

/** A node input built from a rule fixture's configuration item (as a discovery plugin would). */
export function fixtureNode(ruleId: string, which: 'violating' | 'compliant', nativeId?: string) {
  const rule = builtinRule(ruleId);
  const fixture = fixtures.get(ruleId);
  if (!rule || !fixture) throw new Error(`no rule or fixture ${ruleId}`);
  const resource: FixtureResource = fixture[which];
  const p = resource.properties;
  return {
    provider: 'aws',
    region: p.awsRegion,
    type: rule.resource_type,
    native_id: nativeId ?? p.resourceId,
    name: p.resourceName ?? p.resourceId,
    account_id: p.accountId,
    properties: p,
    tags: resource.tags ?? {},
  };
}

export function nodeIdOf(node: { provider: string; region: string; type: string; native_id: string }): string {
  return `${node.provider}:${node.region}:${node.type}:${node.native_id}`;
}

/** Starts an audit through the API and runs the queue until it is done; returns the finished run. */
export async function audit(t: TestApp, token: string, tenantId: string, body: Record<string, unknown> = {}) {
  const started = await call(t.app, token, { method: 'POST', url: `/api/v1/tenants/${tenantId}/findings/run`, payload: body, expect: 202 });
  await t.drain();
  const run = await call(t.app, token, { url: `/api/v1/tenants/${tenantId}/findings/runs/${started.json().job_id}`, expect: 200 });
  return { started: started.json(), run: run.json() };
}

/** Outbox events of a type for a tenant, oldest first. */
export async function events(t: TestApp, tenantId: string, type?: string) {
  let query = t.deps.database.db.selectFrom('outbox_events').selectAll().where('tenant_id', '=', tenantId).orderBy('seq');
  if (type) query = query.where('type', '=', type);
  return query.execute();
}
