import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { projectPath } from '../../../platform/paths.js';
import { compileCondition, evaluateCondition } from './cel.js';
import { conditionReads } from './condition-reads.js';
import { globMatches, isAdministrative, mfaUnprotected, parsePolicy, PolicyDocumentError, privilegeEscalations, serviceWildcards } from './iam-policy.js';

/**
 * The IAM policy functions against real policy documents (test/fixtures/iam/policies.json: the
 * CloudMapper demo account, AWS managed policies as IAM returned them, BishopFox's iam-vulnerable
 * escalation cases with their false-positive and false-negative variants, AWS's documented MFA
 * policy; sources in the file).
 */
const { documents } = JSON.parse(readFileSync(projectPath('test', 'fixtures', 'iam', 'policies.json'), 'utf8')) as { documents: Record<string, unknown> };
const doc = (name: string) => {
  const d = documents[name];
  if (d === undefined) throw new Error(`no fixture document ${name}`);
  return d;
};
/** As AWS Config records it. */
const encoded = (name: string) => encodeURIComponent(JSON.stringify(doc(name)));

describe('parsePolicy', () => {
  it('reads URL-encoded JSON (AWS Config, the IAM API), JSON text and the object alike, normalising every field to a list', () => {
    const expected = parsePolicy(doc('cloudmapper-demo:policy/BAD_MFA_POLICY'));
    expect(parsePolicy(encoded('cloudmapper-demo:policy/BAD_MFA_POLICY'))).toEqual(expected);
    expect(parsePolicy(JSON.stringify(doc('cloudmapper-demo:policy/BAD_MFA_POLICY')))).toEqual(expected);
    expect(expected[4]).toEqual({
      sid: 'BlockAnyAccessOtherThanAboveUnlessSignedInWithMFA',
      effect: 'Deny',
      action: [],
      notAction: ['iam:*'],
      resource: ['*'],
      notResource: [],
      principal: { AWS: [], Service: [], Federated: [], CanonicalUser: [] },
      notPrincipal: { AWS: [], Service: [], Federated: [], CanonicalUser: [] },
      condition: { BoolIfExists: { 'aws:MultiFactorAuthPresent': 'false' } },
    });
  });

  it('reads a single statement, "Principal": "*" as every AWS principal, and an empty Condition as none', () => {
    const [s] = parsePolicy({ Statement: { Effect: 'Allow', Principal: '*', Action: 'sts:AssumeRole', Condition: {} } });
    expect(s).toMatchObject({ effect: 'Allow', action: ['sts:AssumeRole'], principal: { AWS: ['*'], Service: [] }, condition: {} });
    expect(parsePolicy(doc('cloudmapper-demo:role/exfiller/trust'))[0]!.principal.Service).toEqual(['ec2.amazonaws.com']);
  });

  it('refuses what is not a policy document, saying why (an evaluation error, never a pass)', () => {
    // The parser's own words follow ours; V8 adds "(line 1 column 12)" from Node 22 on.
    expect(() => parsePolicy('%7B%22Statement')).toThrow(PolicyDocumentError);
    expect(() => parsePolicy('%7B%22Statement')).toThrow(/^policy document is not JSON: Unterminated string in JSON at position 11/);
    expect(() => parsePolicy('%E0%A4%A')).toThrow('policy document is neither JSON nor URL-encoded JSON');
    expect(() => parsePolicy(null)).toThrow('no policy document');
    expect(() => parsePolicy({ Version: '2012-10-17' })).toThrow('policy document has no Statement');
    expect(() => parsePolicy({ Statement: [{ Effect: 'Permit', Action: '*' }] })).toThrow('statement 1: Effect must be Allow or Deny');
  });
});

describe('globMatches', () => {
  it("is IAM's glob: * and ?, case-insensitive, nothing else special", () => {
    expect(globMatches('iam:Pass*', 'iam:PassRole')).toBe(true);
    expect(globMatches('IAM:passrole', 'iam:PassRole')).toBe(true);
    expect(globMatches('s3:Get?bject', 's3:GetObject')).toBe(true);
    expect(globMatches('iam:Put*', 'iam:PassRole')).toBe(false);
    expect(globMatches('arn:aws:s3:::a.b', 'arn:aws:s3:::aXb')).toBe(false);
  });
});

describe('isAdministrative ("*:*")', () => {
  it.each([
    'aws-managed:AdministratorAccess',
    'cloudmapper-demo:role/bad_role/inline/dostuff',
    'cloudsplaining:fp2-allow-all',
    'cloudsplaining:privesc-high-priv-service-policy',
    // Allow NotAction on every resource leaves IAM writable: it can grant itself the rest.
    'cloudsplaining:fn4-exploitableNotAction',
  ])('%s is administrative', (name) => {
    expect(isAdministrative(doc(name))).toBe(true);
    expect(isAdministrative(encoded(name))).toBe(true);
  });

  it.each([
    'aws-managed:ReadOnlyAccess',
    'aws-managed:ViewOnlyAccess',
    'aws-managed:SecurityAudit',
    // NotAction excluding all of IAM: everything else, but it cannot change its own permissions.
    'aws-managed:PowerUserAccess',
    'aws-managed:IAMFullAccess',
    'aws-managed:AmazonS3FullAccess',
    'cloudsplaining:privesc-sre-admin-policy',
    'cloudsplaining:fp1-allow-and-deny',
    'cloudsplaining:deny-all',
    'cloudmapper-demo:role/exfiller/inline/tmp',
    'cloudmapper-demo:policy/BAD_MFA_POLICY',
    'cloudmapper-demo:policy/AmazonEC2RoleforSSM',
  ])('%s is not administrative', (name) => {
    expect(isAdministrative(doc(name))).toBe(false);
  });

  it('takes "*" on named resources only for what it is, and a firm Deny of IAM back', () => {
    expect(isAdministrative({ Statement: [{ Effect: 'Allow', Action: '*', Resource: 'arn:aws:s3:::bucket/*' }] })).toBe(false);
    expect(
      isAdministrative({
        Statement: [
          { Effect: 'Allow', Action: '*', Resource: '*' },
          { Effect: 'Deny', Action: 'iam:*', Resource: '*' },
        ],
      }),
    ).toBe(false);
    // A Deny with a Condition may not apply: still administrative.
    expect(
      isAdministrative({
        Statement: [
          { Effect: 'Allow', Action: '*:*', Resource: '*' },
          { Effect: 'Deny', Action: 'iam:*', Resource: '*', Condition: { Bool: { 'aws:MultiFactorAuthPresent': 'false' } } },
        ],
      }),
    ).toBe(true);
  });
});

describe("privilegeEscalations (Prowler's permission sets, on resources of others)", () => {
  it.each([
    ['cloudsplaining:privesc1-CreateNewPolicyVersion', 'CreatePolicyVersion'],
    ['cloudsplaining:privesc2-SetExistingDefaultPolicyVersion', 'SetDefaultPolicyVersion'],
    ['cloudsplaining:privesc3-CreateEC2WithExistingInstanceProfile', 'PassRole+EC2'],
    ['cloudsplaining:privesc4-CreateAccessKey', 'iam:CreateAccessKey'],
    ['cloudsplaining:privesc5-CreateLoginProfile', 'iam:CreateLoginProfile'],
    ['cloudsplaining:privesc6-UpdateLoginProfile', 'iam:UpdateLoginProfile'],
    ['cloudsplaining:privesc7-AttachUserPolicy', 'iam:AttachUserPolicy'],
    ['cloudsplaining:privesc8-AttachGroupPolicy', 'iam:AttachGroupPolicy'],
    ['cloudsplaining:privesc9-AttachRolePolicy', 'iam:AttachRolePolicy'],
    ['cloudsplaining:privesc10-PutUserPolicy', 'iam:PutUserPolicy'],
    ['cloudsplaining:privesc11-PutGroupPolicy', 'iam:PutGroupPolicy'],
    ['cloudsplaining:privesc12-PutRolePolicy', 'iam:PutRolePolicy'],
    ['cloudsplaining:privesc13-AddUserToGroup', 'iam:AddUserToGroup'],
    ['cloudsplaining:privesc14-UpdatingAssumeRolePolicy', 'iam:UpdateAssumeRolePolicy'],
    ['cloudsplaining:privesc15-PassExistingRoleToNewLambdaThenInvoke', 'PassRole+CreateLambda+Invoke'],
    ['cloudsplaining:privesc17-EditExistingLambdaFunctionWithRole', 'lambda:UpdateFunctionCode'],
    ['cloudsplaining:privesc18-PassExistingRoleToNewGlueDevEndpoint', 'PassRole+GlueCreateDevEndpoint'],
    ['cloudsplaining:privesc19-UpdateExistingGlueDevEndpoint', 'GlueUpdateDevEndpoint'],
    ['cloudsplaining:privesc20-PassExistingRoleToCloudFormation', 'PassRole+CloudFormationCreateStack'],
    ['cloudsplaining:privesc21-PassExistingRoleToNewDataPipeline', 'PassRole+DataPipeline'],
    ['cloudsplaining:privesc-ssmSendCommand-policy', 'SSMSendCommand'],
    ['cloudsplaining:privesc-ec2InstanceConnect-policy', 'EC2InstanceConnect+SendSSHPublicKey'],
    // iam-vulnerable's false negatives: escalation that tools tend to miss.
    ['cloudsplaining:fn1-passrole-star', 'PassRole+AnyRole'],
    ['cloudsplaining:fn2-exploitableResourceConstraint', 'CreatePolicyVersion'],
    ['cloudsplaining:fn3-exploitableConditionConstraint', 'CreatePolicyVersion'],
    ['cloudsplaining:fn4-exploitableNotAction', 'iam:PutUserPolicy'],
    ['cloudmapper-demo:role/bad_role/inline/dostuff', 'OverPermissiveIAM'],
  ])('%s grants %s', (name, path) => {
    expect(privilegeEscalations(doc(name))).toContain(path);
  });

  it.each([
    'aws-managed:ReadOnlyAccess',
    'aws-managed:ViewOnlyAccess',
    'aws-managed:SecurityAudit',
    'aws-managed:IAMReadOnlyAccess',
    'aws-managed:AmazonS3FullAccess',
    'aws-managed:AmazonSSMManagedInstanceCore',
    // iam-vulnerable's false positives: Allow taken back by Deny, AWS-owned resources only.
    'cloudsplaining:fp1-allow-and-deny',
    'cloudsplaining:fp3-deny-iam',
    'cloudsplaining:fp4-nonExploitableResourceConstraint',
    'cloudsplaining:fn1-privesc3-partial',
    'cloudsplaining:deny-all',
    // Self-service on the caller's own user (${aws:username}) is not escalation.
    'cloudmapper-demo:policy/BAD_MFA_POLICY',
    'aws-docs:my-sec-creds-self-manage',
    'cloudmapper-demo:policy/AmazonEC2RoleforSSM',
    'cloudmapper-demo:role/exfiller/inline/tmp',
    'cloudmapper-demo:role/level1/inline/level1',
  ])('%s grants none', (name) => {
    expect(privilegeEscalations(doc(name))).toEqual([]);
  });

  it('does not evaluate conditions, as Prowler does not: a condition that can never hold still counts', () => {
    expect(privilegeEscalations(doc('cloudsplaining:fp5-nonExploitableConditionConstraint'))).toEqual(['CreatePolicyVersion']);
  });

  it('needs every action of a set on resources of others, from any statements', () => {
    const split = {
      Statement: [
        { Effect: 'Allow', Action: 'iam:PassRole', Resource: 'arn:aws:iam::123456789012:role/*' },
        { Effect: 'Allow', Action: 'ec2:RunInstances', Resource: '*' },
      ],
    };
    expect(privilegeEscalations(split)).toEqual(['PassRole+EC2', 'PassRole+AnyRole']);
    const named = { Statement: [{ Effect: 'Allow', Action: ['iam:PassRole', 'ec2:RunInstances'], Resource: 'arn:aws:iam::123456789012:role/app-instance' }] };
    expect(privilegeEscalations(named)).toEqual([]);
  });
});

describe('serviceWildcards', () => {
  it('lists the services granted whole on every resource', () => {
    expect(serviceWildcards(doc('cloudmapper-demo:role/exfiller/inline/tmp'))).toEqual(['s3']);
    expect(serviceWildcards(doc('cloudsplaining:privesc-sre-admin-policy'))).toEqual(['ec2', 'iam', 's3']);
    expect(serviceWildcards(doc('aws-managed:ReadOnlyAccess'))).toEqual([]);
    expect(serviceWildcards(doc('aws-managed:AdministratorAccess'))).toEqual([]);
    expect(serviceWildcards({ Statement: [{ Effect: 'Allow', Action: 's3:*', Resource: 'arn:aws:s3:::logs/*' }] })).toEqual([]);
    expect(
      serviceWildcards({
        Statement: [
          { Effect: 'Allow', Action: 'kms:*', Resource: '*' },
          { Effect: 'Deny', Action: 'kms:ScheduleKeyDeletion', Resource: '*' },
        ],
      }),
    ).toEqual([]);
  });
});

describe('mfaUnprotected', () => {
  it('finds the sensitive actions BAD_MFA_POLICY leaves open without MFA (its Deny exempts iam:*)', () => {
    expect(mfaUnprotected(doc('cloudmapper-demo:policy/BAD_MFA_POLICY'))).toEqual([
      'iam:ChangePassword',
      'iam:CreateAccessKey',
      'iam:UpdateAccessKey',
      'iam:CreateLoginProfile',
      'iam:UpdateLoginProfile',
      'iam:UploadSigningCertificate',
      'iam:UploadSSHPublicKey',
      'iam:DeactivateMFADevice',
      'iam:DeleteVirtualMFADevice',
    ]);
  });

  it("passes AWS's documented MFA self-service policy, an Allow that itself requires MFA, and documents that do not try to enforce MFA", () => {
    expect(mfaUnprotected(doc('aws-docs:my-sec-creds-self-manage'))).toEqual([]);
    expect(
      mfaUnprotected({
        Statement: [
          { Effect: 'Allow', Action: 'iam:DeactivateMFADevice', Resource: 'arn:aws:iam::*:user/${aws:username}', Condition: { Bool: { 'aws:MultiFactorAuthPresent': 'true' } } },
        ],
      }),
    ).toEqual([]);
    expect(mfaUnprotected(doc('aws-managed:AdministratorAccess'))).toEqual([]);
  });

  it('flags an MFA policy whose Allow of a credential action has no MFA condition', () => {
    const partial = {
      Statement: [
        { Effect: 'Allow', Action: ['iam:CreateAccessKey', 's3:GetObject'], Resource: '*', Condition: { NumericLessThan: { 'aws:MultiFactorAuthAge': '3600' } } },
        { Effect: 'Allow', Action: 'iam:DeactivateMFADevice', Resource: '*' },
      ],
    };
    expect(mfaUnprotected(partial)).toEqual(['iam:DeactivateMFADevice']);
  });
});

describe('in rule conditions', () => {
  const resource = (configuration: Record<string, unknown>) => ({
    id: 'r',
    type: 'aws.iam.role',
    name: 'r',
    region: 'global',
    account_id: '123456789012',
    properties: { configuration },
    tags: {},
  });

  it("are CEL functions over a configuration item's URL-encoded documents, read paths included", () => {
    const condition = compileCondition(
      'resource.properties.configuration.rolePolicyList.exists(p, iamAdministrative(p.policyDocument) || size(iamServiceWildcards(p.policyDocument)) > 0) || ' +
        'iamPolicy(resource.properties.configuration.assumeRolePolicyDocument).exists(s, s.effect == "Allow" && s.principal.AWS.exists(a, a == "*"))',
    );
    expect([...conditionReads(condition.ast)].sort()).toEqual([
      'configuration',
      'configuration.assumeRolePolicyDocument',
      'configuration.rolePolicyList',
      'configuration.rolePolicyList.policyDocument',
    ]);
    const trust = encoded('cloudmapper-demo:role/exfiller/trust');
    expect(
      evaluateCondition(
        condition,
        resource({ assumeRolePolicyDocument: trust, rolePolicyList: [{ policyName: 'tmp', policyDocument: encoded('cloudmapper-demo:role/exfiller/inline/tmp') }] }),
      ),
    ).toEqual({ violated: true });
    expect(
      evaluateCondition(
        condition,
        resource({ assumeRolePolicyDocument: trust, rolePolicyList: [{ policyName: 'l', policyDocument: encoded('cloudmapper-demo:role/level1/inline/level1') }] }),
      ),
    ).toEqual({ violated: false });
    expect(evaluateCondition(condition, resource({ assumeRolePolicyDocument: encoded('cloudmapper-demo:role/bad_role/trust'), rolePolicyList: [] }))).toEqual({ violated: true });
  });

  it('make a broken document an evaluation error that names the problem, never a pass', () => {
    const condition = compileCondition('iamAdministrative(resource.properties.configuration.assumeRolePolicyDocument)');
    expect(evaluateCondition(condition, resource({ assumeRolePolicyDocument: '%7B%22Statement' }))).toEqual({ error: expect.stringContaining('policy document is not JSON') });
    expect(evaluateCondition(condition, resource({ assumeRolePolicyDocument: null }))).toEqual({ error: expect.stringContaining('no policy document') });
  });
});
