import { createServer, type AddressInfo, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestApp } from '../harness/app.js';
import { buildTenant, call, fresh, type TenantFixture } from '../harness/identity.js';
import { saveEnv } from '../harness/env.js';
import {
  createDeliveryApp,
  createIntegration,
  deliveriesOf,
  emit,
  findingCreated,
  parseMail,
  reply,
  startReceiver,
  startSmtpServer,
  type Receiver,
  type SmtpReceiver,
} from './helpers.js';

/**
 * The other integration types, each a formatter over the same delivery and retry machinery. Slack,
 * Teams, Jira, GitHub and PagerDuty cannot be reached from the test machine: a loopback HTTP server
 * plays each of them, answering as its API documents, and the tests check the exact request each API
 * documents. E-mail goes through a real SMTP server (the smtp-server package) on loopback.
 */
let t: TestApp;

/** A TCP listener on loopback that is not an SMTP server: it writes `banner` (and closes) or, when '', says nothing. */
async function tcpListener(banner: string | null) {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    if (banner) socket.end(banner);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
let tenant: TenantFixture;
let token: string;
let api: Receiver;
let smtp: SmtpReceiver;
const S = 1_000;
const SMTP_USER = 'cg-mailer';
const SMTP_PASSWORD = 'smtp-password-for-tests';

const restoreSmtp = saveEnv('CONTROLGRAPH_SMTP_URL', 'CONTROLGRAPH_SMTP_FROM');
beforeAll(async () => {
  smtp = await startSmtpServer({ users: { [SMTP_USER]: SMTP_PASSWORD } });
  // The service-wide SMTP server of e-mail integrations without their own (read when the module starts).
  process.env.CONTROLGRAPH_SMTP_URL = `smtp://${SMTP_USER}:${SMTP_PASSWORD}@127.0.0.1:${smtp.port}`;
  process.env.CONTROLGRAPH_SMTP_FROM = 'alerts@controlgraph.test';
  t = await createDeliveryApp();
  tenant = await buildTenant(t);
  api = await startReceiver();
});
afterAll(async () => {
  await api.close();
  await smtp.close();
  await t.close();
  // The next test file in this worker must not find this file's SMTP server.
  restoreSmtp();
});
beforeEach(async () => {
  t.clock.advance(S);
  api.reset();
  smtp.messages.length = 0;
  smtp.rejectRecipients.clear();
  // Each fake API answers as the real one does on success.
  api.fallback = (req, res) => {
    if (req.url.startsWith('/slack/')) return reply(200, 'ok', { 'content-type': 'text/plain' })(req, res);
    if (req.url.startsWith('/teams/')) return reply(202, '')(req, res);
    if (req.url.startsWith('/jira/'))
      return reply(201, JSON.stringify({ id: '10000', key: 'SEC-1', self: `${api.url}/jira/rest/api/3/issue/10000` }), { 'content-type': 'application/json' })(req, res);
    if (req.url.startsWith('/github/'))
      return reply(201, JSON.stringify({ id: 1, number: 1347, html_url: 'https://github.com/acme/infra/issues/1347' }), { 'content-type': 'application/json' })(req, res);
    if (req.url.startsWith('/pagerduty/')) {
      const dedup = (JSON.parse(req.body) as { dedup_key?: string }).dedup_key;
      return reply(202, JSON.stringify({ status: 'success', message: 'Event processed', dedup_key: dedup }), { 'content-type': 'application/json' })(req, res);
    }
    return reply(404, 'no such API')(req, res);
  };
  token = (await fresh(t, tenant.admin)).token;
});
afterEach(async () => {
  await t.deps.database.db.deleteFrom('integrations').where('tenant_id', '=', tenant.id).execute();
  await t.drain();
});

const FINDING = {
  resource_name: 'payroll-exports',
  severity: 'HIGH',
  title: 'S3 bucket versioning is not enabled',
  description: 'Versioning protects objects against accidental deletion.',
  remediation: 'Enable versioning on the bucket.',
};
// The rule's failure wording, and the resource it is about.
const TITLE = 'New finding: HIGH S3 bucket versioning is not enabled (payroll-exports)';

async function deliverOne(body: Record<string, unknown>, overrides: Record<string, unknown> = {}) {
  const created = await createIntegration(t, token, tenant.id, body);
  const event = findingCreated(tenant.id, tenant.defaultWorkspaceId, { ...FINDING, ...overrides });
  await emit(t, [event]);
  await t.drain();
  const list = await deliveriesOf(t, token, tenant.id, created.id);
  return { created, event, finding: (event.data as { finding: Record<string, string> }).finding, delivery: list.items[0]!, list };
}

const outbox = async () =>
  t.deps.database.db.selectFrom('outbox_events').select(['id', 'created_at']).where('tenant_id', '=', tenant.id).orderBy('seq', 'desc').executeTakeFirstOrThrow();

describe('Slack incoming webhook', () => {
  it('POSTs a Block Kit message with a text fallback (mrkdwn escaped), as chat.postMessage webhooks document', async () => {
    const { delivery, finding } = await deliverOne(
      { type: 'slack', name: 'chat', config: { url: `${api.url}/slack/services/T000/B000/XXXX`, events: ['finding.created'] } },
      { description: 'Objects <can> be lost & not restored.' },
    );
    expect(delivery).toMatchObject({ status: 'succeeded', last_status_code: 200, attempt_count: 1 });
    expect(delivery.attempts[0]).toMatchObject({ response_body: 'ok' });
    expect(api.requests).toHaveLength(1);
    const [request] = api.requests;
    expect(request).toMatchObject({ method: 'POST', url: '/slack/services/T000/B000/XXXX' });
    expect(request!.headers['content-type']).toBe('application/json');
    const { timestamp } = await outbox().then((e) => ({ timestamp: new Date(e.created_at).toISOString() }));
    const body = JSON.parse(request!.body);
    expect(body).toEqual({
      text: TITLE,
      blocks: [
        { type: 'header', text: { type: 'plain_text', text: TITLE, emoji: true } },
        { type: 'section', text: { type: 'mrkdwn', text: 'Objects &lt;can&gt; be lost &amp; not restored.\n\nRemediation: Enable versioning on the bucket.' } },
        {
          type: 'section',
          fields: [
            { type: 'mrkdwn', text: '*Severity*\nHIGH' },
            { type: 'mrkdwn', text: `*Resource*\n${finding.resource_name} (${finding.resource_id})` },
            { type: 'mrkdwn', text: '*Resource type*\naws.s3.bucket' },
            { type: 'mrkdwn', text: '*Region*\nus-east-1' },
            { type: 'mrkdwn', text: '*Control*\ncis-aws 2.1.3' },
            { type: 'mrkdwn', text: '*Rule*\naws-s3-bucket-versioning' },
            { type: 'mrkdwn', text: `*Finding*\n${finding.id}` },
          ],
        },
        { type: 'context', elements: [{ type: 'mrkdwn', text: `ControlGraph · finding.created · ${timestamp}` }] },
      ],
    });
    // Block Kit limits: header plain_text up to 150 characters, at most 10 fields of up to 2,000.
    const long = await deliverOne(
      { type: 'slack', name: 'chat 2', config: { url: `${api.url}/slack/services/T000/B000/YYYY`, events: ['finding.created'] } },
      { title: 'x'.repeat(400) },
    );
    expect(long.delivery.status).toBe('succeeded');
    const header = JSON.parse(api.requests.at(-1)!.body).blocks[0];
    expect(header.text.text.length).toBeLessThanOrEqual(150);
  });
});

describe('Microsoft Teams', () => {
  it('Workflows webhook: a message with one Adaptive Card attachment', async () => {
    const { delivery } = await deliverOne({ type: 'teams', name: 'team chat', config: { url: `${api.url}/teams/workflows/abc`, events: ['finding.created'] } });
    expect(delivery).toMatchObject({ status: 'succeeded', last_status_code: 202 });
    const body = JSON.parse(api.requests[0]!.body);
    expect(api.requests[0]!.headers['content-type']).toBe('application/json');
    expect(body).toMatchObject({ type: 'message', attachments: [{ contentType: 'application/vnd.microsoft.card.adaptive', contentUrl: null }] });
    expect(body.attachments).toHaveLength(1);
    const card = body.attachments[0].content;
    expect(card).toMatchObject({ $schema: 'http://adaptivecards.io/schemas/adaptive-card.json', type: 'AdaptiveCard', version: '1.4' });
    expect(card.body[0]).toEqual({ type: 'TextBlock', text: TITLE, weight: 'Bolder', size: 'Medium', wrap: true, color: 'Attention' });
    expect(card.body[1]).toEqual({
      type: 'TextBlock',
      text: 'Versioning protects objects against accidental deletion.\n\nRemediation: Enable versioning on the bucket.',
      wrap: true,
    });
    expect(card.body[2].type).toBe('FactSet');
    expect(card.body[2].facts.slice(0, 2)).toEqual([
      { title: 'Severity', value: 'HIGH' },
      { title: 'Resource', value: expect.stringContaining('bucket-') },
    ]);
    expect(card.body.at(-1)).toMatchObject({ type: 'TextBlock', isSubtle: true, size: 'Small' });
  });

  it('legacy connector: an Office 365 MessageCard when config.format is message_card', async () => {
    const { delivery } = await deliverOne({
      type: 'teams',
      name: 'connector',
      config: { url: `${api.url}/teams/webhookb2/legacy`, format: 'message_card', events: ['finding.created'] },
    });
    expect(delivery.status).toBe('succeeded');
    const body = JSON.parse(api.requests[0]!.body);
    expect(body).toMatchObject({
      '@type': 'MessageCard',
      '@context': 'https://schema.org/extensions',
      summary: TITLE,
      themeColor: 'D13438',
      title: TITLE,
      sections: [
        { activityTitle: 'finding.created', text: 'Versioning protects objects against accidental deletion.\n\nRemediation: Enable versioning on the bucket.', markdown: true },
      ],
    });
    expect(body.sections[0].facts[0]).toEqual({ name: 'Severity', value: 'HIGH' });
  });
});

describe('Jira issue creation', () => {
  it('Cloud (REST API v3): POST /rest/api/3/issue with fields and an Atlassian Document Format description, Basic e-mail:token', async () => {
    const { delivery, created } = await deliverOne({
      type: 'jira',
      name: 'tickets',
      config: {
        base_url: `${api.url}/jira/`,
        project_key: 'SEC',
        email: 'bot@example.com',
        api_token: 'jira-api-token',
        labels: ['controlgraph', 'cis-aws'],
        events: ['finding.created'],
      },
    });
    expect(delivery).toMatchObject({ status: 'succeeded', last_status_code: 201 });
    expect(delivery.attempts[0].response_body).toContain('"key":"SEC-1"');
    const [request] = api.requests;
    expect(request).toMatchObject({ method: 'POST', url: '/jira/rest/api/3/issue' });
    expect(request!.headers).toMatchObject({
      'content-type': 'application/json',
      accept: 'application/json',
      authorization: `Basic ${Buffer.from('bot@example.com:jira-api-token').toString('base64')}`,
    });
    const body = JSON.parse(request!.body);
    expect(Object.keys(body)).toEqual(['fields']);
    expect(body.fields).toMatchObject({ project: { key: 'SEC' }, issuetype: { name: 'Task' }, summary: TITLE, labels: ['controlgraph', 'cis-aws'] });
    const doc = body.fields.description;
    expect(doc).toMatchObject({ type: 'doc', version: 1 });
    expect(doc.content[0]).toEqual({ type: 'paragraph', content: [{ type: 'text', text: 'Versioning protects objects against accidental deletion.' }] });
    expect(doc.content[1]).toEqual({ type: 'paragraph', content: [{ type: 'text', text: 'Remediation: Enable versioning on the bucket.' }] });
    expect(doc.content[2].type).toBe('bulletList');
    expect(doc.content[2].content[0]).toEqual({
      type: 'listItem',
      content: [
        {
          type: 'paragraph',
          content: [
            { type: 'text', text: 'Severity: ', marks: [{ type: 'strong' }] },
            { type: 'text', text: 'HIGH' },
          ],
        },
      ],
    });
    expect(doc.content.at(-1).content[0].text).toContain(`delivery ${delivery.id}`);
    expect(created.config.api_token).toBe('jira-api-token');
  });

  it('Data Center (REST API v2): plain-text description and a Bearer personal access token; a 400 is a failed attempt retried on schedule', async () => {
    api.queue.push(reply(400, JSON.stringify({ errorMessages: [], errors: { issuetype: 'The issue type selected is invalid.' } }), { 'content-type': 'application/json' }));
    const { delivery, created } = await deliverOne({
      type: 'jira',
      name: 'dc',
      config: { base_url: `${api.url}/jira`, project_key: 'OPS', issue_type: 'Bug', api_version: 2, api_token: 'dc-pat', events: ['finding.created'] },
    });
    expect(delivery).toMatchObject({ status: 'pending', last_status_code: 400, last_error: 'HTTP 400' });
    expect(delivery.attempts[0].response_body).toContain('The issue type selected is invalid.');
    t.clock.advance(30 * S);
    await t.drain();
    const [retried] = (await deliveriesOf(t, token, tenant.id, created.id)).items;
    expect(retried).toMatchObject({ status: 'succeeded', attempt_count: 2, last_status_code: 201 });
    expect(api.requests.map((r) => r.url)).toEqual(['/jira/rest/api/2/issue', '/jira/rest/api/2/issue']);
    const request = api.requests[1]!;
    expect(request.headers.authorization).toBe('Bearer dc-pat');
    const body = JSON.parse(request.body);
    expect(body.fields).toMatchObject({ project: { key: 'OPS' }, issuetype: { name: 'Bug' }, summary: TITLE, labels: ['controlgraph'] });
    expect(typeof body.fields.description).toBe('string');
    expect(body.fields.description).toContain('Versioning protects objects against accidental deletion.');
    expect(body.fields.description).toContain('* Severity: HIGH');
  });
});

describe('GitHub issue creation', () => {
  it('POST /repos/{owner}/{repo}/issues with title, Markdown body and labels; Bearer token, versioned media type, User-Agent', async () => {
    const { delivery } = await deliverOne({
      type: 'github',
      name: 'issues',
      config: { api_url: `${api.url}/github`, repository: 'acme/infra', token: 'ghp_testtoken', labels: ['security'], events: ['finding.created'] },
    });
    expect(delivery).toMatchObject({ status: 'succeeded', last_status_code: 201 });
    const [request] = api.requests;
    expect(request).toMatchObject({ method: 'POST', url: '/github/repos/acme/infra/issues' });
    expect(request!.headers).toMatchObject({
      accept: 'application/vnd.github+json',
      authorization: 'Bearer ghp_testtoken',
      'x-github-api-version': '2022-11-28',
      'content-type': 'application/json',
    });
    // GitHub refuses requests without a User-Agent.
    expect(request!.headers['user-agent']).toMatch(/^ControlGraph-Webhooks\//);
    const body = JSON.parse(request!.body);
    expect(Object.keys(body).sort()).toEqual(['body', 'labels', 'title']);
    expect(body.title).toBe(TITLE);
    expect(body.labels).toEqual(['security']);
    expect(body.body).toContain('Versioning protects objects against accidental deletion.');
    expect(body.body).toContain('| Severity | HIGH |');
    expect(body.body).toContain(`delivery \`${delivery.id}\``);
  });
});

describe('PagerDuty Events API v2', () => {
  it('finding.created triggers an alert and finding.resolved resolves it with the same dedup_key', async () => {
    const created = await createIntegration(t, token, tenant.id, {
      type: 'pagerduty',
      name: 'on-call',
      config: { events_url: `${api.url}/pagerduty/v2/enqueue`, routing_key: 'R0UTINGKEY0123456789012345678901', events: ['finding.created', 'finding.resolved'] },
    });
    const event = findingCreated(tenant.id, tenant.defaultWorkspaceId, FINDING);
    const finding = (event.data as { finding: Record<string, string> }).finding;
    await emit(t, [event]);
    const timestamp = t.clock.now().toISOString();
    await t.drain();
    t.clock.advance(S);
    await emit(t, [
      {
        tenantId: tenant.id,
        workspaceId: tenant.defaultWorkspaceId,
        type: 'finding.resolved',
        data: { finding_id: finding.id, resolved_at: t.clock.now().toISOString(), rule_id: finding.rule_id, resource_id: finding.resource_id, resolved_by: 'audit' },
      },
    ]);
    await t.drain();
    const deliveries = (await deliveriesOf(t, token, tenant.id, created.id)).items;
    expect(deliveries.map((d) => [d.event_type, d.status, d.last_status_code])).toEqual([
      ['finding.resolved', 'succeeded', 202],
      ['finding.created', 'succeeded', 202],
    ]);
    expect(api.requests.map((r) => [r.method, r.url, r.headers['content-type']])).toEqual([
      ['POST', '/pagerduty/v2/enqueue', 'application/json'],
      ['POST', '/pagerduty/v2/enqueue', 'application/json'],
    ]);
    const trigger = JSON.parse(api.requests[0]!.body);
    const triggerDelivery = deliveries[1]!;
    expect(trigger).toEqual({
      routing_key: 'R0UTINGKEY0123456789012345678901',
      event_action: 'trigger',
      dedup_key: expect.stringMatching(/^controlgraph-finding-[0-9a-f]{40}$/),
      client: 'ControlGraph',
      payload: {
        summary: TITLE,
        source: finding.resource_id,
        // HIGH maps to PagerDuty's "error" (critical, error, warning, info).
        severity: 'error',
        timestamp,
        component: 'aws.s3.bucket',
        group: 'cis-aws',
        class: 'finding.created',
        custom_details: expect.objectContaining({ Severity: 'HIGH', Rule: 'aws-s3-bucket-versioning', event_id: triggerDelivery.event_id, delivery_id: triggerDelivery.id }),
      },
    });
    const resolve = JSON.parse(api.requests[1]!.body);
    expect(resolve).toEqual({ routing_key: 'R0UTINGKEY0123456789012345678901', event_action: 'resolve', dedup_key: trigger.dedup_key });
    expect(deliveries[0]!.attempts[0].response_body).toContain('"status":"success"');
  });
});

describe('e-mail through SMTP', () => {
  it('mails an attestation expiry reminder (the 60, 30 and 7 days events of questionnaires) to the subscribed addresses', async () => {
    const created = await createIntegration(t, token, tenant.id, {
      type: 'email',
      name: 'attestation owners',
      config: {
        to: ['grc@example.com'],
        events: ['attestation.expiring'],
        smtp: { host: '127.0.0.1', port: smtp.port, username: SMTP_USER, password: SMTP_PASSWORD, from: 'controlgraph@example.com' },
      },
    });
    // The event as the questionnaires module emits it (control-status.ts, the reminder sweep).
    await emit(t, [
      {
        tenantId: tenant.id,
        workspaceId: tenant.defaultWorkspaceId,
        type: 'attestation.expiring',
        data: {
          assessment_id: '7d2b1c7e-0c43-4bb8-9d2e-5f0c1a2b3c4d',
          questionnaire_id: '0b8f6a52-93c1-4f6e-b0d4-1e2f3a4b5c6d',
          questionnaire_title: 'Physical protection (NIST SP 800-171 3.10)',
          days_before: 30,
          level: 'warning',
          expires_at: '2026-12-27T12:00:00.000Z',
          controls: [
            { framework: 'nist-800-53', control_id: 'PE-2' },
            { framework: 'nist-800-53', control_id: 'PE-3' },
          ],
          owner: { user_id: '5e4d3c2b-1a09-4f8e-9d7c-6b5a4f3e2d1c', username: 'facilities-lead' },
          notify_user_ids: [],
        },
      },
    ]);
    await t.drain();
    const delivery = (await deliveriesOf(t, token, tenant.id, created.id)).items[0]!;
    expect(delivery).toMatchObject({ status: 'succeeded', event_type: 'attestation.expiring' });
    expect(smtp.messages).toHaveLength(1);
    const parsed = parseMail(smtp.messages[0]!.raw);
    expect(parsed.headers).toMatchObject({
      to: 'grc@example.com',
      subject: '[ControlGraph] Attestation expires in 30 days: Physical protection (NIST SP 800-171 3.10)',
      'x-controlgraph-event': 'attestation.expiring',
    });
    expect(parsed.text).toContain('nist-800-53 PE-2, nist-800-53 PE-3');
    expect(parsed.text).toContain('facilities-lead');
  });

  it("sends a text and HTML message through the integration's own SMTP server, authenticated", async () => {
    const { delivery, finding } = await deliverOne({
      type: 'email',
      name: 'mail',
      config: {
        to: ['secops@example.com', 'cloud@example.com'],
        cc: ['ciso@example.com'],
        events: ['finding.created'],
        smtp: { host: '127.0.0.1', port: smtp.port, username: SMTP_USER, password: SMTP_PASSWORD, from: 'controlgraph@example.com' },
      },
    });
    expect(delivery).toMatchObject({ status: 'succeeded', last_status_code: 250, attempt_count: 1 });
    expect(delivery.attempts[0].response_body).toMatch(/^250 /);
    expect(smtp.messages).toHaveLength(1);
    const [mail] = smtp.messages;
    expect(mail).toMatchObject({ from: 'controlgraph@example.com', user: SMTP_USER });
    expect(mail!.to.sort()).toEqual(['ciso@example.com', 'cloud@example.com', 'secops@example.com']);
    const parsed = parseMail(mail!.raw);
    expect(parsed.headers).toMatchObject({
      from: 'controlgraph@example.com',
      to: 'secops@example.com, cloud@example.com',
      cc: 'ciso@example.com',
      subject: `[ControlGraph] ${TITLE}`,
      'x-controlgraph-event': 'finding.created',
      'x-controlgraph-delivery': delivery.id,
    });
    expect(parsed.headers['content-type']).toMatch(/^multipart\/alternative/);
    expect(parsed.text).toContain(TITLE);
    expect(parsed.text).toContain('Versioning protects objects against accidental deletion.');
    expect(parsed.text).toContain(`Resource: ${finding.resource_name} (${finding.resource_id})`);
    expect(parsed.text).toContain(`ControlGraph event ${delivery.event_id} (finding.created)`);
    expect(parsed.html).toContain(`<h2>${TITLE}</h2>`);
    expect(parsed.html).toContain('<tr><th align="left">Severity</th><td>HIGH</td></tr>');
  });

  it('a recipient refused by the server (550) and wrong credentials (535) are failed attempts with the reply code', async () => {
    smtp.rejectRecipients.add('gone@example.com');
    const server = { host: '127.0.0.1', port: smtp.port, username: SMTP_USER, from: 'controlgraph@example.com' };
    const refused = await createIntegration(t, token, tenant.id, {
      type: 'email',
      name: 'refused',
      config: { to: ['gone@example.com'], events: ['finding.created'], smtp: { ...server, password: SMTP_PASSWORD } },
    });
    const badLogin = await createIntegration(t, token, tenant.id, {
      type: 'email',
      name: 'bad login',
      config: { to: ['secops@example.com'], events: ['finding.created'], smtp: { ...server, password: 'wrong-password' } },
    });
    await emit(t, [findingCreated(tenant.id, tenant.defaultWorkspaceId, FINDING)]);
    await t.drain();
    const first = async (id: string) => (await deliveriesOf(t, token, tenant.id, id)).items[0]!;
    const rejected = await first(refused.id);
    expect(rejected).toMatchObject({ status: 'pending', attempt_count: 1, last_status_code: 550 });
    expect(rejected.attempts[0].response_body).toContain('Mailbox unavailable: gone@example.com');
    const denied = await first(badLogin.id);
    expect(denied).toMatchObject({ status: 'pending', attempt_count: 1, last_status_code: 535 });
    expect(denied.last_error).toContain('Invalid login');
    expect(smtp.messages).toEqual([]);
    // The next attempt follows the same schedule as webhooks: 30 s later, the recipient is accepted.
    smtp.rejectRecipients.clear();
    t.clock.advance(30 * S);
    await t.drain();
    expect(await first(refused.id)).toMatchObject({ status: 'succeeded', attempt_count: 2, last_status_code: 250 });
    expect(await first(badLogin.id)).toMatchObject({ status: 'pending', attempt_count: 2, last_status_code: 535 });
    expect(smtp.messages.map((m) => m.to)).toEqual([['gone@example.com']]);
  });

  it('an SMTP server that does not answer reads the same whether its port is closed, not SMTP or silent (no port state)', async () => {
    const closed = await tcpListener(null);
    const closedPort = closed.port;
    await closed.close();
    const http = await tcpListener('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n');
    const silent = await tcpListener('');
    try {
      const created = [];
      for (const port of [closedPort, http.port, silent.port]) {
        created.push(
          await createIntegration(t, token, tenant.id, {
            type: 'email',
            name: `port ${port}`,
            config: { to: ['secops@example.com'], events: ['finding.created'], timeout_seconds: 1, smtp: { host: '127.0.0.1', port, from: 'controlgraph@example.com' } },
          }),
        );
      }
      await emit(t, [findingCreated(tenant.id, tenant.defaultWorkspaceId, FINDING)]);
      await t.drain();
      for (const integration of created) {
        const delivery = (await deliveriesOf(t, token, tenant.id, integration.id)).items[0]!;
        expect(delivery, integration.name).toMatchObject({ status: 'pending', attempt_count: 1, last_status_code: null, last_error: 'no SMTP response within 1 s' });
      }
    } finally {
      await http.close();
      await silent.close();
    }
  });

  it('an e-mail alert rule (url mailto:) goes through the service SMTP server (CONTROLGRAPH_SMTP_URL, CONTROLGRAPH_SMTP_FROM)', async () => {
    const rule = (
      await call(t.app, token, {
        method: 'POST',
        url: `/api/v1/tenants/${tenant.id}/alerts/rules`,
        payload: { name: 'mail me', channel: 'email', url: 'mailto:owner@example.com,deputy@example.com', events: ['finding.created'] },
        expect: 201,
      })
    ).json();
    expect(rule).toMatchObject({ channel: 'email', url: 'mailto:owner@example.com,deputy@example.com', status: 'active' });
    await emit(t, [findingCreated(tenant.id, tenant.defaultWorkspaceId, FINDING)]);
    await t.drain();
    expect(smtp.messages).toHaveLength(1);
    expect(smtp.messages[0]).toMatchObject({ from: 'alerts@controlgraph.test', to: ['owner@example.com', 'deputy@example.com'], user: SMTP_USER });
    expect(parseMail(smtp.messages[0]!.raw).headers.subject).toBe(`[ControlGraph] ${TITLE}`);
    const [delivery] = (await deliveriesOf(t, token, tenant.id, rule.id)).items;
    expect(delivery).toMatchObject({ status: 'succeeded', last_status_code: 250 });
  });
});

describe('alert rules on chat channels', () => {
  it('a slack rule delivers through the Slack formatter', async () => {
    const rule = (
      await call(t.app, token, {
        method: 'POST',
        url: `/api/v1/tenants/${tenant.id}/alerts/rules`,
        payload: { name: 'chat', channel: 'slack', url: `${api.url}/slack/services/T1/B1/RULE`, events: ['finding.created'], filters: { severity: ['HIGH'] } },
        expect: 201,
      })
    ).json();
    await emit(t, [findingCreated(tenant.id, tenant.defaultWorkspaceId, FINDING), findingCreated(tenant.id, tenant.defaultWorkspaceId, { ...FINDING, severity: 'LOW' })]);
    await t.drain();
    expect(api.requests.map((r) => r.url)).toEqual(['/slack/services/T1/B1/RULE']);
    expect(JSON.parse(api.requests[0]!.body).text).toBe(TITLE);
    expect((await deliveriesOf(t, token, tenant.id, rule.id)).total).toBe(1);
  });
});
