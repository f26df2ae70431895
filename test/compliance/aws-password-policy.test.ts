import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, type TenantFixture } from '../harness/identity.js';
import { projectPath } from '../../src/platform/paths.js';
import { loadBuiltinRules } from '../../src/modules/compliance/rules/content-loader.js';
import { startAwsReplay, useAwsReplay, type AwsReplay } from '../exports/aws-recorded.js';

/**
 * The account's IAM password policy, end to end over HTTP (issue 27 item 3, "done when"): the aws
 * plugin reads it with GetAccountPasswordPolicy through the real IAM client and the replay, writes one
 * `aws.iam.account_password_policy` node per account, and the audit judges it with the rules of
 * content/rules/aws/iam-password-policy.yaml.
 *
 * - CloudMapper's demo account has no password policy: IAM answers NoSuchEntity, the node has an
 *   empty configuration, and every password-policy rule fires (IAM's default policy fails them all).
 * - A strong policy (test/fixtures/aws-recorded/password-policy/strong, written for this test) passes
 *   every rule; a weak one (…/weak: 8 characters, no reuse prevention) fires exactly those two.
 * - A refused call (AccessDenied) is a warning on the job and no node: unknown, neither a finding nor a pass.
 */
const TENANTS = { demo: 'pw-demo', strong: 'pw-strong', weak: 'pw-weak', denied: 'pw-denied' } as const;
const ACCOUNT = '123456789012';
const NODE = `aws:global:aws.iam.account_password_policy:${ACCOUNT}`;
const RULES = loadBuiltinRules().filter((r) => r.resource_type === 'aws.iam.account_password_policy');
type Any = Record<string, any>;

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ env: { CONTROLGRAPH_DISCOVERY_OWN_CREDENTIALS_TENANTS: Object.values(TENANTS).join(',') } });
}, 120_000);

afterAll(async () => {
  await t?.close();
});

interface Read {
  tenant: TenantFixture;
  job: Any;
  calls: string[];
  findings: Array<{ rule_id: string; resource_id: string; title: string; description: string }>;
  unknown: string[];
  node: Any | null;
}

/** A tenant reading IAM through a replay with the given recordings, then an audit; what it found. */
async function readAccount(name: string, options: { overlay?: string; deny?: string } = {}): Promise<Read> {
  const replay: AwsReplay = await startAwsReplay(options.overlay ? { overlay: projectPath('test', 'fixtures', 'aws-recorded', 'password-policy', options.overlay) } : {});
  const restore = useAwsReplay(replay.endpoint);
  try {
    if (options.deny) replay.deny.add(options.deny);
    const tenant = await buildTenant(t, { name });
    const base = `/api/v1/tenants/${tenant.id}`;
    const created = (
      await call(t.app, tenant.admin.token, {
        method: 'POST',
        url: `${base}/jobs`,
        payload: { name: 'iam', plugins: ['aws'], config: { aws: { services: ['iam'] } }, start: true },
        expect: 201,
      })
    ).json();
    await t.drain();
    const job = (await call(t.app, tenant.admin.token, { url: created.status_url, expect: 200 })).json();
    expect(job.status, JSON.stringify(job.error)).toBe('completed');
    await call(t.app, tenant.admin.token, { method: 'POST', url: `${base}/findings/run`, payload: {}, expect: 202 });
    await t.drain();
    const findings = (await call(t.app, tenant.admin.token, { url: `${base}/findings?status=open&per_page=500`, expect: 200 }))
      .json()
      .items.filter((f: Any) => f.resource_id === NODE);
    const unknown = (await call(t.app, tenant.admin.token, { url: `${base}/evaluations/unknown?per_page=500`, expect: 200 }))
      .json()
      .items.filter((u: Any) => u.resource_id === NODE)
      .map((u: Any) => u.rule_id);
    const got = await call(t.app, tenant.admin.token, { url: `${base}/nodes/${encodeURIComponent(NODE)}` });
    return { tenant, job, calls: [...replay.calls], findings, unknown, node: got.statusCode === 200 ? got.json() : null };
  } finally {
    restore();
    await replay.close();
  }
}

const firing = (read: Read) => read.findings.map((f) => f.rule_id).sort();

describe('the account IAM password policy', () => {
  it('has seven rules, one per Prowler iam_password_policy_* check', () => {
    expect(
      RULES.map((r) => r.prowler_checks)
        .flat()
        .sort(),
    ).toEqual([
      'iam_password_policy_expires_passwords_within_90_days_or_less',
      'iam_password_policy_lowercase',
      'iam_password_policy_minimum_length_14',
      'iam_password_policy_number',
      'iam_password_policy_reuse_24',
      'iam_password_policy_symbol',
      'iam_password_policy_uppercase',
    ]);
  });

  it("fires every rule on CloudMapper's demo account, which has no password policy (NoSuchEntity), with titles stating the failure", async () => {
    const read = await readAccount(TENANTS.demo);
    expect(read.calls).toContain('iam GetAccountPasswordPolicy');
    expect(read.job.details.plugins.aws).toMatchObject({ 'aws.iam.account_password_policy': 1 });
    expect(read.job.warnings.filter((w: string) => /password policy/.test(w))).toEqual([]);
    expect(read.node).toMatchObject({ type: 'aws.iam.account_password_policy', name: ACCOUNT, account_id: ACCOUNT, region: 'global' });
    expect(read.node!.properties).toMatchObject({ resourceType: 'AWS::IAM::AccountPasswordPolicy', resourceId: ACCOUNT, configuration: {} });
    expect(Object.keys(read.node!.properties.configuration)).toEqual([]);
    expect(firing(read)).toEqual(RULES.map((r) => r.id).sort());
    expect(read.unknown).toEqual([]);
    for (const f of read.findings) {
      const rule = RULES.find((r) => r.id === f.rule_id)!;
      expect(f.title).toBe(rule.finding_title);
      expect(f.title).toMatch(/^IAM password policy does not /);
    }
    expect(read.findings.map((f) => f.title).sort()).toEqual([
      'IAM password policy does not expire passwords within 90 days',
      'IAM password policy does not prevent reuse of the last 24 passwords',
      'IAM password policy does not require a lowercase letter',
      'IAM password policy does not require a number',
      'IAM password policy does not require a symbol',
      'IAM password policy does not require an uppercase letter',
      'IAM password policy does not require passwords of at least 14 characters',
    ]);
  });

  it('passes every rule on a strong policy, read onto the node as AWS Config would name it', async () => {
    const read = await readAccount(TENANTS.strong, { overlay: 'strong' });
    expect(read.node!.properties.configuration).toEqual({
      minimumPasswordLength: 14,
      requireSymbols: true,
      requireNumbers: true,
      requireUppercaseCharacters: true,
      requireLowercaseCharacters: true,
      allowUsersToChangePassword: true,
      expirePasswords: true,
      maxPasswordAge: 90,
      passwordReusePrevention: 24,
      hardExpiry: false,
    });
    expect(firing(read)).toEqual([]);
    expect(read.unknown).toEqual([]);
  });

  it('fires exactly the violated rules on a weak policy (8 characters, no reuse prevention)', async () => {
    const read = await readAccount(TENANTS.weak, { overlay: 'weak' });
    expect(read.node!.properties.configuration).toMatchObject({ minimumPasswordLength: 8, maxPasswordAge: 60 });
    expect(read.node!.properties.configuration.passwordReusePrevention).toBeUndefined();
    expect(firing(read)).toEqual(['aws-iam-password-policy-minimum-length-14', 'aws-iam-password-policy-reuse-24']);
    expect(read.unknown).toEqual([]);
  });

  it('warns and writes no node when IAM refuses the call (AccessDenied): neither a finding nor a pass', async () => {
    const read = await readAccount(TENANTS.denied, { deny: 'iam GetAccountPasswordPolicy' });
    expect(read.job.warnings).toEqual(expect.arrayContaining([expect.stringMatching(/iam account password policy in us-east-1: AccessDenied; not read/)]));
    expect(read.job.details.plugins.aws['aws.iam.account_password_policy']).toBeUndefined();
    // The rest of IAM is read all the same.
    expect(read.job.details.plugins.aws).toMatchObject({ 'aws.iam.user': 4 });
    expect(read.node).toBeNull();
    expect(read.findings).toEqual([]);
    expect(read.unknown).toEqual([]);
  });
});
