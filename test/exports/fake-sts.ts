import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { signerOf } from './aws-recorded.js';

/**
 * A stub of AWS STS (a third party that cannot run here) on 127.0.0.1: it answers AssumeRole in the
 * awsQuery wire format the real @aws-sdk/client-sts reads, so the client's serializer, signer and
 * deserializer run. Like STS with a role whose trust policy requires `sts:ExternalId`, it issues
 * temporary credentials only when the external id is the one the role trusts, and answers
 * AccessDenied otherwise. Every call is recorded, with the credentials that signed it.
 */

export interface AssumeRoleCall {
  roleArn: string | null;
  externalId: string | null;
  sessionName: string | null;
  durationSeconds: string | null;
  /** Who signed the call: the service's own access key. */
  signer: { accessKeyId: string | null; sessionToken: string | null };
}

export interface IssuedCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken: string;
  roleArn: string;
}

export interface FakeSts {
  endpoint: string;
  calls: AssumeRoleCall[];
  issued: IssuedCredentials[];
  /** Role ARN → the external id its trust policy requires. */
  trust: Map<string, string>;
  /** Called with each issued key pair (e.g. to register it with the fake S3). */
  onIssue?: (credentials: IssuedCredentials) => void;
  close(): Promise<void>;
}

const NS = 'https://sts.amazonaws.com/doc/2011-06-15/';
const esc = (v: string) => v.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function error(res: ServerResponse, status: number, code: string, message: string) {
  res.writeHead(status, { 'content-type': 'text/xml' });
  res.end(`<ErrorResponse xmlns="${NS}"><Error><Type>Sender</Type><Code>${code}</Code><Message>${esc(message)}</Message></Error><RequestId>fake-sts</RequestId></ErrorResponse>`);
}

export async function startFakeSts(): Promise<FakeSts> {
  const sts: Omit<FakeSts, 'endpoint' | 'close'> = { calls: [], issued: [], trust: new Map() };
  const server = createServer((req, res) => {
    readBody(req)
      .then((body) => {
        const form = new URLSearchParams(body);
        if (form.get('Action') !== 'AssumeRole') return error(res, 400, 'InvalidAction', `${form.get('Action')} is not stubbed`);
        const call: AssumeRoleCall = {
          roleArn: form.get('RoleArn'),
          externalId: form.get('ExternalId'),
          sessionName: form.get('RoleSessionName'),
          durationSeconds: form.get('DurationSeconds'),
          signer: signerOf(req),
        };
        sts.calls.push(call);
        const trusted = call.roleArn ? sts.trust.get(call.roleArn) : undefined;
        if (!trusted || trusted !== call.externalId) {
          return error(res, 403, 'AccessDenied', `User: arn:aws:iam::999999999999:user/controlgraph is not authorized to perform: sts:AssumeRole on resource: ${call.roleArn}`);
        }
        const issued: IssuedCredentials = {
          accessKeyId: `ASIA${randomBytes(8).toString('hex').toUpperCase()}`,
          secretAccessKey: `temp-secret-${randomBytes(16).toString('hex')}`,
          sessionToken: `temp-token-${randomBytes(24).toString('hex')}`,
          roleArn: call.roleArn!,
        };
        sts.issued.push(issued);
        (sts as FakeSts).onIssue?.(issued);
        // Wall time: the SDK compares the expiry with its own clock.
        const expiration = new Date(Date.now() + 3600_000).toISOString();
        const session = call.sessionName ?? 'session';
        res.writeHead(200, { 'content-type': 'text/xml' });
        res.end(
          `<AssumeRoleResponse xmlns="${NS}"><AssumeRoleResult><Credentials><AccessKeyId>${issued.accessKeyId}</AccessKeyId>` +
            `<SecretAccessKey>${issued.secretAccessKey}</SecretAccessKey><SessionToken>${issued.sessionToken}</SessionToken><Expiration>${expiration}</Expiration></Credentials>` +
            `<AssumedRoleUser><AssumedRoleId>AROAFAKE:${esc(session)}</AssumedRoleId><Arn>${esc(call.roleArn!.replace(':iam::', ':sts::').replace(':role/', ':assumed-role/'))}/${esc(session)}</Arn></AssumedRoleUser>` +
            `</AssumeRoleResult><ResponseMetadata><RequestId>fake-sts</RequestId></ResponseMetadata></AssumeRoleResponse>`,
        );
      })
      .catch((e: unknown) => error(res, 500, 'InternalFailure', String(e)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(sts, {
    endpoint: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}
