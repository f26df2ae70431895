import type { TestApp } from '../harness/app.js';
import { fixtureNode, fixtures, nodeIdOf } from '../harness/compliance.js';
import { call } from '../harness/identity.js';

/**
 * Fills one workspace with data of every kind the API keeps, through the API as its owner would, each
 * name carrying `marker` so a leak is recognisable in any response. Add a step when a module adds a
 * resource: the isolation proof then covers its routes with real rows.
 */
export async function seedWorkspace(t: TestApp, token: string, tenantId: string, marker: string): Promise<void> {
  const base = `/api/v1/tenants/${tenantId}`;
  const post = async (url: string, payload: unknown) => {
    const res = await call(t.app, token, { method: 'POST', url: `${base}${url}`, payload: payload as object });
    if (res.statusCode >= 300) throw new Error(`seed POST ${url}: ${res.statusCode} ${res.body.slice(0, 500)}`);
    return res;
  };

  // Graph: violating resources of a few rules, named and identified with the marker, and an edge.
  const nodes = [...fixtures.keys()].slice(0, 4).map((ruleId, i) => {
    const node = fixtureNode(ruleId, 'violating', `${marker}-res-${i}`);
    return { ...node, name: `${marker} resource ${i}`, tags: { ...node.tags, application: `${marker}-app`, owner: marker } };
  });
  await post('/nodes', { nodes });
  const ids = nodes.map(nodeIdOf);
  await post('/edges', { edges: [{ source: ids[0], target: ids[1], type: 'contains' }] });

  // Findings from an audit, one accepted.
  await post('/findings/run', {});
  await t.drain();
  const findings = (await call(t.app, token, { url: `${base}/findings?per_page=100`, expect: 200 })).json().items as Array<{ id: string }>;
  if (findings.length < 2) throw new Error(`seed audit produced ${findings.length} findings`);
  const expires = new Date(t.clock.now().getTime() + 30 * 86_400_000).toISOString();
  await post(`/findings/${findings[0]!.id}/accept`, { reason: `${marker} accepted`, owner: `${marker}-owner`, expires_at: expires });

  // POA&M item from a finding, and a manual one.
  await post('/poam', { finding_id: findings[1]!.id });
  await post('/poam', { weakness_name: `${marker} weakness`, weakness_description: `${marker} description`, point_of_contact: `${marker}-poc`, severity: 'high', control_ids: ['AC-2'], scheduled_completion: '2027-03-01' });

  // Questionnaire from a template; applications, a business service, an asset group.
  await post('/questionnaires/from-template', { template_id: 'cmmc-l2-at', title: `${marker} questionnaire` });
  const app = (await post('/applications', { name: `${marker} application`, filter: `tags.owner = "${marker}"` })).json();
  await post('/services', { name: `${marker} service`, criticality: 'high', owner: `${marker}-team`, application_ids: [app.id] });
  await post('/asset-groups', { name: `${marker} group`, filter: `tags.owner = "${marker}"` });

  // Event delivery: a webhook integration (to a loopback address the test allows; never delivered).
  await post('/integrations', {
    name: `${marker} hook`,
    type: 'webhook',
    config: { url: 'https://127.0.0.1:9/hook', secret: `${marker}-secret-value-0123456789`, events: ['finding.created'] },
  });

  // A background export job and an API key.
  await post('/exports', { kind: 'drawio' });
  await post('/api-keys', { name: `${marker} key`, permissions: ['nodes:read'] });
}
