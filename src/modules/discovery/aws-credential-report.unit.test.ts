import { describe, expect, it } from 'vitest';
import { awsInventory } from './aws.js';
import { parseCredentialReport } from './aws-credential-report.js';

const HEADER =
  'user,arn,user_creation_time,password_enabled,password_last_used,password_last_changed,password_next_rotation,mfa_active,' +
  'access_key_1_active,access_key_1_last_rotated,access_key_1_last_used_date,access_key_1_last_used_region,access_key_1_last_used_service,' +
  'access_key_2_active,access_key_2_last_rotated,access_key_2_last_used_date,access_key_2_last_used_region,access_key_2_last_used_service,' +
  'cert_1_active,cert_1_last_rotated,cert_2_active,cert_2_last_rotated';
const ROOT =
  '<root_account>,arn:aws:iam::123456789012:root,2018-08-12T17:20:55+00:00,not_supported,no_information,not_supported,not_supported,false,false,N/A,N/A,N/A,N/A,false,N/A,N/A,N/A,N/A,false,N/A,false,N/A';
const ALICE =
  'Alice,arn:aws:iam::123456789012:user/Alice,2020-01-01T00:00:00+00:00,true,2020-03-01T10:00:00+00:00,N/A,N/A,true,false,2020-01-02T00:00:00+00:00,2020-01-05T00:00:00+00:00,eu-west-1,s3,false,N/A,N/A,N/A,N/A,false,N/A,false,N/A';

describe('parseCredentialReport', () => {
  it('types the CSV: booleans, ISO timestamps, null for N/A, no_information and not_supported; keys that exist, active or not', () => {
    const rows = parseCredentialReport(`${HEADER}\n${ROOT}\n${ALICE}\n`, '2020-04-01T00:00:00Z');
    expect([...rows.keys()]).toEqual(['<root_account>', 'alice']);
    expect(rows.get('<root_account>')).toMatchObject({ passwordEnabled: null, passwordLastUsed: null, mfaActive: false, accessKeys: [] });
    expect(rows.get('alice')).toEqual({
      generatedTime: '2020-04-01T00:00:00.000Z',
      user: 'Alice',
      arn: 'arn:aws:iam::123456789012:user/Alice',
      userCreationTime: '2020-01-01T00:00:00.000Z',
      passwordEnabled: true,
      passwordLastUsed: '2020-03-01T10:00:00.000Z',
      passwordLastChanged: null,
      mfaActive: true,
      accessKeys: [
        { slot: 1, active: false, lastRotated: '2020-01-02T00:00:00.000Z', lastUsedDate: '2020-01-05T00:00:00.000Z', lastUsedRegion: 'eu-west-1', lastUsedService: 's3' },
      ],
    });
  });
});

/**
 * The plugin's credential-report reading when IAM is slow or refuses. IAM is a third party that
 * cannot run here and the recorded replay always has the report ready, so these use a stand-in
 * IAM client module (the shape of @aws-sdk/client-iam's: a client with send() and command classes).
 */
function iamStub(answers: { generate: Array<Record<string, unknown> | Error>; report?: Record<string, unknown> | Error }) {
  const calls: string[] = [];
  const command = (name: string) =>
    class {
      readonly name = name;
      constructor(readonly input: unknown) {}
    };
  const module = {
    IAMClient: class {
      async send(cmd: { name: string }) {
        calls.push(cmd.name);
        if (cmd.name === 'GetAccountAuthorizationDetails') {
          return {
            IsTruncated: false,
            UserDetailList: [{ UserName: 'alice', UserId: 'AIDAALICE', Arn: 'arn:aws:iam::123456789012:user/alice', AttachedManagedPolicies: [], GroupList: [] }],
          };
        }
        // An account without a password policy (aws-iam-password-policy.ts).
        if (cmd.name === 'GetAccountPasswordPolicy') throw awsError('NoSuchEntityException');
        const answer = cmd.name === 'GenerateCredentialReport' ? answers.generate.shift() : answers.report;
        if (answer instanceof Error) throw answer;
        return answer ?? {};
      }
    },
    GetAccountAuthorizationDetailsCommand: command('GetAccountAuthorizationDetails'),
    GenerateCredentialReportCommand: command('GenerateCredentialReport'),
    GetCredentialReportCommand: command('GetCredentialReport'),
    GetAccountPasswordPolicyCommand: command('GetAccountPasswordPolicy'),
  };
  return { calls, loadSdk: async () => module };
}
const awsError = (name: string) => Object.assign(new Error(name), { name });
const users = (inv: Awaited<ReturnType<typeof awsInventory>>) => inv.nodes.filter((n) => n.type === 'aws.iam.user');
const poll = { attempts: 3, intervalMs: 1 };

describe('aws plugin: the credential report', () => {
  it('asks again while IAM builds the report, then reads it onto the users and a root user node', async () => {
    const csv = `${HEADER}\n${ROOT}\n${ALICE.replace('Alice', 'alice').replace('user/Alice', 'user/alice')}\n`;
    const iam = iamStub({
      generate: [{ State: 'STARTED' }, { State: 'INPROGRESS' }, { State: 'COMPLETE' }],
      report: { Content: Buffer.from(csv), GeneratedTime: new Date('2020-04-01T00:00:00Z') },
    });
    const inv = await awsInventory({ services: ['iam'] }, { loadSdk: iam.loadSdk, credentialReportPoll: poll });
    expect(iam.calls).toEqual([
      'GenerateCredentialReport',
      'GenerateCredentialReport',
      'GenerateCredentialReport',
      'GetCredentialReport',
      'GetAccountAuthorizationDetails',
      'GetAccountPasswordPolicy',
    ]);
    expect(inv.warnings).toEqual([]);
    expect(users(inv).map((n) => [n.name, (n.properties.supplementaryConfiguration as Record<string, { mfaActive: boolean }>).CredentialReport?.mfaActive])).toEqual([
      ['alice', true],
      ['<root_account>', false],
    ]);
  });

  it('reads the users without it, saying why, when IAM never finishes it, refuses it, or has none', async () => {
    const cases: Array<[Parameters<typeof iamStub>[0], string]> = [
      [
        { generate: [{ State: 'STARTED' }, { State: 'INPROGRESS' }, { State: 'INPROGRESS' }] },
        'iam GenerateCredentialReport: the credential report was still INPROGRESS after 3 requests; users are read without it',
      ],
      [{ generate: [awsError('AccessDenied')] }, 'iam GenerateCredentialReport the account: AccessDenied'],
      [
        { generate: [{ State: 'COMPLETE' }], report: awsError('CredentialReportExpiredException') },
        'iam GetCredentialReport the account: CredentialReportExpiredException; users are read without the credential report',
      ],
    ];
    for (const [answers, warning] of cases) {
      const inv = await awsInventory({ services: ['iam'] }, { loadSdk: iamStub(answers).loadSdk, credentialReportPoll: poll });
      expect(inv.warnings).toEqual([warning]);
      expect(users(inv).map((n) => [n.name, (n.properties.supplementaryConfiguration as Record<string, unknown>).CredentialReport])).toEqual([['alice', undefined]]);
    }
  });

  it('fails the job on an error that is not about the report', async () => {
    await expect(
      awsInventory({ services: ['iam'] }, { loadSdk: iamStub({ generate: [{ State: 'COMPLETE' }], report: awsError('ServiceFailure') }).loadSdk, credentialReportPoll: poll }),
    ).rejects.toThrow('ServiceFailure');
  });
});
