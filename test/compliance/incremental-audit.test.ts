import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, fresh, type TenantFixture } from '../harness/identity.js';
import { awsNode, putEdges, putNodes } from '../harness/graph.js';
import { audit, fixtureNode, nodeIdOf } from '../harness/compliance.js';
import { builtinRules, ruleTouches } from '../../src/modules/compliance/rule-catalog.js';

// Re-audits do only what changed (issue 23 item 3, audit/incremental.ts): a node whose input (what a
// rule reads of it, and its neighbours over the edges its rules group by) and rule-set version are
// unchanged since an audit evaluated it is not evaluated or written again.

let t: TestApp;
beforeAll(async () => {
  // A budget the built-in rules stay far below, and the nested condition below exceeds.
  t = await createTestApp({ config: { ruleBudgetMs: 200 } });
});
afterAll(() => t.close());

/** A tenant of its own per test group: the run counts are the group's alone. */
async function freshTenant() {
  const tenant = await buildTenant(t);
  return { tenant, token: tenant.users['security-analyst'].token };
}

/** Every finding row and unknown evaluation of the workspace, and how many events the tenant has. */
async function snapshot(tenant: TenantFixture) {
  const db = t.deps.database.db;
  const findings = await db.selectFrom('finding_rows').selectAll().where('workspace_id', '=', tenant.defaultWorkspaceId).orderBy('id').execute();
  const unknowns = await db.selectFrom('evaluation_unknowns').selectAll().where('workspace_id', '=', tenant.defaultWorkspaceId).orderBy('rule_id').orderBy('resource_id').execute();
  const events = await db
    .selectFrom('outbox_events')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('tenant_id', '=', tenant.id)
    .executeTakeFirstOrThrow();
  return { findings, unknowns, events: Number(events.n) };
}

/** A finding's root-cause group as stored (the API shows its id; the groups list shows the cause). */
const groupCause = async (tenant: TenantFixture, id: string) =>
  (await t.deps.database.db.selectFrom('finding_rows').select('group_cause').where('workspace_id', '=', tenant.defaultWorkspaceId).where('id', '=', id).executeTakeFirstOrThrow())
    .group_cause;

const finding = async (token: string, tenant: TenantFixture, id: string) =>
  (await call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/findings/${encodeURIComponent(id)}`, expect: 200 })).json();

/** One node per built-in rule's violating fixture, and one per compliant fixture. */
const estate = () => builtinRules().flatMap((r) => [fixtureNode(r.id, 'violating', `${r.id}-bad`), fixtureNode(r.id, 'compliant', `${r.id}-good`)]);

describe('an unchanged estate', () => {
  it('is not evaluated again, and no finding, unknown or event changes', async () => {
    const { tenant, token } = await freshTenant();
    const nodes = estate();
    await putNodes(t, token, tenant.id, nodes);
    const first = (await audit(t, token, tenant.id)).run;
    expect(first.stats).toMatchObject({ resources_evaluated: nodes.length, resources_unchanged: 0 });
    expect(first.stats.findings_created).toBeGreaterThan(0);
    const before = await snapshot(tenant);
    expect(before.unknowns.length).toBeGreaterThan(0);
    t.clock.advance(60_000);
    const second = (await audit(t, token, tenant.id)).run;
    expect(second.status).toBe('succeeded');
    expect(second.stats).toMatchObject({
      resources_evaluated: 0,
      resources_unchanged: nodes.length,
      evaluations: 0,
      findings_created: 0,
      findings_resolved: 0,
      findings_reopened: 0,
      severity_changes: 0,
    });
    expect(await snapshot(tenant)).toEqual(before);
    // Writing the same nodes again changes nothing an audit reads.
    await putNodes(t, token, tenant.id, nodes);
    expect((await audit(t, token, tenant.id)).run.stats).toMatchObject({ resources_evaluated: 0, resources_unchanged: nodes.length });
    expect(await snapshot(tenant)).toEqual(before);
  });
});

describe('a changed node', () => {
  const ruleId = 'aws-s3-bucket-versioning';
  const bucket = (which: 'violating' | 'compliant') => fixtureNode(ruleId, which, 'changing-bucket');
  const id = `${ruleId}:${nodeIdOf(bucket('violating'))}`;

  it('is the only one evaluated again, and its finding opens, resolves and reopens', async () => {
    const { tenant, token } = await freshTenant();
    const others = estate();
    await putNodes(t, token, tenant.id, [...others, bucket('compliant')]);
    await audit(t, token, tenant.id);
    const untouched = (await snapshot(tenant)).findings;

    await putNodes(t, token, tenant.id, [bucket('violating')]);
    let run = (await audit(t, token, tenant.id)).run;
    expect(run.stats).toMatchObject({ resources_evaluated: 1, resources_unchanged: others.length, findings_resolved: 0 });
    expect(run.stats.findings_created).toBeGreaterThanOrEqual(1);
    expect(await finding(token, tenant, id)).toMatchObject({ status: 'open' });

    await putNodes(t, token, tenant.id, [bucket('compliant')]);
    run = (await audit(t, token, tenant.id)).run;
    expect(run.stats).toMatchObject({ resources_evaluated: 1, findings_created: 0 });
    expect(run.stats.findings_resolved).toBeGreaterThanOrEqual(1);
    expect(await finding(token, tenant, id)).toMatchObject({ status: 'resolved', resolved_by: 'audit' });

    // A tag is read by rules too: changing only a tag evaluates the node again.
    await putNodes(t, token, tenant.id, [{ ...bucket('violating'), tags: { team: 'storage' } }]);
    run = (await audit(t, token, tenant.id)).run;
    expect(run.stats).toMatchObject({ resources_evaluated: 1 });
    expect(run.stats.findings_reopened).toBeGreaterThanOrEqual(1);
    expect(await finding(token, tenant, id)).toMatchObject({ status: 'open' });
    // The other nodes' findings were never written.
    const after = (await snapshot(tenant)).findings;
    expect(after.filter((f) => f.resource_id !== nodeIdOf(bucket('violating')))).toEqual(untouched.filter((f) => f.resource_id !== nodeIdOf(bucket('violating'))));
  });

  it('a finding a user resolved is reopened by the next audit though the node is unchanged', async () => {
    const { tenant, token } = await freshTenant();
    await putNodes(t, token, tenant.id, [bucket('violating'), fixtureNode('aws-s3-bucket-versioning', 'compliant', 'other-bucket')]);
    await audit(t, token, tenant.id);
    await call(t.app, token, { method: 'POST', url: `/api/v1/tenants/${tenant.id}/findings/${encodeURIComponent(id)}/resolve`, payload: {}, expect: 200 });
    expect(await finding(token, tenant, id)).toMatchObject({ status: 'resolved' });
    const run = (await audit(t, token, tenant.id)).run;
    expect(run.stats).toMatchObject({ resources_evaluated: 1, resources_unchanged: 1, findings_reopened: 1 });
    expect(await finding(token, tenant, id)).toMatchObject({ status: 'open' });
    expect((await audit(t, token, tenant.id)).run.stats).toMatchObject({ resources_evaluated: 0 });
  });

  it('a deleted node has its findings resolved; recreated unchanged, it is evaluated again and they reopen', async () => {
    const { tenant, token } = await freshTenant();
    await putNodes(t, token, tenant.id, [bucket('violating')]);
    await audit(t, token, tenant.id);
    const before = (await snapshot(tenant)).findings.filter((f) => f.status === 'open');
    expect(before.length).toBeGreaterThan(0);
    await call(t.app, token, { method: 'DELETE', url: `/api/v1/tenants/${tenant.id}/nodes/${encodeURIComponent(nodeIdOf(bucket('violating')))}`, expect: 204 });
    let run = (await audit(t, token, tenant.id)).run;
    expect(run.stats).toMatchObject({ resources_evaluated: 0, resources_unchanged: 0, findings_resolved: before.length });
    expect((await snapshot(tenant)).findings.every((f) => f.status === 'resolved')).toBe(true);
    const record = await t.deps.database.db.selectFrom('node_audit_state').select('node_id').where('workspace_id', '=', tenant.defaultWorkspaceId).execute();
    expect(record).toEqual([]);
    await putNodes(t, token, tenant.id, [bucket('violating')]);
    run = (await audit(t, token, tenant.id)).run;
    expect(run.stats).toMatchObject({ resources_evaluated: 1, findings_reopened: before.length });
  });

  it('a node deleted while an audit of one framework runs has the findings of the other frameworks resolved by the next full audit', async () => {
    const { tenant, token } = await freshTenant();
    const keep = fixtureNode('aws-s3-bucket-versioning', 'compliant', 'kept-bucket');
    await putNodes(t, token, tenant.id, [bucket('violating'), keep]);
    await audit(t, token, tenant.id);
    const open = (await snapshot(tenant)).findings.filter((f) => f.status === 'open' && f.resource_id === nodeIdOf(bucket('violating')));
    const frameworks = new Set(open.map((f) => f.framework));
    expect(frameworks.size).toBeGreaterThan(1);
    await call(t.app, token, { method: 'DELETE', url: `/api/v1/tenants/${tenant.id}/nodes/${encodeURIComponent(nodeIdOf(bucket('violating')))}`, expect: 204 });
    // An audit of soc2 resolves only soc2's findings: the removal stays logged for the others.
    await audit(t, token, tenant.id, { framework: 'soc2' });
    const partly = (await snapshot(tenant)).findings.filter((f) => f.resource_id === nodeIdOf(bucket('violating')));
    expect(partly.some((f) => f.status === 'open')).toBe(true);
    // Both audits looked for vanished resources in the log only: the first audit checked every rule in full.
    const checked = await t.deps.database.db.selectFrom('audit_vanished_checked').select('rule_id').where('workspace_id', '=', tenant.defaultWorkspaceId).execute();
    expect(checked.length).toBeGreaterThan(builtinRules().length / 2);
    await audit(t, token, tenant.id);
    const after = (await snapshot(tenant)).findings.filter((f) => f.resource_id === nodeIdOf(bucket('violating')));
    expect(after.every((f) => f.status === 'resolved')).toBe(true);
    const logged = await t.deps.database.db.selectFrom('audit_removed_nodes').select('node_id').where('workspace_id', '=', tenant.defaultWorkspaceId).execute();
    expect(logged).toEqual([]);
    // Deleting the tenant takes its audit records and log with it.
    await call(t.app, token, { method: 'DELETE', url: `/api/v1/tenants/${tenant.id}/nodes/${encodeURIComponent(nodeIdOf(keep))}`, expect: 204 });
    const db = t.deps.database.db;
    await db.deleteFrom('tenants').where('id', '=', tenant.id).execute();
    for (const table of ['node_audit_state', 'audit_removed_nodes', 'audit_vanished_checked'] as const) {
      expect(await db.selectFrom(table).select('workspace_id').where('workspace_id', '=', tenant.defaultWorkspaceId).execute(), table).toEqual([]);
    }
  });

  it("an evaluation error is the node's own and is not repeated; a node whose evaluation ran out of time is evaluated again", async () => {
    const { tenant, token } = await freshTenant();
    const type = 'aws.testkit.widget';
    const rule = (id: string, condition: string) => ({
      id,
      title: `Custom ${id}`,
      description: 'A tenant rule.',
      severity: 'LOW',
      resource_type: type,
      framework: 'soc2',
      control_id: 'CC6.1',
      condition,
      remediation: { summary: 'None.', steps: [] },
    });
    const items = Array.from({ length: 300 }, (_, i) => i);
    // 27 million comprehension steps on the slow widget: far past a 200 ms budget.
    const nested = 'has(resource.properties.l) && resource.properties.l.exists(x, resource.properties.l.exists(y, resource.properties.l.exists(z, x + y + z < 0)))';
    await call(t.app, token, {
      method: 'POST',
      url: `/api/v1/tenants/${tenant.id}/rules`,
      payload: rule('custom-deep-path', 'resource.properties.doesNotExist.deeper == 1'),
      expect: 201,
    });
    await call(t.app, token, { method: 'POST', url: `/api/v1/tenants/${tenant.id}/rules`, payload: rule('custom-nested', nested), expect: 201 });
    await putNodes(t, token, tenant.id, [awsNode(type, 'plain-widget'), awsNode(type, 'slow-widget', { properties: { l: items } })]);
    let run = (await audit(t, token, tenant.id)).run;
    expect(run.stats).toMatchObject({ resources_evaluated: 2, budget_exceeded: 1 });
    expect(run.stats.evaluation_errors).toBe(3);
    const unknowns = (await snapshot(tenant)).unknowns;
    // The error fails the same way each time: the plain widget is not evaluated again, its unknowns stay.
    run = (await audit(t, token, tenant.id)).run;
    expect(run.stats).toMatchObject({ resources_evaluated: 1, resources_unchanged: 1, budget_exceeded: 1, evaluation_errors: 2 });
    const again = (await snapshot(tenant)).unknowns;
    expect(again.filter((u) => u.resource_id.endsWith(':plain-widget'))).toEqual(unknowns.filter((u) => u.resource_id.endsWith(':plain-widget')));
    expect(again.length).toBe(unknowns.length);
  });
});

describe('edges', () => {
  // A custom rule grouping its findings by the VPC a bucket is linked to: the bucket's group depends on
  // its neighbours over `in_vpc` edges, so those are part of its input; other edges are not.
  const rule = {
    id: 'custom-bucket-owner-by-vpc',
    title: 'Bucket has an owner tag',
    description: 'Every bucket names its owner.',
    severity: 'MEDIUM',
    resource_type: 'aws.s3.bucket',
    framework: 'soc2',
    control_id: 'CC6.1',
    condition: '!has(resource.tags.owner)',
    remediation: { summary: 'Tag the bucket with its owner.', steps: [] },
    group_by: { cause: 'VPC', edge: 'in_vpc' },
  };
  const bucket = { ...fixtureNode('aws-s3-bucket-versioning', 'compliant', 'linked-bucket'), tags: {} };
  const lone = { ...fixtureNode('aws-s3-bucket-versioning', 'compliant', 'lone-bucket'), tags: {} };
  const vpc = (name: string, nativeId = name) => ({
    id: `aws:us-east-1:aws.ec2.vpc:${name}`,
    provider: 'aws',
    region: 'us-east-1',
    type: 'aws.ec2.vpc',
    native_id: nativeId,
    name,
    account_id: '123456789012',
    properties: {},
    tags: {},
  });
  const fid = `${rule.id}:${nodeIdOf(bucket)}`;

  it('a changed edge, or neighbour, evaluates again the nodes whose input includes it', async () => {
    const { tenant, token } = await freshTenant();
    await call(t.app, token, { method: 'POST', url: `/api/v1/tenants/${tenant.id}/rules`, payload: rule, expect: 201 });
    await putNodes(t, token, tenant.id, [bucket, lone, vpc('vpc-node-1', 'vpc-1'), vpc('vpc-node-2', 'vpc-2')]);
    const edge = await putEdges(t, token, tenant.id, [{ source: nodeIdOf(bucket), target: 'aws:us-east-1:aws.ec2.vpc:vpc-node-1', type: 'in_vpc' }]);
    await audit(t, token, tenant.id);
    expect(await finding(token, tenant, fid)).toMatchObject({ status: 'open' });
    expect(await groupCause(tenant, fid)).toBe('VPC vpc-1');

    // An edge of another type is not read by any rule of the bucket: nothing is evaluated (the VPCs,
    // which no rule reads, are not counted).
    await putEdges(t, token, tenant.id, [{ source: nodeIdOf(bucket), target: 'aws:us-east-1:aws.ec2.vpc:vpc-node-2', type: 'peers_with' }]);
    expect((await audit(t, token, tenant.id)).run.stats).toMatchObject({ resources_evaluated: 0, resources_unchanged: 2 });

    // The bucket moves to the other VPC: only it is evaluated, and its finding follows its cause.
    await call(t.app, token, { method: 'DELETE', url: `/api/v1/tenants/${tenant.id}/edges/${edge.items[0]!.id}`, expect: 204 });
    await putEdges(t, token, tenant.id, [{ source: nodeIdOf(bucket), target: 'aws:us-east-1:aws.ec2.vpc:vpc-node-2', type: 'in_vpc' }]);
    expect((await audit(t, token, tenant.id)).run.stats).toMatchObject({ resources_evaluated: 1, resources_unchanged: 1 });
    expect(await groupCause(tenant, fid)).toBe('VPC vpc-2');

    // The neighbour itself changes what the group names (its native id): the bucket is evaluated again.
    await putNodes(t, token, tenant.id, [vpc('vpc-node-2', 'vpc-2b')]);
    expect((await audit(t, token, tenant.id)).run.stats).toMatchObject({ resources_evaluated: 1, resources_unchanged: 1 });
    expect(await groupCause(tenant, fid)).toBe('VPC vpc-2b');
  });
});

describe('changed rules', () => {
  const rule = {
    id: 'custom-bucket-owner',
    title: 'Bucket has an owner tag',
    description: 'Every bucket names its owner.',
    severity: 'LOW',
    resource_type: 'aws.s3.bucket',
    framework: 'soc2',
    control_id: 'CC6.1',
    condition: '!has(resource.tags.owner)',
    remediation: { summary: 'Tag the bucket with its owner.', steps: [] },
  };
  const buckets = [fixtureNode('aws-s3-bucket-versioning', 'compliant', 'bucket-a'), fixtureNode('aws-s3-bucket-versioning', 'violating', 'bucket-b')].map((n) => ({
    ...n,
    tags: {},
  }));

  it('adding, changing and deleting a custom rule evaluates again the nodes of its type, and only those', async () => {
    const { tenant, token } = await freshTenant();
    const others = [fixtureNode('aws-iam-user-access-keys-rotated', 'compliant', 'user-1'), fixtureNode('aws-iam-user-access-keys-rotated', 'violating', 'user-2')];
    await putNodes(t, token, tenant.id, [...buckets, ...others]);
    await audit(t, token, tenant.id);

    await call(t.app, token, { method: 'POST', url: `/api/v1/tenants/${tenant.id}/rules`, payload: rule, expect: 201 });
    let run = (await audit(t, token, tenant.id)).run;
    expect(run.stats).toMatchObject({ resources_evaluated: 2, resources_unchanged: 2, findings_created: 2 });

    // Its severity changes: the findings follow.
    const { id: _id, ...update } = { ...rule, severity: 'HIGH' };
    void _id;
    await call(t.app, token, { method: 'PUT', url: `/api/v1/tenants/${tenant.id}/rules/${rule.id}`, payload: update, expect: 200 });
    run = (await audit(t, token, tenant.id)).run;
    expect(run.stats).toMatchObject({ resources_evaluated: 2, resources_unchanged: 2, severity_changes: 2 });
    expect(await finding(token, tenant, `${rule.id}:${nodeIdOf(buckets[0]!)}`)).toMatchObject({ severity: 'HIGH' });

    // Its condition changes: one bucket passes now.
    await call(t.app, token, {
      method: 'PUT',
      url: `/api/v1/tenants/${tenant.id}/rules/${rule.id}`,
      payload: { ...update, condition: `resource.id.endsWith(":bucket-b")` },
      expect: 200,
    });
    run = (await audit(t, token, tenant.id)).run;
    expect(run.stats).toMatchObject({ resources_evaluated: 2, findings_resolved: 1 });
    expect(await finding(token, tenant, `${rule.id}:${nodeIdOf(buckets[0]!)}`)).toMatchObject({ status: 'resolved', resolved_by: 'audit' });

    await call(t.app, token, { method: 'DELETE', url: `/api/v1/tenants/${tenant.id}/rules/${rule.id}`, expect: 204 });
    run = (await audit(t, token, tenant.id)).run;
    expect(run.stats).toMatchObject({ resources_evaluated: 2, resources_unchanged: 2, findings_created: 0, findings_resolved: 0 });
    expect((await audit(t, token, tenant.id)).run.stats).toMatchObject({ resources_evaluated: 0, resources_unchanged: 4 });
  });

  it('enabling a framework evaluates again the nodes whose types it brings rules for, and its findings appear', async () => {
    const { tenant, token } = await freshTenant();
    const settings = `/api/v1/tenants/${tenant.id}/settings/compliance`;
    const only = (enabled: string[]) => ({ frameworks: ['nist-800-53', 'cis-aws', 'pci-dss', 'soc2'].map((id) => ({ id, enabled: enabled.includes(id) })) });
    await call(t.app, tenant.admin.token, { method: 'PUT', url: settings, payload: only(['soc2']), expect: 200 });
    const nodes = estate();
    await putNodes(t, token, tenant.id, nodes);
    await audit(t, token, tenant.id);
    expect((await audit(t, token, tenant.id)).run.stats).toMatchObject({ resources_evaluated: 0 });
    const before = (await snapshot(tenant)).findings.length;

    await call(t.app, tenant.admin.token, { method: 'PUT', url: settings, payload: only(['soc2', 'cis-aws']), expect: 200 });
    const run = (await audit(t, token, tenant.id)).run;
    // The types whose audited rules change: those with a rule that cis-aws brings in (one not touching soc2).
    const added = new Set(
      builtinRules()
        .filter((r) => ruleTouches(r, 'cis-aws') && !ruleTouches(r, 'soc2'))
        .map((r) => r.resource_type),
    );
    const audited = new Set(
      builtinRules()
        .filter((r) => ruleTouches(r, 'cis-aws') || ruleTouches(r, 'soc2'))
        .map((r) => r.resource_type),
    );
    const affected = nodes.filter((n) => added.has(n.type)).length;
    const unaffected = nodes.filter((n) => audited.has(n.type) && !added.has(n.type)).length;
    expect(affected).toBeGreaterThan(0);
    expect(unaffected).toBeGreaterThan(0);
    expect(run.stats).toMatchObject({ resources_evaluated: affected, resources_unchanged: unaffected });
    expect(run.stats.findings_created).toBeGreaterThan(0);
    expect((await snapshot(tenant)).findings.length).toBe(before + run.stats.findings_created);
    // An audit of one framework evaluates under its own rule set; the next full audit evaluates again.
    expect((await audit(t, token, tenant.id, { framework: 'soc2' })).run.stats.resources_evaluated).toBeGreaterThan(0);
    expect((await audit(t, token, tenant.id)).run.stats.resources_evaluated).toBeGreaterThan(0);
    expect((await audit(t, token, tenant.id)).run.stats).toMatchObject({ resources_evaluated: 0, resources_unchanged: affected + unaffected });
  });
});

describe('time', () => {
  it('no rule reads the clock: a condition calling now() is refused', async () => {
    const { tenant, token } = await freshTenant();
    const res = await call(t.app, token, {
      method: 'POST',
      url: `/api/v1/tenants/${tenant.id}/rules`,
      payload: {
        id: 'custom-clock',
        title: 'Clock',
        description: 'Reads the clock.',
        severity: 'LOW',
        resource_type: 'aws.s3.bucket',
        framework: 'soc2',
        control_id: 'CC6.1',
        condition: 'now() > timestamp("2020-01-01T00:00:00Z")',
        remediation: { summary: 'None.', steps: [] },
      },
    });
    expect(res.statusCode).toBe(400);
  });

  it('the 90-day access key rule fires once the credential report passes its threshold, whatever the clock did meanwhile', async () => {
    const { tenant } = await freshTenant();
    let token = tenant.users['security-analyst'].token;
    const ruleId = 'aws-iam-user-access-keys-rotated';
    const user = fixtureNode(ruleId, 'compliant', 'aging-user');
    type WithReport = { supplementaryConfiguration: { CredentialReport: { generatedTime: string } } };
    const report = (user.properties as unknown as WithReport).supplementaryConfiguration.CredentialReport;
    await putNodes(t, token, tenant.id, [user]);
    await audit(t, token, tenant.id);
    const id = `${ruleId}:${nodeIdOf(user)}`;
    expect((await call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/findings/${encodeURIComponent(id)}` })).statusCode).toBe(404);
    // 100 days pass. The rule judges the key's age at the report's time, not the clock's: nothing changed.
    t.clock.advance(100 * 86_400_000);
    token = (await fresh(t, tenant.users['security-analyst'])).token;
    expect((await audit(t, token, tenant.id)).run.stats).toMatchObject({ resources_evaluated: 0, findings_created: 0 });
    // The next discovery brings a report generated 100 days later, with the same key: it is now too old.
    const later = new Date(new Date(report.generatedTime).getTime() + 100 * 86_400_000).toISOString();
    const properties = structuredClone(user.properties) as typeof user.properties & WithReport;
    properties.supplementaryConfiguration.CredentialReport.generatedTime = later;
    await putNodes(t, token, tenant.id, [{ ...user, properties }]);
    expect((await audit(t, token, tenant.id)).run.stats).toMatchObject({ resources_evaluated: 1 });
    expect(await finding(token, tenant, id)).toMatchObject({ status: 'open' });
  });
});
