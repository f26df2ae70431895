import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { sql } from 'kysely';
import S3rver from 's3rver';
import s3rverAccounts from 's3rver/lib/models/account.js';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, type Session, type TenantFixture } from '../harness/identity.js';
import { saveEnv } from '../harness/env.js';
import { events } from '../harness/compliance.js';
import { multipart } from '../questionnaires/helpers.js';
import { projectPath } from '../../src/platform/paths.js';
import { loadConfig } from '../../src/config.js';
import { ownCredentialsGranted } from '../../src/modules/discovery/own-credentials.js';
import { signerOf, startAwsReplay, useAwsReplay, type AwsReplay } from './aws-recorded.js';
import { startFakeSts, type FakeSts } from './fake-sts.js';

/**
 * No confused deputy in discovery (issue 20 item 4): a tenant's discovery reads a cloud only with
 * credentials that tenant supplied (a cloud connection: a role assumed with the tenant's external id,
 * or an access key), or with an uploaded or inline state; the service's own credentials serve only a
 * tenant the operator granted them.
 *
 * Everything AWS is on 127.0.0.1: S3 is s3rver, which checks every request's SigV4 signature against
 * the key pairs it knows (so a read that succeeds was signed with the secret of the key it names); STS
 * is a stub of the third party (fake-sts.ts) that issues temporary key pairs, which it registers with
 * s3rver; the other services are the recorded-response replay of aws-recorded.ts. The service's own
 * credentials are the replay's dummy key, known to s3rver too.
 */

const TF_STATE = readFileSync(projectPath('test', 'fixtures', 'terraform', 'discovery', 'terraform.tfstate'));
const MAPPED = 10;
const GRANTED = 'operator-own';
const SERVICE_KEY = 'AKIAREPLAYREPLAYREPL';
const SERVICE_PRINCIPAL = 'arn:aws:iam::999999999999:role/controlgraph-discovery';
const STATE_LIMIT = 64 * 1024;
const TENANT_SECRET = 'tenant-secret-KEEP-OUT-OF-RESPONSES-0123456789';

let t: TestApp;
let a: TenantFixture;
let b: TenantFixture;
let operator: TenantFixture;
let replay: AwsReplay;
let sts: FakeSts;
let s3: S3rver;
let s3Dir: string;
let s3Endpoint: string;
const s3Requests: Array<{ path: string; accessKeyId: string | null; sessionToken: string | null }> = [];
const registered: string[] = [];
const logLines: string[] = [];
let restoreEnv: () => void;

const api = (tenantId: string, path: string) => `/api/v1/tenants/${tenantId}${path}`;

beforeAll(async () => {
  s3Dir = mkdtempSync(join(tmpdir(), 'cg-discovery-s3-'));
  s3 = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: s3Dir, configureBuckets: [{ name: 'victim-tfstate' }, { name: 'tenant-tfstate' }] });
  const { port } = (await s3.run()) as AddressInfo;
  s3Endpoint = `http://127.0.0.1:${port}`;
  s3.httpServer.prependListener('request', (req) => s3Requests.push({ path: `${req.method} ${req.url}`, ...signerOf(req) }));
  // The service's own key pair, known to S3 as any real key would be.
  s3rverAccounts.DUMMY_ACCOUNT.createKeyPair(SERVICE_KEY, 'replay-secret');
  registered.push(SERVICE_KEY);

  replay = await startAwsReplay();
  sts = await startFakeSts();
  // What STS issues is a real key pair to S3 from then on.
  sts.onIssue = (c) => {
    s3rverAccounts.DUMMY_ACCOUNT.createKeyPair(c.accessKeyId, c.secretAccessKey);
    registered.push(c.accessKeyId);
  };
  const restoreOwn = saveEnv('AWS_ENDPOINT_URL_S3', 'AWS_ENDPOINT_URL_STS');
  const restoreReplay = useAwsReplay(replay.endpoint);
  process.env.AWS_ENDPOINT_URL_S3 = s3Endpoint;
  process.env.AWS_ENDPOINT_URL_STS = sts.endpoint;
  restoreEnv = () => {
    restoreReplay();
    restoreOwn();
  };

  // The states: another party's (which no tenant of ours may read) and tenant A's own.
  const admin = new S3Client({ region: 'us-east-1', endpoint: s3Endpoint, forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
  await admin.send(new PutObjectCommand({ Bucket: 'victim-tfstate', Key: 'prod.tfstate', Body: TF_STATE }));
  await admin.send(new PutObjectCommand({ Bucket: 'tenant-tfstate', Key: 'env/prod.tfstate', Body: TF_STATE }));
  admin.destroy();

  const logStream = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(String(chunk));
      done();
    },
  });
  t = await createTestApp({
    env: {
      CONTROLGRAPH_DISCOVERY_OWN_CREDENTIALS_TENANTS: `00000000-0000-4000-8000-00000000dead, ${GRANTED.toUpperCase()}`,
      CONTROLGRAPH_DISCOVERY_AWS_PRINCIPAL: SERVICE_PRINCIPAL,
      CONTROLGRAPH_DISCOVERY_STATE_MAX_BYTES: String(STATE_LIMIT),
    },
    // Everything the service logs, at every level: no secret may appear in it.
    log: pino({ level: 'trace' }, logStream),
  });
  a = await buildTenant(t);
  b = await buildTenant(t);
  operator = await buildTenant(t, { name: GRANTED });
  expect(operator.slug).toBe(GRANTED);
}, 120_000);

afterAll(async () => {
  restoreEnv?.();
  for (const key of registered) s3rverAccounts.DUMMY_ACCOUNT.revokeAccessKey(key);
  await t?.close();
  await sts?.close();
  await replay?.close();
  await s3?.close();
  if (s3Dir) rmSync(s3Dir, { recursive: true, force: true });
});

/** Requests any fake endpoint received so far. */
const sentOut = () => s3Requests.length + sts.calls.length + replay.requests.length;

async function createJob(session: Session, tenantId: string, body: Record<string, unknown>, expected = 201) {
  return (await call(t.app, session.token, { method: 'POST', url: api(tenantId, '/jobs'), payload: body, expect: expected })).json();
}
const getJob = async (session: Session, job: { status_url: string }) => (await call(t.app, session.token, { url: job.status_url, expect: 200 })).json();

async function connect(session: Session, tenantId: string, body: Record<string, unknown>) {
  return (await call(t.app, session.token, { method: 'POST', url: api(tenantId, '/cloud-connections'), payload: body, expect: 201 })).json();
}

describe('without a connection or a grant', () => {
  it("refuses another party's state_uri and the aws plugin with 403 before any request leaves the service", async () => {
    const before = sentOut();
    const analyst = a.users['security-analyst'];
    for (const start of [true, false]) {
      const res = await call(t.app, analyst.token, {
        method: 'POST',
        url: api(a.id, '/jobs'),
        payload: { name: 'theirs', plugins: ['terraform-state'], config: { 'terraform-state': { state_uri: 's3://victim-tfstate/prod.tfstate' } }, start },
      });
      expect(res.statusCode).toBe(403);
      expect(res.json().error).toMatchObject({ code: 'FORBIDDEN' });
      expect(res.json().error.message).toBe(
        `config["terraform-state"].connection_id is needed: this tenant's discovery may not use the service's own cloud credentials (the operator grants them per tenant with CONTROLGRAPH_DISCOVERY_OWN_CREDENTIALS_TENANTS). ` +
          `Create a cloud connection (POST /api/v1/tenants/${a.id}/cloud-connections: an IAM role the service assumes with an external id, or an access key) and name it in config["terraform-state"].connection_id, ` +
          'or give the state itself (config["terraform-state"].state, or a multipart upload to POST /jobs/terraform-state)',
      );
    }
    const aws = await call(t.app, analyst.token, { method: 'POST', url: api(a.id, '/jobs'), payload: { name: 'operator account', plugins: ['aws'], start: true } });
    expect(aws.statusCode).toBe(403);
    expect(aws.json().error.message).toMatch(
      /^config\.aws\.connection_id is needed: this tenant's discovery may not use the service's own cloud credentials .* and name it in config\.aws\.connection_id$/,
    );
    // Nothing stored, nothing queued, nothing sent.
    expect((await call(t.app, analyst.token, { url: api(a.id, '/jobs'), expect: 200 })).json().total).toBe(0);
    expect(await t.drain()).toBe(0);
    expect(sentOut()).toBe(before);
  });

  it('fails a job queued without a grant (one from before grants existed) when it runs, before any request', async () => {
    const job = await createJob(a.admin, a.id, { name: 'old job', plugins: ['terraform-state'], config: { 'terraform-state': { state: JSON.parse(TF_STATE.toString()) } } });
    // As a job created before this check existed is stored: state_uri, no connection.
    await t.deps.database.db
      .updateTable('discovery_jobs')
      .set({ config: sql`'{"terraform-state": {"state_uri": "s3://victim-tfstate/prod.tfstate"}}'::jsonb` })
      .where('id', '=', job.id)
      .execute();
    const before = sentOut();
    await call(t.app, a.admin.token, { method: 'POST', url: `${job.status_url}/start`, expect: 202 });
    await t.drain();
    const done = await getJob(a.admin, job);
    expect(done).toMatchObject({ status: 'failed', attempts: 1, stats: null });
    expect(done.error).toMatch(/^config\["terraform-state"\]\.connection_id is needed: this tenant's discovery may not use the service's own cloud credentials/);
    expect(sentOut()).toBe(before);
  });
});

describe('cloud connections', () => {
  it('creates a role connection with a generated external id and the trust policy to give the role; tenant-admin only', async () => {
    const roleArn = 'arn:aws:iam::111122223333:role/controlgraph-reader';
    const created = await connect(a.admin, a.id, { name: ' prod account ', auth: 'assume_role', role_arn: roleArn });
    expect(created).toMatchObject({ name: 'prod account', provider: 'aws', auth: 'assume_role', role_arn: roleArn, access_key_id_hint: null, secret_readable: null });
    expect(created.external_id).toMatch(/^controlgraph-[A-Za-z0-9_-]{32}$/);
    expect(created.trust_policy).toEqual({
      Version: '2012-10-17',
      Statement: [{ Effect: 'Allow', Principal: { AWS: SERVICE_PRINCIPAL }, Action: 'sts:AssumeRole', Condition: { StringEquals: { 'sts:ExternalId': created.external_id } } }],
    });
    // Each connection its own external id, never the same for two tenants.
    const other = await connect(b.admin, b.id, { name: 'same role', auth: 'assume_role', role_arn: roleArn });
    expect(other.external_id).not.toBe(created.external_id);

    // tenant:update (tenant-admin) to create, change and delete; tenant:read to look.
    for (const role of ['security-analyst', 'auditor', 'read-only'] as const) {
      const res = await call(t.app, a.users[role].token, { method: 'POST', url: api(a.id, '/cloud-connections'), payload: { name: 'x', auth: 'assume_role', role_arn: roleArn } });
      expect(res.statusCode, role).toBe(403);
      expect(res.json().error.message).toBe('missing permission tenant:update');
      for (const method of ['PATCH', 'DELETE'] as const) {
        const change = await call(t.app, a.users[role].token, {
          method,
          url: api(a.id, `/cloud-connections/${created.id}`),
          ...(method === 'PATCH' ? { payload: { name: 'y' } } : {}),
        });
        expect(change.statusCode, `${role} ${method}`).toBe(403);
      }
    }
    const listed = (await call(t.app, a.users['read-only'].token, { url: api(a.id, '/cloud-connections'), expect: 200 })).json();
    expect(listed).toMatchObject({ total: 1, page: 1, per_page: 50, total_pages: 1 });
    expect(listed.items[0]).toEqual(created);
    expect((await call(t.app, a.users['security-analyst'].token, { url: api(a.id, `/cloud-connections/${created.id}`), expect: 200 })).json()).toEqual(created);

    // Another tenant's connection is not found; another tenant's path is refused.
    expect((await call(t.app, a.admin.token, { url: api(a.id, `/cloud-connections/${other.id}`) })).json().error.message).toBe('cloud connection not found');
    expect((await call(t.app, a.admin.token, { method: 'PATCH', url: api(a.id, `/cloud-connections/${other.id}`), payload: { name: 'mine' } })).statusCode).toBe(404);
    expect((await call(t.app, a.admin.token, { method: 'DELETE', url: api(a.id, `/cloud-connections/${other.id}`) })).statusCode).toBe(404);
    expect((await call(t.app, a.admin.token, { url: api(b.id, '/cloud-connections') })).statusCode).toBe(403);

    // Renamed and pointed at another role: the external id stays. Audited.
    const updated = (
      await call(t.app, a.admin.token, {
        method: 'PATCH',
        url: api(a.id, `/cloud-connections/${created.id}`),
        payload: { name: 'prod', role_arn: 'arn:aws:iam::111122223333:role/reader-2' },
        expect: 200,
      })
    ).json();
    expect(updated).toMatchObject({ name: 'prod', role_arn: 'arn:aws:iam::111122223333:role/reader-2', external_id: created.external_id });
    await call(t.app, a.admin.token, { method: 'PATCH', url: api(a.id, `/cloud-connections/${created.id}`), payload: { role_arn: roleArn }, expect: 200 });
    const audit = await t.deps.database.db
      .selectFrom('audit_logs')
      .select(['action', 'details', 'workspace_id'])
      .where('target_id', '=', created.id)
      .orderBy('created_at')
      .execute();
    expect(audit.map((x) => x.action)).toEqual(['cloud_connection.created', 'cloud_connection.updated', 'cloud_connection.updated']);
    expect(audit[0]!.details).toMatchObject({ name: 'prod account', auth: 'assume_role', role_arn: roleArn });
    expect(audit[1]!.details).toMatchObject({ changed: ['name', 'role_arn'], role_arn: { from: roleArn, to: 'arn:aws:iam::111122223333:role/reader-2' } });
    expect(audit[0]!.workspace_id).toBe(a.defaultWorkspaceId);

    const doomed = await connect(a.admin, a.id, { name: 'doomed', auth: 'assume_role', role_arn: roleArn });
    await call(t.app, a.admin.token, { method: 'DELETE', url: api(a.id, `/cloud-connections/${doomed.id}`), expect: 204 });
    expect((await call(t.app, a.admin.token, { url: api(a.id, `/cloud-connections/${doomed.id}`) })).statusCode).toBe(404);
    const deleted = await t.deps.database.db
      .selectFrom('audit_logs')
      .select(['action', 'details'])
      .where('target_id', '=', doomed.id)
      .where('action', '=', 'cloud_connection.deleted')
      .executeTakeFirstOrThrow();
    expect(deleted.details).toMatchObject({ name: 'doomed', auth: 'assume_role', role_arn: roleArn });
  });

  it('refuses connections that do not fit their kind with 400', async () => {
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ['POST', { name: 'x', auth: 'assume_role' }, /^an assume_role connection needs role_arn/],
      [
        'POST',
        { name: 'x', auth: 'assume_role', role_arn: 'arn:aws:iam::111122223333:role/r', access_key_id: 'AKIAAAAAAAAAAAAAAAAA', secret_access_key: 'x'.repeat(40) },
        /^access_key_id and secret_access_key belong to an access_key connection/,
      ],
      ['POST', { name: 'x', auth: 'access_key', access_key_id: 'AKIAAAAAAAAAAAAAAAAA' }, /^an access_key connection needs access_key_id and secret_access_key together$/],
      [
        'POST',
        { name: 'x', auth: 'access_key', access_key_id: 'AKIAAAAAAAAAAAAAAAAA', secret_access_key: 'x'.repeat(40), role_arn: 'arn:aws:iam::111122223333:role/r' },
        /^role_arn belongs to an assume_role connection/,
      ],
      ['POST', { name: 'x', auth: 'assume_role', role_arn: 'arn:aws:iam::111122223333:user/someone' }, /role_arn/],
      ['POST', { name: 'x', auth: 'assume_role', role_arn: 'arn:aws:iam::111122223333:role/r', endpoint: 'http://169.254.169.254' }, /endpoint/],
      ['POST', { name: 'x', auth: 'gcp' }, /auth/],
      ['POST', { name: '   ', auth: 'assume_role', role_arn: 'arn:aws:iam::111122223333:role/r' }, /^name must not be blank$/],
      ['POST', { name: 'x', auth: 'access_key', access_key_id: 'lowercase-is-not-a-key', secret_access_key: 'x'.repeat(40) }, /access_key_id/],
    ];
    for (const [method, payload, message] of cases) {
      const res = await call(t.app, a.admin.token, { method: method as 'POST', url: api(a.id, '/cloud-connections'), payload });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().error.message, JSON.stringify(payload)).toMatch(message);
    }
    const role = await connect(a.admin, a.id, { name: 'kind', auth: 'assume_role', role_arn: 'arn:aws:iam::111122223333:role/r' });
    const patches: Array<[Record<string, unknown>, RegExp]> = [
      [{}, /must NOT have fewer than 1 properties/],
      [{ access_key_id: 'AKIAAAAAAAAAAAAAAAAA', secret_access_key: 'x'.repeat(40) }, /^access_key_id and secret_access_key belong to an access_key connection/],
      [{ auth: 'access_key' }, /auth/],
    ];
    for (const [payload, message] of patches) {
      const res = await call(t.app, a.admin.token, { method: 'PATCH', url: api(a.id, `/cloud-connections/${role.id}`), payload });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().error.message).toMatch(message);
    }
    await call(t.app, a.admin.token, { method: 'DELETE', url: api(a.id, `/cloud-connections/${role.id}`), expect: 204 });
  });
});

describe('a role connection', () => {
  let connection: { id: string; external_id: string; role_arn: string };

  beforeAll(async () => {
    connection = await connect(a.admin, a.id, { name: 'state reader', auth: 'assume_role', role_arn: 'arn:aws:iam::111122223333:role/tfstate-reader' });
    // The tenant put the external id in its role's trust policy.
    sts.trust.set(connection.role_arn, connection.external_id);
  });

  it("assumes the role with the tenant's external id and reads the state with the temporary credentials", async () => {
    const calls = sts.calls.length;
    const issued = sts.issued.length;
    const seen = s3Requests.length;
    const job = await createJob(a.users['security-analyst'], a.id, {
      name: 'own state',
      plugins: ['terraform-state'],
      config: { 'terraform-state': { state_uri: 's3://tenant-tfstate/env/prod.tfstate', connection_id: connection.id } },
      start: true,
    });
    expect(job.config['terraform-state']).toMatchObject({ source: 's3', connection_id: connection.id });
    await t.drain();
    const done = await getJob(a.admin, job);
    expect(done.status, done.error).toBe('completed');
    expect(done.stats.nodes_discovered).toBe(MAPPED);

    // One AssumeRole, signed with the service's own key, for the tenant's role and external id.
    expect(sts.calls.slice(calls)).toEqual([
      {
        roleArn: connection.role_arn,
        externalId: connection.external_id,
        sessionName: `controlgraph-${job.id}`,
        durationSeconds: '3600',
        signer: { accessKeyId: SERVICE_KEY, sessionToken: null },
      },
    ]);
    const credentials = sts.issued[issued]!;
    // S3 saw the role's temporary key and session token (and accepted its signature), never the service's key.
    const reads = s3Requests.slice(seen);
    expect(reads.length).toBeGreaterThan(0);
    expect(reads.map((r) => r.path)).toContain('GET /tenant-tfstate/env/prod.tfstate?x-id=GetObject');
    for (const read of reads) expect(read).toMatchObject({ accessKeyId: credentials.accessKeyId, sessionToken: credentials.sessionToken });

    const audit = await t.deps.database.db
      .selectFrom('audit_logs')
      .select('details')
      .where('target_id', '=', job.id)
      .where('action', '=', 'discovery_job.created')
      .executeTakeFirstOrThrow();
    expect(audit.details).toMatchObject({ credentials: { 'terraform-state': `connection:${connection.id}` } });
  });

  it("signs every call of the aws plugin with the role's credentials, and shares one session", async () => {
    const calls = sts.calls.length;
    const issued = sts.issued.length;
    const seen = replay.requests.length;
    const job = await createJob(a.admin, a.id, { name: 'own account', plugins: ['aws'], config: { aws: { services: ['ec2', 'iam'], connection_id: connection.id } }, start: true });
    await t.drain();
    const done = await getJob(a.admin, job);
    expect(done.status, done.error).toBe('completed');
    expect(done.details.plugins.aws).toMatchObject({ 'aws.ec2.instance': 3, 'aws.iam.role': 4 });
    expect(sts.calls.length - calls).toBe(1);
    const credentials = sts.issued[issued]!;
    const signers = replay.signers.slice(seen);
    expect(signers.length).toBeGreaterThanOrEqual(6);
    for (const signer of signers) expect(signer).toEqual({ accessKeyId: credentials.accessKeyId, sessionToken: credentials.sessionToken });
  });

  it("cannot borrow another tenant's role: its own external id is refused, the job fails saying why, and nothing is read", async () => {
    // Tenant B names A's role; B's connection carries B's external id, which A's trust policy does not name.
    const borrowed = await connect(b.admin, b.id, { name: "A's role", auth: 'assume_role', role_arn: connection.role_arn });
    const calls = sts.calls.length;
    const seen = s3Requests.length + replay.requests.length;
    const job = await createJob(b.admin, b.id, {
      name: 'borrowed',
      plugins: ['terraform-state', 'aws'],
      config: { 'terraform-state': { state_uri: 's3://tenant-tfstate/env/prod.tfstate', connection_id: borrowed.id }, aws: { connection_id: borrowed.id } },
      start: true,
    });
    await t.drain();
    const done = await getJob(b.admin, job);
    expect(done).toMatchObject({ status: 'failed', attempts: 1, stats: null });
    expect(done.error).toBe(
      `cannot assume ${connection.role_arn} (cloud connection "A's role"): AccessDenied (User: arn:aws:iam::999999999999:user/controlgraph is not authorized to perform: sts:AssumeRole on resource: ${connection.role_arn}). ` +
        `The role's trust policy must let the service's AWS principal call sts:AssumeRole with the condition sts:ExternalId = "${borrowed.external_id}"`,
    );
    // One AssumeRole for both plugins, with B's external id; no read anywhere.
    expect(sts.calls.slice(calls).map((c) => c.externalId)).toEqual([borrowed.external_id]);
    expect(s3Requests.length + replay.requests.length).toBe(seen);
    expect((await call(t.app, b.admin.token, { url: api(b.id, '/nodes'), expect: 200 })).json().total).toBe(0);
  });

  it('refuses a connection of another tenant or workspace with 400, and fails a job whose connection was deleted, before any request', async () => {
    const foreign = (await call(t.app, b.admin.token, { url: api(b.id, '/cloud-connections'), expect: 200 })).json().items[0];
    for (const config of [{ aws: { connection_id: foreign.id } }, { 'terraform-state': { state_uri: 's3://tenant-tfstate/env/prod.tfstate', connection_id: foreign.id } }]) {
      const plugins = Object.keys(config);
      const res = await call(t.app, a.admin.token, { method: 'POST', url: api(a.id, '/jobs'), payload: { name: 'x', plugins, config } });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.message).toMatch(new RegExp(`: no cloud connection ${foreign.id} in this workspace \\(GET /api/v1/tenants/${a.id}/cloud-connections lists them\\)$`));
    }
    const inline = await call(t.app, a.admin.token, {
      method: 'POST',
      url: api(a.id, '/jobs'),
      payload: { name: 'x', plugins: ['terraform-state'], config: { 'terraform-state': { state: JSON.parse(TF_STATE.toString()), connection_id: connection.id } } },
    });
    expect(inline.statusCode).toBe(400);
    expect(inline.json().error.message).toBe('config["terraform-state"].connection_id is for reading state_uri; a state given inline or uploaded needs no connection');

    const temporary = await connect(a.admin, a.id, { name: 'temporary', auth: 'assume_role', role_arn: connection.role_arn });
    const job = await createJob(a.admin, a.id, { name: 'orphan', plugins: ['aws'], config: { aws: { connection_id: temporary.id } } });
    await call(t.app, a.admin.token, { method: 'DELETE', url: api(a.id, `/cloud-connections/${temporary.id}`), expect: 204 });
    const before = sentOut();
    await call(t.app, a.admin.token, { method: 'POST', url: `${job.status_url}/start`, expect: 202 });
    await t.drain();
    const done = await getJob(a.admin, job);
    expect(done).toMatchObject({ status: 'failed', attempts: 1, error: `cloud connection ${temporary.id} does not exist in this workspace (deleted since the job was created?)` });
    expect(sentOut()).toBe(before);
  });
});

describe('an access key connection', () => {
  const KEY_ID = 'AKIATENANTKEY0001234';

  it('is sealed at rest, never returned, audited without the secret, and signs the reads', async () => {
    s3rverAccounts.DUMMY_ACCOUNT.createKeyPair(KEY_ID, TENANT_SECRET);
    registered.push(KEY_ID);
    const created = await connect(a.admin, a.id, { name: 'keys', auth: 'access_key', access_key_id: KEY_ID, secret_access_key: TENANT_SECRET });
    expect(created).toMatchObject({ auth: 'access_key', access_key_id_hint: '…1234', secret_readable: true, role_arn: null, external_id: null, trust_policy: null });
    const row = await t.deps.database.db.selectFrom('cloud_connections').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    expect(row.secrets).toMatch(/^v1\./);
    expect(JSON.stringify(row)).not.toContain(TENANT_SECRET);
    expect(JSON.stringify(row)).not.toContain(KEY_ID);

    const seen = s3Requests.length;
    const calls = sts.calls.length;
    const job = await createJob(a.admin, a.id, {
      name: 'with keys',
      plugins: ['terraform-state'],
      config: { 'terraform-state': { state_uri: 's3://tenant-tfstate/env/prod.tfstate', connection_id: created.id } },
      start: true,
    });
    await t.drain();
    expect((await getJob(a.admin, job)).status).toBe('completed');
    expect(sts.calls.length).toBe(calls);
    const reads = s3Requests.slice(seen);
    expect(reads.length).toBeGreaterThan(0);
    for (const read of reads) expect(read).toMatchObject({ accessKeyId: KEY_ID, sessionToken: null });

    // A new key replaces the old one (audited with the hints only).
    const replaced = (
      await call(t.app, a.admin.token, {
        method: 'PATCH',
        url: api(a.id, `/cloud-connections/${created.id}`),
        payload: { access_key_id: 'AKIATENANTKEY0005678', secret_access_key: `${TENANT_SECRET}-2` },
        expect: 200,
      })
    ).json();
    expect(replaced.access_key_id_hint).toBe('…5678');
    const audit = await t.deps.database.db.selectFrom('audit_logs').select(['action', 'details']).where('target_id', '=', created.id).orderBy('created_at').execute();
    expect(audit.map((x) => x.action)).toEqual(['cloud_connection.created', 'cloud_connection.updated']);
    expect(audit[1]!.details).toMatchObject({ changed: ['access_key'], access_key_id_hint: { from: '…1234', to: '…5678' } });

    // A key sealed under another CONTROLGRAPH_SECRET (or altered) reads as unreadable, and a job says what to do.
    await t.deps.database.db.updateTable('cloud_connections').set({ secrets: 'v1.otherkey.AAAA.BBBB' }).where('id', '=', created.id).execute();
    expect((await call(t.app, a.admin.token, { url: api(a.id, `/cloud-connections/${created.id}`), expect: 200 })).json().secret_readable).toBe(false);
    const stale = await createJob(a.admin, a.id, { name: 'stale keys', plugins: ['aws'], config: { aws: { connection_id: created.id } }, start: true });
    const before = sentOut();
    await t.drain();
    expect((await getJob(a.admin, stale)).error).toBe(
      `the access key of cloud connection "keys" cannot be opened (sealed under another CONTROLGRAPH_SECRET, or altered): enter it again with PATCH /cloud-connections/${created.id}`,
    );
    expect(sentOut()).toBe(before);
  });

  it('never shows a secret in a response, an event, the audit log or the logs', async () => {
    const secrets = [TENANT_SECRET, 'AKIATENANTKEY0001234', 'AKIATENANTKEY0005678', ...sts.issued.flatMap((c) => [c.secretAccessKey, c.sessionToken]), 'replay-secret'];
    expect(sts.issued.length).toBeGreaterThan(0);
    const responses = [
      (await call(t.app, a.admin.token, { url: api(a.id, '/cloud-connections?per_page=500'), expect: 200 })).body,
      (await call(t.app, a.admin.token, { url: api(a.id, '/jobs?per_page=500'), expect: 200 })).body,
      (await call(t.app, a.admin.token, { url: api(a.id, '/audit-logs?per_page=500'), expect: 200 })).body,
      JSON.stringify(await events(t, a.id)),
      JSON.stringify(await t.deps.database.db.selectFrom('audit_logs').selectAll().execute()),
      JSON.stringify(await t.deps.database.db.selectFrom('discovery_jobs').selectAll().execute()),
      logLines.join(''),
    ];
    expect(logLines.length).toBeGreaterThan(10);
    for (const text of responses) for (const secret of secrets) expect(text.includes(secret), secret).toBe(false);
  });
});

describe('an operator-granted tenant', () => {
  it("reads a state and an account with the service's own credentials, by slug or by id", async () => {
    const calls = sts.calls.length;
    const seen = s3Requests.length;
    const job = await createJob(operator.admin, operator.id, {
      name: 'granted',
      plugins: ['terraform-state'],
      config: { 'terraform-state': { state_uri: 's3://victim-tfstate/prod.tfstate' } },
      start: true,
    });
    // One at a time: two audits of one workspace at once can collide on a finding (and retry).
    await t.drain();
    const replayed = replay.signers.length;
    const account = await createJob(operator.admin, operator.id, { name: 'granted account', plugins: ['aws'], config: { aws: { services: ['ec2'] } }, start: true });
    await t.drain();
    expect((await getJob(operator.admin, job)).status).toBe('completed');
    expect((await getJob(operator.admin, account)).status).toBe('completed');
    expect(sts.calls.length).toBe(calls);
    const reads = s3Requests.slice(seen);
    expect(reads.length).toBeGreaterThan(0);
    for (const read of reads) expect(read.accessKeyId).toBe(SERVICE_KEY);
    for (const signer of replay.signers.slice(replayed)) expect(signer.accessKeyId).toBe(SERVICE_KEY);
    const audit = await t.deps.database.db
      .selectFrom('audit_logs')
      .select('details')
      .where('target_id', '=', job.id)
      .where('action', '=', 'discovery_job.created')
      .executeTakeFirstOrThrow();
    expect(audit.details).toMatchObject({ credentials: { 'terraform-state': 'service' } });

    // The grant names tenants by id too (and a listed id or slug grants no one else).
    const db = t.deps.database.db;
    expect(await ownCredentialsGranted(db, { discoveryOwnCredentialsTenants: [a.id] }, a.id)).toBe(true);
    expect(await ownCredentialsGranted(db, { discoveryOwnCredentialsTenants: [a.id, GRANTED] }, b.id)).toBe(false);
    expect(await ownCredentialsGranted(db, { discoveryOwnCredentialsTenants: [] }, operator.id)).toBe(false);
    expect(loadConfig({ CONTROLGRAPH_DISCOVERY_OWN_CREDENTIALS_TENANTS: ' Acme , 0000AAAA-0000-4000-8000-000000000000 ' }).discoveryOwnCredentialsTenants).toEqual([
      'acme',
      '0000aaaa-0000-4000-8000-000000000000',
    ]);
    expect(() => loadConfig({ CONTROLGRAPH_DISCOVERY_AWS_PRINCIPAL: 'root' })).toThrow(
      'CONTROLGRAPH_DISCOVERY_AWS_PRINCIPAL: "root" must be an AWS account id or an IAM or STS ARN',
    );
  });
});

describe('uploaded and inline state', () => {
  const form = (fields: Record<string, string>, state?: Buffer, part = 'state') => {
    const body = multipart(fields);
    if (!state) return body;
    // The helper names its file part "file": build the state part by hand.
    const boundary = body.headers['content-type'].split('boundary=')[1]!;
    const end = Buffer.from(`--${boundary}--\r\n`);
    const payload = Buffer.concat([
      body.payload.subarray(0, body.payload.length - end.length),
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part}"; filename="terraform.tfstate"\r\nContent-Type: application/json\r\n\r\n`),
      state,
      Buffer.from('\r\n'),
      end,
    ]);
    return { payload, headers: body.headers };
  };
  const upload = (session: Session, body: { payload: Buffer; headers: Record<string, string> }) =>
    call(t.app, session.token, { method: 'POST', url: api(a.id, '/jobs/terraform-state'), payload: body.payload, headers: body.headers });

  it('creates and runs a job from a multipart upload and from inline state, with no credentials and no request out', async () => {
    const before = sentOut();
    const res = await upload(
      a.users['security-analyst'],
      form({ name: 'uploaded', start: 'true', default_region: 'eu-west-1', files: JSON.stringify({ 'main.tf': 'resource "aws_vpc" "main" {}' }) }, TF_STATE),
    );
    expect(res.statusCode, res.body).toBe(201);
    const job = res.json();
    expect(job).toMatchObject({
      status: 'queued',
      plugins: ['terraform-state'],
      config: { 'terraform-state': { source: 'upload', state_bytes: expect.any(Number), state_kept: true, files: ['main.tf'], default_region: 'eu-west-1' } },
    });
    const inline = await createJob(a.admin, a.id, { name: 'inline', plugins: ['terraform-state'], config: { 'terraform-state': { state: TF_STATE.toString() } }, start: true });
    await t.drain();
    for (const j of [job, inline]) {
      const done = await getJob(a.admin, j);
      expect(done.status, done.error).toBe('completed');
      expect(done.stats.nodes_discovered).toBe(MAPPED);
      expect(done.config['terraform-state'].state_kept).toBe(false);
    }
    expect(sentOut()).toBe(before);
  });

  it('refuses a bad upload: 413 past the size limit, 400 otherwise', async () => {
    const big = Buffer.from(JSON.stringify({ version: 4, resources: [], padding: 'x'.repeat(STATE_LIMIT) }));
    const tooLarge = await upload(a.admin, form({ name: 'big' }, big));
    expect(tooLarge.statusCode).toBe(413);
    expect(tooLarge.json().error).toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
      message: `the state file exceeds ${STATE_LIMIT} bytes (CONTROLGRAPH_DISCOVERY_STATE_MAX_BYTES)`,
      details: { max_bytes: STATE_LIMIT },
    });

    const cases: Array<[{ payload: Buffer; headers: Record<string, string> }, RegExp]> = [
      [form({ name: 'no state' }), /^no state file in the upload \(multipart file part "state"\)$/],
      [form({ name: 'bad json' }, Buffer.from('{not json')), /^config\["terraform-state"\]\.state is not JSON: /],
      [form({ name: 'v3' }, Buffer.from('{"version": 3, "resources": []}')), /^unsupported Terraform state format version 3: only version 4 is read$/],
      [form({ name: 'wrong part' }, TF_STATE, 'file'), /^unknown file part "file": the state file goes in the part named state$/],
      [form({ name: 'x', state_uri: 's3://victim-tfstate/prod.tfstate' }, TF_STATE), /^unknown form field "state_uri"/],
      [form({ name: 'x', files: '{nope' }, TF_STATE), /^form field files is not JSON: /],
      [form({}, TF_STATE), /^invalid body: \/name /],
      [form({ name: 'x', default_region: 'moon-1' }, TF_STATE), /^invalid body: \/config\/terraform-state\/default_region /],
      [form({ name: 'x', start: 'maybe' }, TF_STATE), /^invalid body: \/start /],
      [{ payload: Buffer.from('{"name": "json"}'), headers: { 'content-type': 'application/json' } }, /^expected a multipart\/form-data upload with a file part named state$/],
    ];
    for (const [body, message] of cases) {
      const res = await upload(a.admin, body);
      expect(res.statusCode, message.source).toBe(400);
      expect(res.json().error.message).toMatch(message);
    }
    const reader = await upload(a.users['read-only'], form({ name: 'x' }, TF_STATE));
    expect(reader.statusCode).toBe(403);
    expect(reader.json().error.message).toBe('missing permission jobs:write');
  });
});
