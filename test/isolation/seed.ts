import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { projectPath } from '../../src/platform/paths.js';
import type { TestApp } from '../harness/app.js';
import { fixtureNode, fixtures, nodeIdOf } from '../harness/compliance.js';
import { call, type Session } from '../harness/identity.js';
import { buildReport, sendReport } from '../agents/helpers.js';
import { multipart, PDF } from '../questionnaires/helpers.js';
import { idpMetadata, makeKeyPair, type TestKeyPair } from '../sso/saml-idp.js';

export interface SeedOptions {
  tenantId: string;
  /** A tenant-admin, signed in to the workspace to fill. */
  admin: Session;
  /** A security analyst of the same tenant, signed in to the same workspace (reviews the admin's assessment). */
  analyst: Session;
  /** Carried by every name, title and text of the workspace's rows, so a leak is recognisable in any response. */
  marker: string;
  /**
   * Tenant-wide objects (integrations and their deliveries, alert rules, custom rules, SSO) carry this
   * marker; null leaves them out. A tenant's second workspace leaves them out: they are the tenant's, not
   * the workspace's, and its events must not reach the tenant's integrations (an integration's deliveries
   * are listed tenant-wide).
   */
  tenantMarker: string | null;
}

let samlKey: TestKeyPair | undefined;

/**
 * Fills one workspace with data of every kind the API keeps, through the API as its users would. Add a
 * step when a module adds a resource or a route parameter names a new kind: the isolation proof refuses
 * to pass while a path parameter of the route table has no seeded victim of its own kind
 * (PARAM_KINDS in tenancy-proof.test.ts).
 */
export interface SeedResult {
  /** The token of the workspace's live outside-respondent link (to an assessment still being answered). */
  linkToken: string;
}

export async function seedWorkspace(t: TestApp, options: SeedOptions): Promise<SeedResult> {
  const { tenantId, admin, analyst, marker, tenantMarker } = options;
  const lower = marker.toLowerCase();
  const base = `/api/v1/tenants/${tenantId}`;
  const send = async (method: 'POST' | 'PUT', url: string, payload: unknown, as: Session = admin) => {
    const res = await call(t.app, as.token, { method, url: `${base}${url}`, payload: payload as object });
    if (res.statusCode >= 300) throw new Error(`seed ${method} ${url}: ${res.statusCode} ${res.body.slice(0, 500)}`);
    return res;
  };
  const post = (url: string, payload: unknown, as: Session = admin) => send('POST', url, payload, as);
  const upload = async (url: string, fields: Record<string, string>, as: Session = admin) => {
    const body = multipart(fields, { filename: `${lower}-evidence.pdf`, contentType: 'application/pdf', content: PDF });
    const res = await call(t.app, as.token, { method: 'POST', url: `${base}${url}`, payload: body.payload, headers: body.headers });
    if (res.statusCode >= 300) throw new Error(`seed upload ${url}: ${res.statusCode} ${res.body.slice(0, 500)}`);
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

  if (tenantMarker) {
    // Tenant-wide: a webhook integration and an alert rule (loopback targets the test allows: each
    // delivery attempt is refused and stays pending), a custom rule, SAML single sign-on. Created before
    // the audit, so the audit's finding.created events become deliveries.
    const hook = (
      await post('/integrations', {
        name: `${tenantMarker} hook`,
        type: 'webhook',
        config: { url: 'https://127.0.0.1:9/hook', secret: `${tenantMarker}-secret-value-0123456789`, events: ['finding.created'] },
      })
    ).json() as { id: string };
    await post(`/integrations/${hook.id}/test`, {});
    await post('/alerts/rules', {
      name: `${tenantMarker} alert`,
      channel: 'webhook',
      url: 'https://127.0.0.1:9/alert',
      events: ['finding.created'],
      secret: `${tenantMarker}-alert-secret`,
    });
    await post('/rules', {
      id: `${tenantMarker.toLowerCase()}-rule`,
      title: `${tenantMarker} rule`,
      description: `${tenantMarker} rule description`,
      severity: 'LOW',
      resource_type: 'aws.s3.bucket',
      framework: 'soc2',
      control_id: 'CC6.1',
      condition: `resource.name == '${tenantMarker} never'`,
      remediation: { summary: `${tenantMarker} remediation`, steps: [{ action: 'Rename it', command: 'true' }] },
    });
    // An open invitation into the tenant (to a name nobody has: nobody may answer it).
    await post('/users', { username: `${tenantMarker.toLowerCase()}-invitee`, role: 'read-only' });
    samlKey ??= makeKeyPair(365);
    await send('PUT', '/sso', {
      provider: 'saml',
      metadata_xml: idpMetadata([samlKey], { entityId: `https://${tenantMarker}.idp.test.example/saml` }),
      app_redirect_url: `https://${tenantMarker}.app.test.example/`,
    });
  }

  // Findings from an audit: one accepted alone, a group accepted.
  await post('/findings/run', {});
  await t.drain();
  const findings = (await call(t.app, admin.token, { url: `${base}/findings?per_page=100`, expect: 200 })).json().items as Array<{ id: string; group_id: string | null }>;
  if (findings.length < 3) throw new Error(`seed audit produced ${findings.length} findings`);
  const expires = new Date(t.clock.now().getTime() + 30 * 86_400_000).toISOString();
  await post(`/findings/${findings[0]!.id}/accept`, { reason: `${marker} accepted`, owner: `${marker}-owner`, expires_at: expires });
  const group = findings.slice(2).find((f) => f.group_id && f.group_id !== findings[0]!.group_id && f.group_id !== findings[1]!.group_id)?.group_id;
  if (!group) throw new Error('seed audit produced no finding group of its own');
  await post(`/findings/groups/${encodeURIComponent(group)}/accept`, { reason: `${marker} group accepted`, owner: `${marker}-owner`, expires_at: expires });

  // POA&M items from a finding and a manual one, with a comment and evidence.
  await post('/poam', { finding_id: findings[1]!.id });
  const manual = (
    await post('/poam', {
      weakness_name: `${marker} weakness`,
      weakness_description: `${marker} description`,
      point_of_contact: `${marker}-poc`,
      severity: 'high',
      control_ids: ['AC-2'],
      scheduled_completion: '2027-03-01',
    })
  ).json() as { id: string };
  await post(`/poam/${manual.id}/comments`, { text: `${marker} comment` });
  await upload(`/poam/${manual.id}/evidence`, { description: `${marker} poam evidence` });

  // Questionnaires: one from a template; a custom one assigned to the admin (answered with evidence,
  // approved with a gap, POA&M generated: control attestations) and to the analyst (submitted, not
  // reviewed, no reviewer named: an approve by anyone else of the tenant would succeed).
  await post('/questionnaires/from-template', { template_id: 'cmmc-l2-at', title: `${marker} questionnaire` });
  const policy = `${lower}-policy`;
  const evidence = `${lower}-evidence`;
  const questionnaire = (
    await post('/questionnaires', {
      title: `${marker} custom questionnaire`,
      description: `${marker} questions`,
      framework: 'nist-800-53',
      questions: [
        { id: policy, text: `${marker} is there a policy?`, type: 'yes_no', required: true, control_mappings: ['nist-800-53:AC-1'] },
        { id: evidence, text: `${marker} upload the policy`, type: 'file_upload', required: true, accepted_types: ['PDF'], control_mappings: ['nist-800-53:AC-2'] },
      ],
    })
  ).json() as { id: string };
  await post(`/questionnaires/${questionnaire.id}/publish`, {});
  const assessments = (await post(`/questionnaires/${questionnaire.id}/assign`, { assignees: [admin.user_id, analyst.user_id], due_date: '2027-01-31' })).json().items as Array<{
    id: string;
    assignee_id: string;
  }>;
  const answer = async (as: Session, policyAnswer: string) => {
    const assessment = assessments.find((a) => a.assignee_id === as.user_id)!;
    const file = (await upload('/attestation-evidence', { assessment_id: assessment.id, question_id: evidence, description: `${marker} attestation evidence` }, as)).json() as {
      id: string;
    };
    await post(
      `/assessments/${assessment.id}/respond`,
      {
        responses: [
          { question_id: policy, answer: policyAnswer, notes: `${marker} notes` },
          { question_id: evidence, answer: file.id },
        ],
      },
      as,
    );
    await post(`/assessments/${assessment.id}/submit`, {}, as);
    return assessment.id;
  };
  const approved = await answer(admin, 'no');
  await post(`/assessments/${approved}/approve`, { notes: `${marker} approved`, gaps: [{ question_id: policy, severity: 'MEDIUM', notes: `${marker} gap` }] }, analyst);
  await post(`/assessments/${approved}/generate-poam`, {});
  await answer(analyst, 'yes');
  // An assessment still being answered, sent to outside respondents: one link live, one revoked.
  const [open] = (await post(`/questionnaires/${questionnaire.id}/assign`, { assignees: [admin.user_id] })).json().items as Array<{ id: string }>;
  const live = (await post(`/assessments/${open!.id}/links`, { name: `${marker} supplier` })).json() as { token: string };
  const ended = (await post(`/assessments/${open!.id}/links`, { name: `${marker} former supplier` })).json() as { link: { id: string } };
  await post(`/assessments/${open!.id}/links/${ended.link.id}/revoke`, undefined);

  // Applications, a business service, an asset group.
  const app = (await post('/applications', { name: `${marker} application`, filter: `tags.owner = "${marker}"` })).json();
  await post('/services', { name: `${marker} service`, criticality: 'high', owner: `${marker}-team`, application_ids: [app.id] });
  const assetGroup = (await post('/asset-groups', { name: `${marker} group`, filter: `tags.owner = "${marker}"` })).json() as { id: string };

  // Background work: an export and a report (run below), a discovery job left pending (startable).
  await post('/exports', { kind: 'drawio' });
  await post('/reports/generate', { format: 'json', asset_group_id: assetGroup.id });
  await post('/jobs', { name: `${marker} discovery`, plugins: ['terraform-state'], config: { 'terraform-state': { state: { version: 4, resources: [] } } } });
  // A scanner import (Prowler's v4 OCSF sample, test/fixtures/imports), named with the marker.
  const prowler = multipart(
    {},
    {
      filename: `${lower}-prowler.ocsf.json`,
      contentType: 'application/json',
      content: readFileSync(projectPath('test', 'fixtures', 'imports', 'prowler4.2.1-one_vuln.ocsf.json')),
    },
  );
  const imported = await call(t.app, admin.token, { method: 'POST', url: `${base}/imports`, payload: prowler.payload, headers: prowler.headers });
  if (imported.statusCode !== 202) throw new Error(`seed upload /imports: ${imported.statusCode} ${imported.body.slice(0, 500)}`);
  // A schedule of the workspace (an audit: a discovery schedule needs a job that reads S3 or AWS).
  await post('/schedules', { name: `${marker} schedule`, kind: 'audit', target: { frameworks: [] }, cron: '0 2 * * *', time_zone: 'Europe/Berlin' });
  // Cloud connections of the workspace (the credentials its discovery reads with): a role and a sealed access key.
  await post('/cloud-connections', { name: `${marker} cloud`, auth: 'assume_role', role_arn: `arn:aws:iam::123456789012:role/${lower}-reader` });
  await post('/cloud-connections', {
    name: `${marker} keys`,
    auth: 'access_key',
    access_key_id: 'AKIASEEDSEEDSEED0000',
    secret_access_key: `${marker}-secret-access-key-0123456789`,
  });

  // API keys of the workspace (tenant-wide objects: the tenant's marker); an agent reporting with one.
  const keyMarker = tenantMarker ?? 'TENANTWIDE';
  await post('/api-keys', { name: `${keyMarker} key`, permissions: ['nodes:read'] });
  const agentKey = (await post('/api-keys', { name: `${keyMarker} agent key`, permissions: ['agents:write'] })).json() as { key: string };
  const agentId = `${marker}-agent`;
  const report = buildReport({ agent_id: agentId });
  // A machine of its own (the host node's id is made of it).
  const machineId = createHash('md5').update(marker).digest('hex');
  report.host = { ...report.host, machine_id: machineId, hostname: `${marker}-host`, fqdn: `${marker}-host.example.internal` };
  const sent = await sendReport(t, agentKey.key, agentId, report);
  if (sent.statusCode !== 200) throw new Error(`seed agent report: ${sent.statusCode} ${sent.body.slice(0, 500)}`);

  await t.drain();
  return { linkToken: live.token };
}
