import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, type TenantFixture } from '../harness/identity.js';
import { putNodes } from '../harness/graph.js';
import { audit, fixtureNode, nodeIdOf } from '../harness/compliance.js';
import { builtinRules, ruleControls } from '../../src/modules/compliance/rule-catalog.js';
import { missingJudgementOf } from '../../src/modules/compliance/rules/missing-paths.js';

/**
 * Fail closed (issue 22 item 2): a resource that lacks the configuration a rule reads is judged by
 * the rule's declared when_missing; an unknown outcome (declared, or an evaluation error) is
 * recorded, listed with the missing paths, counted in the run's stats and /controls/status, and
 * keeps its controls from passing. Before, a bare S3 bucket gave evaluation errors and no finding.
 */

let t: TestApp;
let tenant: TenantFixture;
let token: string;
beforeAll(async () => {
  // What is judged here is the content's when_missing, not speed: the default 100 ms budget per
  // evaluation, measured in wall time, turned one evaluation unknown (budget exceeded) on a loaded CI
  // machine, and the re-audit below then counted 1 unknown instead of 0.
  t = await createTestApp({ env: { CONTROLGRAPH_RULE_BUDGET_MS: '5000' } });
  tenant = await buildTenant(t);
  token = tenant.users['security-analyst'].token;
});
afterAll(() => t.close());

const api = (path: string) => `/api/v1/tenants/${tenant.id}${path}`;
const get = async (path: string) => (await call(t.app, token, { url: api(path), expect: 200 })).json();

/** A node carrying only its name, as an inventory that read nothing else would give it. */
const bare = (type: string, nativeId: string) => ({
  provider: 'aws',
  region: 'eu-west-1',
  type,
  native_id: nativeId,
  name: nativeId,
  account_id: '123456789012',
  properties: { configuration: { name: nativeId } },
  tags: {},
});

const bucket = bare('aws.s3.bucket', 'bare-bucket');
const group = bare('aws.ec2.security_group', 'sg-bare');
const rulesOf = (type: string) => builtinRules().filter((r) => r.resource_type === type);
const declared = (type: string, outcome: string) =>
  rulesOf(type)
    .filter((r) => r.definition!.when_missing === outcome)
    .map((r) => r.id)
    .sort();

describe('a bare resource is judged by what AWS does when its configuration is absent', () => {
  it('a bare S3 bucket: a finding per rule declaring violation, no evaluation error, and no pass the content did not declare', async () => {
    await putNodes(t, token, tenant.id, [bucket, group]);
    const { run } = await audit(t, token, tenant.id);
    expect(run.status).toBe('succeeded');

    const bucketRules = rulesOf('aws.s3.bucket');
    const violations = declared('aws.s3.bucket', 'violation');
    const passes = declared('aws.s3.bucket', 'pass');
    // Every S3 bucket rule declares violation or pass: S3 documents each of these defaults.
    expect(violations.length + passes.length).toBe(bucketRules.length);
    expect(violations).toContain('aws-s3-bucket-versioning');
    expect(passes).toEqual(['aws-s3-bucket-default-encryption']);

    const findings = await get(`/findings?resource_id=${encodeURIComponent(nodeIdOf(bucket))}&per_page=100`);
    expect(findings.items.map((f: { rule_id: string }) => f.rule_id).sort()).toEqual(violations);
    const unknownOfBucket = await get(`/evaluations/unknown?resource_id=${encodeURIComponent(nodeIdOf(bucket))}`);
    expect(unknownOfBucket.total).toBe(0);

    // The security group's rules are all unknown: its rules are not a setting with a default.
    const groupUnknown = declared('aws.ec2.security_group', 'unknown');
    expect(groupUnknown.length).toBe(rulesOf('aws.ec2.security_group').length);
    const unknowns = await get(`/evaluations/unknown?resource_id=${encodeURIComponent(nodeIdOf(group))}&per_page=100`);
    expect(unknowns.items.map((u: { rule_id: string }) => u.rule_id).sort()).toEqual(groupUnknown);
    const ssh = unknowns.items.find((u: { rule_id: string }) => u.rule_id === 'aws-ec2-sg-no-ssh-from-internet');
    expect(ssh).toMatchObject({
      resource_id: nodeIdOf(group),
      resource_type: 'aws.ec2.security_group',
      resource_name: 'sg-bare',
      region: 'eu-west-1',
      account_id: '123456789012',
      reason: 'missing_configuration',
      detail: null,
      run_id: run.job_id,
      missing_paths: missingJudgementOf(builtinRules().find((r) => r.id === 'aws-ec2-sg-no-ssh-from-internet')!.definition)!.paths,
    });
    expect(ssh.missing_paths).toContain('configuration.ipPermissions.ipProtocol');

    // The run says what it decided by default and what it could not decide, with the paths missing.
    expect(run.stats).toMatchObject({
      evaluation_errors: 0,
      unknown: groupUnknown.length,
      missing_configuration: { violations: violations.length, passes: passes.length, unknown: groupUnknown.length },
      findings_created: violations.length,
    });
    expect(run.stats.evaluations).toBe(bucketRules.length + groupUnknown.length);
    const versioning = run.stats.rule_missing.find((r: { rule_id: string }) => r.rule_id === 'aws-s3-bucket-versioning');
    expect(versioning).toEqual({
      rule_id: 'aws-s3-bucket-versioning',
      violations: 1,
      passes: 0,
      unknown: 0,
      missing_paths: ['supplementaryConfiguration.BucketVersioningConfiguration.status'],
    });
    expect(run.stats.rule_missing.find((r: { rule_id: string }) => r.rule_id === 'aws-ec2-sg-no-ssh-from-internet')).toMatchObject({ unknown: 1, violations: 0, passes: 0 });
  });

  it('a control with an unknown resource and no finding is unknown, not passing, and lowers the score; it passes once the resource is judged', async () => {
    const status = async (framework: string) => get(`/controls/status?framework=${framework}&per_page=500`);
    // A control only the security group's (unknown) rules map to, which no bucket finding fails.
    const failingKeys = new Set(
      builtinRules()
        .filter((r) => r.resource_type === 'aws.s3.bucket' && r.definition!.when_missing === 'violation')
        .flatMap((r) => ruleControls(r).map((m) => `${m.framework} ${m.control_id}`)),
    );
    const candidate = rulesOf('aws.ec2.security_group')
      .flatMap((r) => ruleControls(r))
      .find((m) => !failingKeys.has(`${m.framework} ${m.control_id}`))!;
    expect(candidate).toBeDefined();
    const before = await status(candidate.framework);
    const control = before.controls.items.find((c: { control_id: string }) => c.control_id === candidate.control_id);
    expect(control).toMatchObject({ automated_state: 'unknown', passing: false });
    expect(control.unknown_evaluations).toBeGreaterThan(0);
    expect(before.unknown.controls).toBeGreaterThan(0);
    expect(before.unknown).toMatchObject({ evaluations: rulesOf('aws.ec2.security_group').length, resources: 1 });
    expect(before.by_framework[candidate.framework].unknown_controls).toBe(before.unknown.controls);
    const listed = await get(`/controls/status?framework=${candidate.framework}&automated_state=unknown&per_page=500`);
    expect(listed.controls.total).toBe(before.unknown.controls);
    const gaps = await get(`/controls/gaps?framework=${candidate.framework}&per_page=500`);
    expect(gaps.items.find((g: { control_id: string }) => g.control_id === candidate.control_id)).toMatchObject({ status: 'unknown', findings: 0 });
    // The unknown list filters by the control (the rule's own or a mapped one).
    const byControl = await get(`/evaluations/unknown?framework=${candidate.framework}&control_id=${encodeURIComponent(candidate.control_id)}&per_page=100`);
    expect(byControl.total).toBeGreaterThan(0);
    expect(byControl.items.every((u: { resource_id: string }) => u.resource_id === nodeIdOf(group))).toBe(true);

    // The group recorded in full (no open rule): its evaluations decide, the unknowns go, the control passes.
    const complete = { ...fixtureNode('aws-ec2-sg-no-ssh-from-internet', 'compliant', 'sg-bare'), region: 'eu-west-1' };
    expect(nodeIdOf(complete)).toBe(nodeIdOf(group));
    await putNodes(t, token, tenant.id, [complete]);
    const { run } = await audit(t, token, tenant.id);
    expect(run.stats.unknown).toBe(0);
    expect((await get(`/evaluations/unknown?resource_id=${encodeURIComponent(nodeIdOf(group))}`)).total).toBe(0);
    const after = await status(candidate.framework);
    expect(after.controls.items.find((c: { control_id: string }) => c.control_id === candidate.control_id)).toMatchObject({
      automated_state: 'passing',
      passing: true,
      unknown_evaluations: 0,
    });
    expect(after.unknown).toEqual({ controls: 0, evaluations: 0, resources: 0 });
    expect(after.by_framework[candidate.framework].score).toBeGreaterThan(before.by_framework[candidate.framework].score);
  });

  it('an evaluation error is unknown too, with its message; the rows go with the resource and with the rule', async () => {
    const admin = tenant.users['tenant-admin'].token;
    const created = await call(t.app, admin, {
      method: 'POST',
      url: api('/rules'),
      payload: {
        id: 'custom-needs-owner',
        title: 'Bucket owner is recorded',
        description: 'Reads a field bare buckets do not have.',
        severity: 'LOW',
        resource_type: 'aws.s3.bucket',
        framework: 'soc2',
        control_id: 'CC6.1',
        condition: 'resource.properties.configuration.owner.id == ""',
        remediation: 'Record the owner.',
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const { run } = await audit(t, token, tenant.id, { framework: 'soc2' });
    expect(run.stats).toMatchObject({ evaluation_errors: 1, unknown: 1 });
    expect(run.stats.rule_errors.map((r: { rule_id: string }) => r.rule_id)).toEqual(['custom-needs-owner']);
    const rows = await get('/evaluations/unknown?rule_id=custom-needs-owner');
    expect(rows.items).toEqual([
      expect.objectContaining({
        rule_id: 'custom-needs-owner',
        resource_id: nodeIdOf(bucket),
        reason: 'evaluation_error',
        missing_paths: [],
        detail: expect.stringContaining('owner'),
      }),
    ]);
    expect((await get('/evaluations/unknown?reason=evaluation_error')).total).toBe(1);
    expect((await get('/controls/status?framework=soc2')).unknown.evaluations).toBe(1);

    // Deleting the rule takes its unknowns with it.
    await call(t.app, admin, { method: 'DELETE', url: api('/rules/custom-needs-owner'), expect: 204 });
    expect((await get('/evaluations/unknown?rule_id=custom-needs-owner')).total).toBe(0);

    // A resource that disappears leaves no unknown behind at the next audit.
    await putNodes(t, token, tenant.id, [bare('aws.ec2.security_group', 'sg-gone')]);
    await audit(t, token, tenant.id);
    expect((await get(`/evaluations/unknown?resource_id=${encodeURIComponent(nodeIdOf(bare('aws.ec2.security_group', 'sg-gone')))}`)).total).toBeGreaterThan(0);
    await call(t.app, admin, { method: 'DELETE', url: api(`/nodes/${encodeURIComponent(nodeIdOf(bare('aws.ec2.security_group', 'sg-gone')))}`), expect: 204 });
    await audit(t, token, tenant.id);
    expect((await get('/evaluations/unknown')).total).toBe(0);
  });

  it('GET /evaluations/unknown refuses an unknown reason, pages, and needs findings:read', async () => {
    const bad = await call(t.app, token, { url: api('/evaluations/unknown?reason=skipped') });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.message).toContain('reason');
    expect((await call(t.app, token, { url: api('/evaluations/unknown?per_page=501') })).statusCode).toBe(400);
    expect((await call(t.app, null, { url: api('/evaluations/unknown') })).statusCode).toBe(401);
    const page = await get('/evaluations/unknown?page=2&per_page=1');
    expect(page).toMatchObject({ page: 2, per_page: 1, items: [] });
  });
});
