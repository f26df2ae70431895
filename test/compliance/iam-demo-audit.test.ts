import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, type TenantFixture } from '../harness/identity.js';
import { startAwsReplay, useAwsReplay, type AwsReplay } from '../exports/aws-recorded.js';

/**
 * Issue 22 item 7: CloudMapper's demo account, built to be bad, audited through the API. The aws
 * plugin reads it from its recorded responses (content/demo/, played back on 127.0.0.1), a run
 * audits it, and the IAM rules find what CloudMapper's own audit reports there: BAD_MFA_POLICY
 * (IAM_BAD_MFA_POLICY), the exfiller role's s3:* on every bucket, bad_role's "*:*" and its trust of
 * any AWS account (IAM_ROLE_ALLOWS_ASSUMPTION_FROM_ANYWHERE), USER_WITH_BAD_INLINE_POLICY's deprecated
 * AmazonEC2RoleforSSM (IAM_KNOWN_BAD_POLICY), the root user's access key, and the credential report's
 * stale keys; and nothing on policies and roles that are fine.
 */
const GRANTED = 'iam-demo';
let t: TestApp;
let tenant: TenantFixture;
let replay: AwsReplay;
let restoreEnv: () => void;

interface Finding {
  rule_id: string;
  resource_name: string;
  resource_id: string;
  severity: string;
  title: string;
  status: string;
}
let findings: Finding[];
const rulesOn = (name: string) =>
  findings
    .filter((f) => f.resource_name === name)
    .map((f) => f.rule_id)
    .sort();

beforeAll(async () => {
  // The demo tenant reads with the service's own (replayed) credentials: the operator's grant.
  t = await createTestApp({ env: { CONTROLGRAPH_DISCOVERY_OWN_CREDENTIALS_TENANTS: GRANTED } });
  replay = await startAwsReplay();
  restoreEnv = useAwsReplay(replay.endpoint);
  tenant = await buildTenant(t, { name: GRANTED });
  const job = (
    await call(t.app, tenant.admin.token, { method: 'POST', url: `/api/v1/tenants/${tenant.id}/jobs`, payload: { name: 'demo', plugins: ['aws'], start: true }, expect: 201 })
  ).json();
  await t.drain();
  const done = (await call(t.app, tenant.admin.token, { url: job.status_url, expect: 200 })).json();
  expect(done.status, JSON.stringify(done.error)).toBe('completed');
  await call(t.app, tenant.admin.token, { method: 'POST', url: `/api/v1/tenants/${tenant.id}/findings/run`, payload: {}, expect: 202 });
  await t.drain();
  findings = [];
  for (let page = 1; ; page++) {
    const body = (await call(t.app, tenant.admin.token, { url: `/api/v1/tenants/${tenant.id}/findings?status=open&per_page=500&page=${page}`, expect: 200 })).json();
    findings.push(...(body.items as Finding[]));
    if (page >= body.total_pages) break;
  }
}, 300_000);

afterAll(async () => {
  restoreEnv?.();
  await replay?.close();
  await t?.close();
});

describe("CloudMapper's demo account, audited", () => {
  it('finds BAD_MFA_POLICY: meant to enforce MFA, it lets a password alone deactivate the MFA device or create access keys', () => {
    const [finding] = findings.filter((f) => f.resource_name === 'BAD_MFA_POLICY');
    expect(rulesOn('BAD_MFA_POLICY')).toEqual(['aws-iam-policy-mfa-enforced']);
    expect(finding).toMatchObject({ severity: 'HIGH', title: 'Customer managed IAM policy meant to enforce MFA lets credentials and MFA devices be changed without MFA' });
  });

  it('finds the exfiller role: s3:* on every bucket in an inline policy', () => {
    expect(rulesOn('exfiller')).toEqual(['aws-iam-role-inline-policy-no-service-wildcards']);
  });

  it('finds bad_role: "*:*" inline (so escalation too), assumable by any AWS account, and the deprecated AmazonEC2RoleforSSM', () => {
    expect(rulesOn('bad_role')).toEqual([
      'aws-iam-role-inline-policy-no-administrative-privileges',
      'aws-iam-role-inline-policy-no-privilege-escalation',
      'aws-iam-role-no-deprecated-managed-policies',
      'aws-iam-role-trust-not-public',
    ]);
    const trust = findings.find((f) => f.resource_name === 'bad_role' && f.rule_id === 'aws-iam-role-trust-not-public')!;
    expect(trust).toMatchObject({ severity: 'HIGH', title: 'IAM role can be assumed by any principal' });
  });

  it('finds USER_WITH_BAD_INLINE_POLICY: the deprecated AmazonEC2RoleforSSM (S3 read and write on every bucket) attached directly', () => {
    // Its recording carries no inline policy (CloudMapper's data set omits UserPolicyList), and the
    // credential report has no row for it: its credentials are not evaluated (see the next test).
    expect(rulesOn('USER_WITH_BAD_INLINE_POLICY')).toEqual(['aws-iam-user-no-deprecated-managed-policies', 'aws-iam-user-no-direct-policies']);
    expect(rulesOn('GROUP_WITH_BAD_INLINE_POLICY')).toEqual(['aws-iam-group-no-deprecated-managed-policies']);
  });

  it("judges credentials from IAM's credential report: the root user's active key, USER's stale key and console without MFA", () => {
    expect(rulesOn('<root_account>')).toEqual(['aws-iam-root-no-access-keys', 'aws-iam-user-access-keys-rotated', 'aws-iam-user-access-keys-used']);
    expect(findings.find((f) => f.rule_id === 'aws-iam-root-no-access-keys')).toMatchObject({ severity: 'CRITICAL', title: 'Root user has an active access key' });
    // USER is the report's "user" (IAM names are unique regardless of case): key 2, last used a year before the report.
    expect(rulesOn('USER')).toEqual(['aws-iam-user-access-keys-rotated', 'aws-iam-user-access-keys-used', 'aws-iam-user-console-mfa']);
    expect(rulesOn('auditor_tmp')).toEqual([]);
  });

  it('reports no IAM finding on what is fine: AmazonEC2RoleforSSM itself, the least-privilege roles, the unmatched users', () => {
    expect(rulesOn('AmazonEC2RoleforSSM')).toEqual([]);
    expect(rulesOn('level1')).toEqual([]);
    expect(rulesOn('level3')).toEqual([]);
  });

  it('lists the credentials it could not judge as not evaluated, naming what is missing, instead of passing them', async () => {
    const unknown = (await call(t.app, tenant.admin.token, { url: `/api/v1/tenants/${tenant.id}/evaluations/unknown?per_page=500`, expect: 200 })).json();
    const forUser = (unknown.items as Array<{ rule_id: string; resource_name?: string; resource_id: string }>).filter((u) => u.resource_id.endsWith(':AIDAS2OTVRSQMBNO326VD'));
    expect(forUser.map((u) => u.rule_id).sort()).toEqual(['aws-iam-user-access-keys-rotated', 'aws-iam-user-access-keys-used', 'aws-iam-user-console-mfa']);
  });
});
