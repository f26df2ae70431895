import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, type TenantFixture } from '../harness/identity.js';
import { putNodes } from '../harness/graph.js';
import { audit, events, fixtureNode, fixtures, nodeIdOf } from '../harness/compliance.js';
import { builtinRules, type Rule } from '../../src/modules/compliance/rule-catalog.js';
import { auditJob } from '../../src/modules/compliance/audit/audit-job.js';
import { eventFinding } from '../../src/modules/compliance/findings/finding-events.js';
import { runAudit } from '../../src/modules/compliance/audit/engine.js';
import { FRAMEWORKS } from '../../src/modules/compliance/rules/rule-types.js';
import { randomUUID } from 'node:crypto';
import type { JobContext } from '../../src/platform/jobs/definition.js';

let t: TestApp;
let tenant: TenantFixture;
let token: string;
beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
  token = tenant.users['security-analyst'].token;
});
afterAll(() => t.close());

const findingsUrl = () => `/api/v1/tenants/${tenant.id}/findings`;
const getFinding = (id: string) => call(t.app, token, { url: `${findingsUrl()}/${encodeURIComponent(id)}` });

describe('audit over every built-in rule', () => {
  it('creates a finding for each rule whose violating fixture is in the graph, with finding.created events', async () => {
    const nodes = builtinRules().map((r) => fixtureNode(r.id, 'violating', `${r.id}-bad`));
    await putNodes(t, token, tenant.id, nodes);
    const { started, run } = await audit(t, token, tenant.id);
    expect(started).toMatchObject({ status: 'queued', frameworks: ['nist-800-53', 'cis-aws', 'pci-dss', 'soc2'], job_id: expect.any(String), started_at: expect.any(String) });
    expect(run.status).toBe('succeeded');
    expect(run.stats.resources_evaluated).toBe(nodes.length);
    expect(run.stats.rules_evaluated).toBe(builtinRules().length);
    expect(run.stats.evaluations).toBeGreaterThanOrEqual(nodes.length);
    for (const rule of builtinRules()) {
      const nodeId = nodeIdOf(fixtureNode(rule.id, 'violating', `${rule.id}-bad`));
      const res = await getFinding(`${rule.id}:${nodeId}`);
      expect(res.statusCode, rule.id).toBe(200);
      expect(res.json()).toMatchObject({
        rule_id: rule.id,
        resource_id: nodeId,
        status: 'open',
        severity: rule.severity,
        framework: rule.framework,
        control_id: rule.control_id,
        title: rule.finding_title,
        description: rule.finding_description,
      });
    }
    // The rows refer to their rule's text (migration 0017): one stored text per audited rule, shared
    // by its findings, with the rule's content.
    const texts = await t.deps.database.db
      .selectFrom('finding_texts')
      .select(['id', 'title', 'description', 'remediation', 'framework_mappings'])
      .where('workspace_id', '=', tenant.defaultWorkspaceId)
      .execute();
    expect(texts.length).toBe(builtinRules().length);
    const rows = await t.deps.database.db.selectFrom('finding_rows').select(['rule_id', 'text_id']).where('workspace_id', '=', tenant.defaultWorkspaceId).execute();
    const textById = new Map(texts.map((text) => [text.id, text]));
    for (const row of rows) {
      const rule = builtinRules().find((r) => r.id === row.rule_id)!;
      expect(textById.get(row.text_id), row.rule_id).toEqual({
        id: row.text_id,
        title: rule.finding_title,
        description: rule.finding_description,
        remediation: rule.remediation.summary,
        framework_mappings: rule.framework_mappings,
      });
    }
    const created = await events(t, tenant.id, 'finding.created');
    expect(created.length).toBe(run.stats.findings_created);
    const sample = created[0]!.data as { finding: Record<string, unknown> };
    expect(Object.keys(sample.finding).sort()).toEqual(
      [
        'control_id',
        'created_at',
        'description',
        'framework',
        'id',
        'region',
        'remediation',
        'resource_id',
        'resource_name',
        'resource_type',
        'rule_id',
        'severity',
        'title',
      ].sort(),
    );
    expect(created[0]!.workspace_id).toBe(tenant.defaultWorkspaceId);
    // The audit builds these events in SQL from the rows it inserts; every other writer uses
    // eventFinding. Both must give the same data, to the created_at text.
    const stored = await t.deps.database.db
      .selectFrom('findings')
      .select([
        'id',
        'rule_id',
        'framework',
        'control_id',
        'severity',
        'title',
        'description',
        'resource_id',
        'resource_type',
        'resource_name',
        'region',
        'remediation',
        'created_at',
      ])
      .where('workspace_id', '=', tenant.defaultWorkspaceId)
      .execute();
    const expected = new Map(stored.map((f) => [f.id, { finding: eventFinding(f) }]));
    expect(created.map((e) => e.data)).toEqual(created.map((e) => expected.get((e.data as { finding: { id: string } }).finding.id)));
    expect(new Set(created.map((e) => (e.data as { finding: { id: string } }).finding.id)).size).toBe(created.length);
  });

  it('creates no finding for the compliant fixtures', async () => {
    const nodes = builtinRules().map((r) => fixtureNode(r.id, 'compliant', `${r.id}-good`));
    await putNodes(t, token, tenant.id, nodes);
    await audit(t, token, tenant.id);
    for (const rule of builtinRules()) {
      const nodeId = nodeIdOf(fixtureNode(rule.id, 'compliant', `${rule.id}-good`));
      expect((await getFinding(`${rule.id}:${nodeId}`)).statusCode, rule.id).toBe(404);
    }
  });
});

describe('finding life cycle through audits', () => {
  const ruleId = 'aws-s3-bucket-versioning';
  const bad = () => fixtureNode(ruleId, 'violating', 'lifecycle-bucket');
  const good = () => fixtureNode(ruleId, 'compliant', 'lifecycle-bucket');
  const id = () => `${ruleId}:${nodeIdOf(bad())}`;

  it('keeps first_seen and moves last_seen while the violation stays', async () => {
    await putNodes(t, token, tenant.id, [bad()]);
    await audit(t, token, tenant.id);
    const first = (await getFinding(id())).json();
    // last_seen is when an audit last evaluated the resource and found the violation: an audit
    // evaluates a resource again when it changed (here its tags) or its rules did (audit/incremental.ts).
    t.clock.advance(60_000);
    await putNodes(t, token, tenant.id, [{ ...bad(), tags: { ...bad().tags, touched: 'yes' } }]);
    await audit(t, token, tenant.id);
    const second = (await getFinding(id())).json();
    expect(second.first_seen).toBe(first.first_seen);
    expect(second.created_at).toBe(first.created_at);
    expect(new Date(second.last_seen).getTime()).toBe(new Date(first.last_seen).getTime() + 60_000);
    // Unchanged since, the resource is not evaluated again: the finding is not written.
    t.clock.advance(60_000);
    await audit(t, token, tenant.id);
    expect((await getFinding(id())).json()).toEqual(second);
  });

  it('resolves a finding whose resource was fixed (finding.resolved)', async () => {
    await putNodes(t, token, tenant.id, [good()]);
    const { run } = await audit(t, token, tenant.id);
    expect(run.stats.findings_resolved).toBeGreaterThanOrEqual(1);
    expect((await getFinding(id())).json()).toMatchObject({ status: 'resolved', resolved_by: 'audit' });
    const resolved = (await events(t, tenant.id, 'finding.resolved')).find((e) => (e.data as { finding_id: string }).finding_id === id());
    expect(resolved?.data).toMatchObject({ finding_id: id(), resolved_at: expect.any(String) });
  });

  it('reopens a resolved finding detected again (finding.reopened)', async () => {
    await putNodes(t, token, tenant.id, [bad()]);
    const { run } = await audit(t, token, tenant.id);
    expect(run.stats.findings_reopened).toBeGreaterThanOrEqual(1);
    expect((await getFinding(id())).json()).toMatchObject({ status: 'open', resolved_at: null });
    const reopened = (await events(t, tenant.id, 'finding.reopened')).find((e) => (e.data as { finding: { id: string } }).finding.id === id());
    expect(reopened).toBeDefined();
  });

  it('resolves findings of a deleted resource', async () => {
    await call(t.app, token, { method: 'DELETE', url: `/api/v1/tenants/${tenant.id}/nodes/${encodeURIComponent(nodeIdOf(bad()))}`, expect: 204 });
    await audit(t, token, tenant.id);
    expect((await getFinding(id())).json().status).toBe('resolved');
  });
});

describe('custom rules in audits', () => {
  const customRule = (severity: string, condition = '!has(resource.tags.owner)') => ({
    id: 'custom-bucket-owner-tag',
    title: 'Bucket has an owner tag',
    description: 'Every bucket names its owner.',
    severity,
    resource_type: 'aws.s3.bucket',
    framework: 'soc2',
    control_id: 'CC6.1',
    condition,
    remediation: {
      summary: 'Tag the bucket with its owner.',
      steps: [{ action: 'Tag it', command: 'aws s3api put-bucket-tagging --bucket <bucket-name> --tagging TagSet=[{Key=owner,Value=<team>}]' }],
    },
  });

  it('evaluates custom rules and emits finding.severity_changed when the rule severity changes', async () => {
    await call(t.app, token, { method: 'POST', url: `/api/v1/tenants/${tenant.id}/rules`, payload: customRule('LOW'), expect: 201 });
    await putNodes(t, token, tenant.id, [{ ...fixtureNode('aws-s3-bucket-versioning', 'compliant', 'untagged-bucket'), tags: {} }]);
    await audit(t, token, tenant.id);
    const fid = `custom-bucket-owner-tag:${nodeIdOf(fixtureNode('aws-s3-bucket-versioning', 'compliant', 'untagged-bucket'))}`;
    expect((await getFinding(fid)).json().severity).toBe('LOW');
    const { id: _id, ...update } = customRule('HIGH');
    void _id;
    await call(t.app, token, { method: 'PUT', url: `/api/v1/tenants/${tenant.id}/rules/custom-bucket-owner-tag`, payload: update, expect: 200 });
    const { run } = await audit(t, token, tenant.id);
    expect(run.stats.severity_changes).toBeGreaterThanOrEqual(1);
    expect((await getFinding(fid)).json().severity).toBe('HIGH');
    const changed = (await events(t, tenant.id, 'finding.severity_changed')).find((e) => (e.data as { finding_id: string }).finding_id === fid);
    expect(changed?.data).toMatchObject({ previous_severity: 'LOW', severity: 'HIGH', reason: 'rule_severity_changed' });
  });

  it('counts an expression that fails on a resource as an evaluation error; the run still succeeds', async () => {
    const { id: _id, ...update } = customRule('HIGH', 'resource.properties.configuration.doesNotExist.deeper == 1');
    void _id;
    await call(t.app, token, { method: 'PUT', url: `/api/v1/tenants/${tenant.id}/rules/custom-bucket-owner-tag`, payload: update, expect: 200 });
    const { run } = await audit(t, token, tenant.id);
    expect(run.status).toBe('succeeded');
    expect(run.stats.evaluation_errors).toBeGreaterThan(0);
  });

  it('deleting a custom rule resolves its findings', async () => {
    await call(t.app, token, { method: 'DELETE', url: `/api/v1/tenants/${tenant.id}/rules/custom-bucket-owner-tag`, expect: 204 });
    const fid = `custom-bucket-owner-tag:${nodeIdOf(fixtureNode('aws-s3-bucket-versioning', 'compliant', 'untagged-bucket'))}`;
    expect((await getFinding(fid)).json()).toMatchObject({ status: 'resolved', resolved_by: 'rule_deleted' });
  });
});

describe('runs', () => {
  it('runs only the rules of the requested framework', async () => {
    const { started, run } = await audit(t, token, tenant.id, { framework: 'soc2' });
    expect(started.frameworks).toEqual(['soc2']);
    const soc2Rules = builtinRules().filter((r) => r.framework === 'soc2' || r.framework_mappings.some((m) => m.framework === 'soc2'));
    expect(run.stats.rules_evaluated).toBe(soc2Rules.length);
  });

  it('never queues two audits of one workspace: a second request returns the live run, widened', async () => {
    const first = await call(t.app, token, { method: 'POST', url: `${findingsUrl()}/run`, payload: { framework: 'soc2' }, expect: 202 });
    const second = await call(t.app, token, { method: 'POST', url: `${findingsUrl()}/run`, payload: { framework: 'pci-dss' }, expect: 202 });
    expect(second.json().job_id).toBe(first.json().job_id);
    expect([...second.json().frameworks].sort()).toEqual(['pci-dss', 'soc2']);
    await t.drain();
    const third = await call(t.app, token, { method: 'POST', url: `${findingsUrl()}/run`, payload: {}, expect: 202 });
    expect(third.json().job_id).not.toBe(first.json().job_id);
    await t.drain();
  });

  // A new framework, and one the running audit covers already: it may have read the workspace before
  // the writes that came with the request.
  it.each([
    { asked: 'cis-aws', title: 'a request during a running audit is remembered and run as a follow-up' },
    { asked: 'soc2', title: 'a request during a running audit for the frameworks it already audits still gets a follow-up' },
  ])('$title', async ({ asked }) => {
    const first = await call(t.app, token, { method: 'POST', url: `${findingsUrl()}/run`, payload: { framework: 'soc2' }, expect: 202 });
    await t.deps.database.db.updateTable('audit_runs').set({ status: 'running' }).where('id', '=', first.json().job_id).execute();
    await t.deps.database.db
      .updateTable('jobs')
      .set({ status: 'running', lease_expires_at: new Date(t.clock.now().getTime() + 600_000) })
      .where('id', '=', first.json().job_id)
      .execute();
    const second = await call(t.app, token, { method: 'POST', url: `${findingsUrl()}/run`, payload: { framework: asked }, expect: 202 });
    expect(second.json().job_id).toBe(first.json().job_id);
    const row = await t.deps.database.db.selectFrom('audit_runs').select('pending_frameworks').where('id', '=', first.json().job_id).executeTakeFirstOrThrow();
    expect(row.pending_frameworks).toEqual([asked]);
    // Let the "running" job be taken over and finish; its follow-up covers what was asked.
    await t.deps.database.db.updateTable('jobs').set({ status: 'queued', lease_expires_at: null }).where('id', '=', first.json().job_id).execute();
    await t.drain();
    const runs = await t.deps.database.db.selectFrom('audit_runs').select(['frameworks', 'trigger', 'status']).where('trigger', '=', 'follow-up').execute();
    expect(runs).toContainEqual({ frameworks: [asked], trigger: 'follow-up', status: 'succeeded' });
  });

  it('refuses unknown and disabled frameworks with 400; 404 for another workspace run', async () => {
    expect((await call(t.app, token, { method: 'POST', url: `${findingsUrl()}/run`, payload: { framework: 'iso27001' } })).statusCode).toBe(400);
    await call(t.app, tenant.admin.token, {
      method: 'PUT',
      url: `/api/v1/tenants/${tenant.id}/settings/compliance`,
      payload: { frameworks: [{ id: 'pci-dss', enabled: false }] },
      expect: 200,
    });
    const disabled = await call(t.app, token, { method: 'POST', url: `${findingsUrl()}/run`, payload: { framework: 'pci-dss' } });
    expect(disabled.statusCode).toBe(400);
    expect(disabled.json().error.message).toBe('framework "pci-dss" is disabled for this tenant');
    const all = await call(t.app, token, { method: 'POST', url: `${findingsUrl()}/run`, payload: {}, expect: 202 });
    expect(all.json().frameworks).not.toContain('pci-dss');
    await t.drain();
    await call(t.app, tenant.admin.token, {
      method: 'PUT',
      url: `/api/v1/tenants/${tenant.id}/settings/compliance`,
      payload: { frameworks: [{ id: 'pci-dss', enabled: true }] },
      expect: 200,
    });
    expect((await call(t.app, token, { url: `${findingsUrl()}/runs/00000000-0000-4000-8000-000000000000` })).statusCode).toBe(404);
    expect((await call(t.app, tenant.users['read-only'].token, { method: 'POST', url: `${findingsUrl()}/run`, payload: {} })).statusCode).toBe(403);
  });
});

describe('fixtures sanity', () => {
  it('has a fixture for every built-in rule', () => {
    expect(builtinRules().every((r) => fixtures.has(r.id))).toBe(true);
  });
});

describe('a retried audit', () => {
  it("emits the control events of the findings its crashed attempt committed: it compares with the first attempt's baseline", async () => {
    const other = await buildTenant(t);
    const tok = other.users['security-analyst'].token;
    const rule = builtinRules()[0]!;
    await putNodes(t, tok, other.id, [fixtureNode(rule.id, 'violating', 'retry-bad')]);
    const started = (await call(t.app, tok, { method: 'POST', url: `/api/v1/tenants/${other.id}/findings/run`, payload: {}, expect: 202 })).json();
    const db = t.deps.database.db;
    const job = await db.selectFrom('jobs').selectAll().where('id', '=', started.job_id).executeTakeFirstOrThrow();
    const definition = auditJob(t.deps);
    const context = (signal: AbortSignal): JobContext => ({ job, signal, db, clock: t.clock, log: t.deps.log, heartbeat: async () => undefined });
    // The first attempt dies after its batch of findings is written, before its control events:
    // what a worker killed mid-audit leaves behind.
    // Its checks: the workspace's audit lock (1, and 2 for PostgreSQL's advisory lock), the first
    // batch, then the second batch, which is aborted.
    const lockChecks = t.deps.database.kind === 'postgres' ? 2 : 1;
    let checks = 0;
    // (The rule evaluator only listens for an abort event, which this signal never sends.)
    const dying = {
      get aborted() {
        return ++checks > lockChecks + 1;
      },
      addEventListener() {},
      removeEventListener() {},
    } as unknown as AbortSignal;
    await expect(definition.run(job.payload, context(dying))).rejects.toThrow('audit aborted');
    const id = `${rule.id}:${nodeIdOf(fixtureNode(rule.id, 'violating', 'retry-bad'))}`;
    expect((await call(t.app, tok, { url: `/api/v1/tenants/${other.id}/findings/${encodeURIComponent(id)}` })).statusCode).toBe(200);
    expect(await events(t, other.id, 'compliance.control_failed')).toEqual([]);

    await definition.run(job.payload, context(new AbortController().signal));
    const failed = await events(t, other.id, 'compliance.control_failed');
    expect(failed.map((e) => (e.data as { framework: string; control_id: string }).control_id)).toContain(rule.control_id);
  });
});

describe('reading the graph in pages', () => {
  it('evaluates every node once when pages end exactly at, and within, a resource type', async () => {
    const other = await buildTenant(t);
    const tok = other.users['security-analyst'].token;
    // Three rules of three resource types: 2, 3 and 1 violating nodes, read in pages of 2, so one
    // type fills a page exactly, one spills into a short page, and one is a short page alone.
    const byType = new Map<string, Rule>();
    for (const rule of builtinRules()) if (!byType.has(rule.resource_type) && byType.size < 3) byType.set(rule.resource_type, rule);
    const [a, b, c] = [...byType.values()];
    const nodes = [
      ...[1, 2].map((i) => fixtureNode(a!.id, 'violating', `page-a-${i}`)),
      ...[1, 2, 3].map((i) => fixtureNode(b!.id, 'violating', `page-b-${i}`)),
      fixtureNode(c!.id, 'violating', 'page-c-1'),
    ];
    await putNodes(t, tok, other.id, nodes);
    const scope = { tenantId: other.id, workspaceId: other.defaultWorkspaceId };
    const rules = builtinRules().filter((r) => byType.has(r.resource_type));
    const stats = await runAudit({
      db: t.deps.database.db,
      clock: t.clock,
      scope,
      runId: randomUUID(),
      frameworks: [...FRAMEWORKS],
      enabled: [...FRAMEWORKS],
      rules,
      batchSize: 2,
    });
    expect(stats.resources_evaluated).toBe(nodes.length);
    const expectedEvaluations = nodes.reduce((n, node) => n + rules.filter((r) => r.resource_type === node.type).length, 0);
    expect(stats.evaluations).toBe(expectedEvaluations);
    for (const node of nodes) {
      const rule = byType.get(node.type)!;
      const id = `${rule.id}:${nodeIdOf(node)}`;
      expect((await call(t.app, tok, { url: `/api/v1/tenants/${other.id}/findings/${encodeURIComponent(id)}` })).statusCode, id).toBe(200);
    }
  });
});

describe('findings of vanished resources', () => {
  it('are resolved even when the previous audit ran on a worker whose clock was ahead', async () => {
    const other = await buildTenant(t);
    const tok = other.users['security-analyst'].token;
    const rule = builtinRules()[0]!;
    const [gone, kept] = ['vanish-gone', 'vanish-kept'].map((n) => fixtureNode(rule.id, 'violating', n));
    await putNodes(t, tok, other.id, [gone!, kept!]);
    const scope = { tenantId: other.id, workspaceId: other.defaultWorkspaceId };
    // Clocks that tick like real ones, so batch times come after the audit's start.
    const ticking = (start: string) => {
      let at = Date.parse(start);
      return { now: () => new Date((at += 1)) };
    };
    const run = (start: string) =>
      runAudit({ db: t.deps.database.db, clock: ticking(start), scope, runId: randomUUID(), frameworks: [...FRAMEWORKS], enabled: [...FRAMEWORKS], rules: [rule] });
    await run('2026-11-27T10:00:05Z');
    await call(t.app, tok, { method: 'DELETE', url: `/api/v1/tenants/${other.id}/nodes/${encodeURIComponent(nodeIdOf(gone!))}`, expect: 204 });
    // This worker's clock is 5 s behind the last one: the vanished finding was last seen "later"
    // than this audit started, yet no batch of this audit saw it.
    const stats = await run('2026-11-27T10:00:00Z');
    expect(stats.findings_resolved).toBe(1);
    const status = async (node: typeof gone) =>
      (await call(t.app, tok, { url: `/api/v1/tenants/${other.id}/findings/${encodeURIComponent(`${rule.id}:${nodeIdOf(node!)}`)}` })).json().status;
    expect(await status(gone)).toBe('resolved');
    expect(await status(kept)).toBe('open');
  });
});
