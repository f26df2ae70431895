import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../harness/app.js';
import { buildTenant, call, type TenantFixture } from '../harness/identity.js';
import { SecretBox } from '../../src/platform/crypto/secret-box.js';
import { createDeliveryApp, createIntegration } from './helpers.js';

let t: TestApp;
let tenant: TenantFixture;
let other: TenantFixture;
let admin: string;
const url = (path = '') => `/api/v1/tenants/${tenant.id}/integrations${path}`;
const rulesUrl = (path = '') => `/api/v1/tenants/${tenant.id}/alerts/rules${path}`;
const webhook = (overrides: Record<string, unknown> = {}) => ({
  type: 'webhook',
  name: 'SIEM',
  config: {
    url: 'https://siem.example.com/hooks/controlgraph',
    secret: 'whsec_c2VjcmV0LWZvci10ZXN0cy0xMjM0NTY3OA==',
    events: ['finding.created', 'finding.resolved'],
    ...overrides,
  },
});

beforeAll(async () => {
  t = await createDeliveryApp();
  tenant = await buildTenant(t);
  other = await buildTenant(t);
  admin = tenant.admin.token;
});
afterAll(() => t.close());

describe('POST /integrations', () => {
  it('201 with id, type, name, status active, config (the secret only in this response) and created_at', async () => {
    const body = webhook({ filters: { severity: ['CRITICAL', 'high'], frameworks: ['cis-aws'] }, headers: { 'X-Api-Key': 'k-123' }, timeout_seconds: 10 });
    const res = await call(t.app, admin, { method: 'POST', url: url(), payload: body, expect: 201 });
    const created = res.json();
    expect(created).toMatchObject({
      type: 'webhook',
      name: 'SIEM',
      status: 'active',
      source: 'integration',
      disabled_reason: null,
      config: {
        url: 'https://siem.example.com/hooks/controlgraph',
        secret: body.config.secret,
        events: ['finding.created', 'finding.resolved'],
        filters: { severity: ['CRITICAL', 'HIGH'], frameworks: ['cis-aws'] },
        headers: { 'X-Api-Key': 'k-123' },
        timeout_seconds: 10,
      },
    });
    expect(created.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Date(created.created_at).toISOString()).toBe(t.clock.now().toISOString());

    const read = (await call(t.app, admin, { url: url(`/${created.id}`), expect: 200 })).json();
    expect(read.config.secret).toBeUndefined();
    expect(read.config).toEqual({
      url: 'https://siem.example.com/hooks/controlgraph',
      events: ['finding.created', 'finding.resolved'],
      filters: { severity: ['CRITICAL', 'HIGH'], frameworks: ['cis-aws'] },
      headers: { 'X-Api-Key': '********' },
      timeout_seconds: 10,
    });
    expect(JSON.stringify(read)).not.toContain('k-123');
  });

  it('defaults timeout_seconds to 30 and accepts every integration type through the same endpoint', async () => {
    const bodies = [
      webhook(),
      { type: 'slack', name: 'chat', config: { url: 'https://hooks.slack.com/services/T000/B000/XXXX', events: ['finding.created'] } },
      { type: 'teams', name: 'team chat', config: { url: 'https://example.webhook.office.com/webhookb2/abc', events: ['finding.created'], format: 'message_card' } },
      {
        type: 'jira',
        name: 'tickets',
        config: { base_url: 'https://example.atlassian.net', project_key: 'SEC', email: 'bot@example.com', api_token: 'jira-token', events: ['finding.created'] },
      },
      { type: 'github', name: 'issues', config: { repository: 'acme/infra', token: 'ghp_token', events: ['finding.created'] } },
      { type: 'pagerduty', name: 'on-call', config: { routing_key: 'R0UTINGKEY', events: ['finding.created', 'finding.resolved'], filters: { severity: ['CRITICAL'] } } },
      {
        type: 'email',
        name: 'mail',
        config: {
          to: ['secops@example.com'],
          events: ['finding.created'],
          smtp: { host: 'smtp.example.com', port: 587, username: 'u', password: 'smtp-pw', from: 'controlgraph@example.com' },
        },
      },
    ];
    for (const body of bodies) {
      const created = await createIntegration(t, admin, tenant.id, body);
      expect(created).toMatchObject({ type: body.type, status: 'active' });
      expect(created.config.timeout_seconds).toBe(30);
    }
    const list = (await call(t.app, admin, { url: url('?per_page=100'), expect: 200 })).json();
    const types = new Set(list.items.map((i: { type: string }) => i.type));
    expect([...types].sort()).toEqual(['email', 'github', 'jira', 'pagerduty', 'slack', 'teams', 'webhook']);
    const text = JSON.stringify(list);
    for (const secret of ['jira-token', 'ghp_token', 'R0UTINGKEY', 'smtp-pw', 'XXXX', 'webhookb2/abc']) expect(text).not.toContain(secret);
    const slack = list.items.find((i: { type: string }) => i.type === 'slack');
    expect(slack.config.url).toBe('https://hooks.slack.com/…');
    expect(list.items.find((i: { type: string }) => i.type === 'jira').config).toMatchObject({ api_version: 3, issue_type: 'Task', labels: ['controlgraph'] });
    expect(list.items.find((i: { type: string }) => i.type === 'github').config).toMatchObject({ api_url: 'https://api.github.com' });
    expect(list.items.find((i: { type: string }) => i.type === 'pagerduty').config).toMatchObject({ events_url: 'https://events.pagerduty.com/v2/enqueue' });
    expect(list).toMatchObject({ page: 1, per_page: 100 });
    expect(list.total).toBe(list.items.length);
    const typed = (await call(t.app, admin, { url: url('?type=jira'), expect: 200 })).json();
    expect(typed.items.map((i: { type: string }) => i.type)).toEqual(['jira']);
  });

  it('400 naming the problem', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...webhook(), type: 'fax' }, 'type must be one of webhook, email, slack, teams, jira, github, pagerduty'],
      [{ ...webhook(), name: '  ' }, 'name is required'],
      [webhook({ url: undefined }), 'config.url is required'],
      [webhook({ secret: undefined }), 'config.secret is required'],
      [webhook({ events: undefined }), 'config.events is required'],
      [webhook({ events: ['finding.exploded'] }), 'config.events[0]: unknown event type "finding.exploded"'],
      [webhook({ url: 'http://siem.example.com/hook' }), 'config.url: only https:// URLs are allowed'],
      [webhook({ url: 'https://10.0.0.5/hook' }), 'config.url: the address is not allowed (10.0.0.5 is a private address)'],
      [webhook({ workspaces: [other.defaultWorkspaceId] }), `config.workspaces: ${other.defaultWorkspaceId} is not a workspace of this tenant`],
      [webhook({ extra: true }), 'config.extra is not a known field'],
      [{ type: 'email', name: 'mail', config: { to: ['a@example.com'], events: ['finding.created'] } }, 'config.smtp is required: no default SMTP server is configured'],
    ];
    for (const [body, message] of cases) {
      const res = await call(t.app, admin, { method: 'POST', url: url(), payload: body });
      expect(res.statusCode, message).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'BAD_REQUEST' });
      expect(res.json().error.message).toContain(message);
    }
    const unknownTop = await call(t.app, admin, { method: 'POST', url: url(), payload: { ...webhook(), colour: 'red' } });
    expect(unknownTop.statusCode).toBe(400);
  });

  it('SSRF guard at creation: loopback, private, link-local, a name resolving to loopback, plain http (400, nothing stored)', async () => {
    const cases: Array<[string, string | RegExp]> = [
      ['https://127.0.0.2/hook', 'config.url: the address is not allowed (127.0.0.2 is a loopback address)'],
      ['https://[::1]/hook', 'config.url: the address is not allowed (::1 is a loopback address)'],
      ['https://[::ffff:127.0.0.2]/hook', 'config.url: the address is not allowed (::ffff:7f00:2 is an IPv4-mapped loopback address)'],
      ['https://0.0.0.0/hook', 'config.url: the address is not allowed (0.0.0.0 is an unspecified ("this network") address)'],
      ['https://10.1.2.3/hook', 'config.url: the address is not allowed (10.1.2.3 is a private address)'],
      ['https://192.168.0.10/hook', 'config.url: the address is not allowed (192.168.0.10 is a private address)'],
      ['https://169.254.169.254/latest/meta-data/', 'config.url: the address is not allowed (169.254.169.254 is a link-local address)'],
      ['https://localhost/hook', 'config.url: the address is not allowed (localhost resolves to a loopback address)'],
      ['http://hooks.example.com/hook', 'config.url: only https:// URLs are allowed (http:// only to hosts the operator allow-lists)'],
      ['ftp://hooks.example.com/hook', 'config.url must be an https:// URL'],
      ['https://user:pw@hooks.example.com/hook', 'config.url must not carry credentials'],
      ['not a url', 'config.url must be an absolute URL'],
    ];
    const before = (await call(t.app, admin, { url: url('?per_page=500'), expect: 200 })).json().total;
    for (const [target, message] of cases) {
      const res = await call(t.app, admin, { method: 'POST', url: url(), payload: webhook({ url: target }) });
      expect(res.statusCode, target).toBe(400);
      expect(res.json().error.code).toBe('BAD_REQUEST');
      if (typeof message === 'string') expect(res.json().error.message, target).toBe(message);
      else expect(res.json().error.message, target).toMatch(message);
    }
    // The other types' targets pass the same guard; so does an alert rule's url and a PUT.
    const jira = await call(t.app, admin, {
      method: 'POST',
      url: url(),
      payload: { type: 'jira', name: 'j', config: { base_url: 'https://10.0.0.9', project_key: 'SEC', api_token: 'x', events: ['finding.created'] } },
    });
    expect(jira.json().error.message).toBe('config.base_url: the address is not allowed (10.0.0.9 is a private address)');
    const smtp = await call(t.app, admin, {
      method: 'POST',
      url: url(),
      payload: { type: 'email', name: 'm', config: { to: ['a@example.com'], events: ['finding.created'], smtp: { host: 'localhost', from: 'cg@example.com' } } },
    });
    expect(smtp.json().error.message).toMatch(/^config\.smtp\.host: the address is not allowed \(localhost resolves to a loopback address\)$/);
    const rule = await call(t.app, admin, {
      method: 'POST',
      url: rulesUrl(),
      payload: { name: 'r', channel: 'slack', url: 'https://169.254.169.254/x', events: ['finding.created'] },
    });
    expect(rule.json().error.message).toBe('url: the address is not allowed (169.254.169.254 is a link-local address)');
    const created = await createIntegration(t, admin, tenant.id, webhook());
    const put = await call(t.app, admin, { method: 'PUT', url: url(`/${created.id}`), payload: { config: { url: 'https://localhost:8443/x' } } });
    expect(put.statusCode).toBe(400);
    expect((await call(t.app, admin, { url: url('?per_page=500'), expect: 200 })).json().total).toBe(before + 1);
    // The allow-listed test receiver host may use http://.
    await createIntegration(t, admin, tenant.id, webhook({ url: 'http://127.0.0.1:9/hook' }));
  });

  it('400 for bad configuration of the other types', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [
        { type: 'jira', name: 'j', config: { base_url: 'https://x.atlassian.net', project_key: 'sec', api_token: 't', events: ['finding.created'] } },
        'config.project_key must be a Jira project key (e.g. SEC)',
      ],
      [{ type: 'jira', name: 'j', config: { base_url: 'https://x.atlassian.net', project_key: 'SEC', events: ['finding.created'] } }, 'config.api_token is required'],
      [
        { type: 'jira', name: 'j', config: { base_url: 'https://x.atlassian.net', project_key: 'SEC', api_token: 't', api_version: 4, events: ['finding.created'] } },
        'config.api_version must be an integer from 2 to 3',
      ],
      [{ type: 'github', name: 'g', config: { repository: 'no-slash', token: 't', events: ['finding.created'] } }, 'config.repository must be owner/repo'],
      [{ type: 'pagerduty', name: 'p', config: { events: ['finding.created'] } }, 'config.routing_key is required'],
      [
        { type: 'teams', name: 't', config: { url: 'https://example.webhook.office.com/x', format: 'card', events: ['finding.created'] } },
        'config.format must be one of adaptive_card, message_card',
      ],
      [
        { type: 'email', name: 'm', config: { to: ['not-an-address'], events: ['finding.created'], smtp: { host: 'smtp.example.com', from: 'a@example.com' } } },
        'config.to[0] must be an e-mail address',
      ],
      [
        { type: 'email', name: 'm', config: { to: ['a@example.com'], events: ['finding.created'], smtp: { host: 'smtp.example.com', port: 70000, from: 'a@example.com' } } },
        'config.smtp.port must be an integer from 1 to 65535',
      ],
      [webhook({ timeout_seconds: 0 }), 'config.timeout_seconds must be an integer from 1 to 120'],
      [webhook({ filters: { severity: ['URGENT'] } }), 'config.filters.severity[0] must be one of CRITICAL, HIGH, MEDIUM, LOW, INFO'],
      [webhook({ filters: { colour: ['red'] } }), 'config.filters.colour is not a known field'],
      [webhook({ headers: { 'X-ControlGraph-Signature': 'forged' } }), 'config.headers: X-ControlGraph-Signature is set by the service and cannot be configured'],
      [webhook({ headers: { 'X-Bad': 'line\nbreak' } }), 'config.headers.X-Bad must be a string without line breaks'],
      [webhook({ events: [] }), 'config.events must not be empty'],
      [{ type: 'webhook', name: 'w', config: 'https://x' }, 'invalid body: /config must be object'],
    ];
    for (const [body, message] of cases) {
      const res = await call(t.app, admin, { method: 'POST', url: url(), payload: body });
      expect(res.statusCode, message).toBe(400);
      expect(res.json().error.message).toBe(message);
    }
    const long = await call(t.app, admin, { method: 'POST', url: url(), payload: { ...webhook(), name: 'n'.repeat(201) } });
    expect(long.statusCode).toBe(400);
    const notFoundPut = await call(t.app, admin, { method: 'PUT', url: url(`/${crypto.randomUUID()}`), payload: { name: 'x' } });
    expect(notFoundPut.statusCode).toBe(404);
    expect(notFoundPut.json().error.message).toBe('integration not found');
    await call(t.app, admin, { url: url('/not-a-uuid'), expect: 400 });
    await call(t.app, admin, { url: url('?per_page=501'), expect: 400 });
  });

  it('stores secrets sealed with AES-256-GCM, never in plain text, and never in the audit log', async () => {
    const created = await createIntegration(t, admin, tenant.id, webhook({ secret: 'plain-secret-value-4711', headers: { Authorization: 'Bearer header-token-0815' } }));
    const row = await t.deps.database.db.selectFrom('integrations').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    expect(row.secrets).toMatch(/^v1\./);
    expect(JSON.stringify(row)).not.toContain('plain-secret-value-4711');
    expect(JSON.stringify(row)).not.toContain('header-token-0815');
    const box = new SecretBox(await t.deps.tokenKey());
    expect(box.open(row.secrets, row.id)).toEqual({ secret: 'plain-secret-value-4711', headers: { Authorization: 'Bearer header-token-0815' } });
    const audit = (await call(t.app, admin, { url: `/api/v1/tenants/${tenant.id}/audit-logs?per_page=500`, expect: 200 })).json();
    const entry = audit.items.find((e: { target_id: string; action: string }) => e.target_id === created.id && e.action === 'integration.created');
    expect(entry).toMatchObject({ details: { name: 'SIEM', type: 'webhook', secret_fields: ['secret', 'headers'] } });
    expect(JSON.stringify(audit)).not.toContain('plain-secret-value-4711');
    expect(JSON.stringify(audit)).not.toContain('header-token-0815');
  });
});

describe('GET, PUT, DELETE /integrations/{id}', () => {
  it('PUT with a whole smtp object keeps the stored SMTP password it leaves out; null removes it', async () => {
    const created = await createIntegration(t, admin, tenant.id, {
      type: 'email',
      name: 'mail',
      config: { to: ['sec@example.com'], events: ['finding.created'], smtp: { host: 'smtp.example.com', username: 'cg', password: 'smtp-pw-1', from: 'cg@example.com' } },
    });
    const secretsOf = async () => {
      const row = await t.deps.database.db.selectFrom('integrations').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
      return new SecretBox(await t.deps.tokenKey()).open(row.secrets, row.id);
    };
    const res = await call(t.app, admin, {
      method: 'PUT',
      url: url(`/${created.id}`),
      payload: { config: { smtp: { host: 'mail.example.com', port: 465, secure: true, username: 'cg', from: 'cg@example.com' } } },
      expect: 200,
    });
    expect(res.json().config.smtp).toEqual({ host: 'mail.example.com', port: 465, secure: true, username: 'cg', from: 'cg@example.com' });
    expect(await secretsOf()).toEqual({ 'smtp.password': 'smtp-pw-1' });
    await call(t.app, admin, {
      method: 'PUT',
      url: url(`/${created.id}`),
      payload: { config: { smtp: { host: 'mail.example.com', from: 'cg@example.com', password: null } } },
      expect: 200,
    });
    expect(await secretsOf()).toEqual({});
  });

  it('PUT changes name and config fields, keeps the secret, and is audit-logged', async () => {
    const created = await createIntegration(t, admin, tenant.id, webhook());
    const res = await call(t.app, admin, {
      method: 'PUT',
      url: url(`/${created.id}`),
      payload: { name: 'SIEM (eu)', config: { url: 'https://eu.siem.example.com/hook', filters: { resource_types: ['aws.s3.bucket'] } } },
      expect: 200,
    });
    expect(res.json()).toMatchObject({
      name: 'SIEM (eu)',
      status: 'active',
      config: { url: 'https://eu.siem.example.com/hook', events: ['finding.created', 'finding.resolved'], filters: { resource_types: ['aws.s3.bucket'] } },
    });
    expect(res.json().config.secret).toBeUndefined();
    const row = await t.deps.database.db.selectFrom('integrations').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    expect(new SecretBox(await t.deps.tokenKey()).open(row.secrets, row.id)).toEqual({ secret: webhook().config.secret });
    // A new secret replaces the old one; null removes an optional field.
    await call(t.app, admin, { method: 'PUT', url: url(`/${created.id}`), payload: { config: { secret: 'rotated-secret', filters: null } }, expect: 200 });
    const after = await t.deps.database.db.selectFrom('integrations').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    expect(new SecretBox(await t.deps.tokenKey()).open(after.secrets, after.id)).toEqual({ secret: 'rotated-secret' });
    expect(after.config.filters).toBeUndefined();

    const bad = await call(t.app, admin, { method: 'PUT', url: url(`/${created.id}`), payload: { type: 'slack' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.message).toBe('type cannot be changed: create a new integration');
    const refused = await call(t.app, admin, { method: 'PUT', url: url(`/${created.id}`), payload: { config: { url: 'https://169.254.169.254/latest' } } });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error.message).toContain('link-local');

    const audit = (await call(t.app, admin, { url: `/api/v1/tenants/${tenant.id}/audit-logs?per_page=500`, expect: 200 })).json();
    const updates = audit.items.filter((e: { target_id: string; action: string }) => e.target_id === created.id && e.action === 'integration.updated');
    expect(updates).toHaveLength(2);
    expect(updates.map((u: { details: { config_fields: string[] } }) => u.details.config_fields)).toContainEqual(['filters', 'secret']);
    expect(JSON.stringify(audit)).not.toContain('rotated-secret');
  });

  it('PUT status disabled and active: disabling and re-enabling are audit-logged with their reason', async () => {
    const created = await createIntegration(t, admin, tenant.id, webhook());
    const disabled = (await call(t.app, admin, { method: 'PUT', url: url(`/${created.id}`), payload: { status: 'disabled' }, expect: 200 })).json();
    expect(disabled).toMatchObject({ status: 'disabled', disabled_reason: `disabled by ${tenant.admin.username}` });
    expect(disabled.disabled_at).not.toBeNull();
    const enabled = (await call(t.app, admin, { method: 'PUT', url: url(`/${created.id}`), payload: { status: 'active' }, expect: 200 })).json();
    expect(enabled).toMatchObject({ status: 'active', disabled_reason: null, disabled_at: null });
    const audit = (await call(t.app, admin, { url: `/api/v1/tenants/${tenant.id}/audit-logs?per_page=500`, expect: 200 })).json();
    const actions = audit.items.filter((e: { target_id: string }) => e.target_id === created.id).map((e: { action: string }) => e.action);
    expect(actions).toEqual(expect.arrayContaining(['integration.created', 'integration.disabled', 'integration.enabled']));
  });

  it('DELETE 204, then 404; audit-logged', async () => {
    const created = await createIntegration(t, admin, tenant.id, webhook());
    await call(t.app, admin, { method: 'DELETE', url: url(`/${created.id}`), expect: 204 });
    await call(t.app, admin, { url: url(`/${created.id}`), expect: 404 });
    await call(t.app, admin, { method: 'DELETE', url: url(`/${created.id}`), expect: 404 });
    const audit = (await call(t.app, admin, { url: `/api/v1/tenants/${tenant.id}/audit-logs?per_page=500`, expect: 200 })).json();
    expect(audit.items.some((e: { target_id: string; action: string }) => e.target_id === created.id && e.action === 'integration.deleted')).toBe(true);
  });

  it('read needs tenant:read, write tenant:update; another tenant sees 404 (own path) or 403 (foreign path)', async () => {
    const created = await createIntegration(t, admin, tenant.id, webhook());
    const readOnly = tenant.users['read-only'].token;
    await call(t.app, readOnly, { url: url(), expect: 200 });
    await call(t.app, readOnly, { url: url(`/${created.id}`), expect: 200 });
    await call(t.app, readOnly, { url: url(`/${created.id}/deliveries`), expect: 200 });
    const analyst = tenant.users['security-analyst'].token;
    for (const [method, path, payload] of [
      ['POST', '', webhook()],
      ['PUT', `/${created.id}`, { name: 'x' }],
      ['DELETE', `/${created.id}`, undefined],
    ] as const) {
      const res = await call(t.app, analyst, { method, url: url(path), ...(payload ? { payload } : {}) });
      expect(res.statusCode).toBe(403);
      expect(res.json().error.message).toBe('missing permission tenant:update');
    }
    await call(t.app, null, { url: url(), expect: 401 });
    // The other tenant's admin: its own tenant path does not show this integration; this tenant's path is refused.
    await call(t.app, other.admin.token, { url: `/api/v1/tenants/${other.id}/integrations/${created.id}`, expect: 404 });
    await call(t.app, other.admin.token, { method: 'PUT', url: `/api/v1/tenants/${other.id}/integrations/${created.id}`, payload: { name: 'x' }, expect: 404 });
    await call(t.app, other.admin.token, { method: 'DELETE', url: `/api/v1/tenants/${other.id}/integrations/${created.id}`, expect: 404 });
    await call(t.app, other.admin.token, { url: `/api/v1/tenants/${other.id}/integrations/${created.id}/deliveries`, expect: 404 });
    await call(t.app, other.admin.token, { url: url(`/${created.id}`), expect: 403 });
    const list = (await call(t.app, other.admin.token, { url: `/api/v1/tenants/${other.id}/integrations`, expect: 200 })).json();
    expect(list.items).toEqual([]);
  });
});

describe('/alerts/rules', () => {
  it('a webhook rule is a webhook integration created through the simpler body', async () => {
    const body = { name: 'critical findings', channel: 'webhook', url: 'https://alerts.example.com/cg', events: ['finding.created', 'job.completed'], secret: 'rule-secret' };
    const res = await call(t.app, admin, { method: 'POST', url: rulesUrl(), payload: body, expect: 201 });
    const rule = res.json();
    expect(rule).toMatchObject({
      name: 'critical findings',
      channel: 'webhook',
      url: 'https://alerts.example.com/cg',
      events: ['finding.created', 'job.completed'],
      status: 'active',
      secret: 'rule-secret',
      integration_id: rule.id,
    });
    const integration = (await call(t.app, admin, { url: url(`/${rule.id}`), expect: 200 })).json();
    expect(integration).toMatchObject({ type: 'webhook', source: 'alert_rule', name: 'critical findings', config: { url: body.url, events: body.events } });
    const got = (await call(t.app, admin, { url: rulesUrl(`/${rule.id}`), expect: 200 })).json();
    expect(got.secret).toBeUndefined();
    const list = (await call(t.app, tenant.users['read-only'].token, { url: rulesUrl(), expect: 200 })).json();
    expect(list.items.map((r: { id: string }) => r.id)).toContain(rule.id);
    expect(list.items.every((r: { channel: string }) => ['webhook', 'slack', 'teams', 'email'].includes(r.channel))).toBe(true);
    await call(t.app, admin, { method: 'DELETE', url: rulesUrl(`/${rule.id}`), expect: 204 });
    await call(t.app, admin, { url: url(`/${rule.id}`), expect: 404 });
    await call(t.app, admin, { url: rulesUrl(`/${rule.id}`), expect: 404 });
  });

  it('slack rules keep their URL secret; an integration that is not a rule is not a rule', async () => {
    const rule = (
      await call(t.app, admin, {
        method: 'POST',
        url: rulesUrl(),
        payload: { name: 'chat', channel: 'slack', url: 'https://hooks.slack.com/services/T1/B1/SECRETPART', events: ['finding.created'] },
        expect: 201,
      })
    ).json();
    expect(rule.url).toBe('https://hooks.slack.com/services/T1/B1/SECRETPART');
    const got = (await call(t.app, admin, { url: rulesUrl(`/${rule.id}`), expect: 200 })).json();
    expect(got.url).toBe('https://hooks.slack.com/…');
    const plain = await createIntegration(t, admin, tenant.id, webhook());
    await call(t.app, admin, { url: rulesUrl(`/${plain.id}`), expect: 404 });
    await call(t.app, admin, { method: 'DELETE', url: rulesUrl(`/${plain.id}`), expect: 404 });
    await call(t.app, admin, { url: url(`/${plain.id}`), expect: 200 });
  });

  it('400 for an unknown channel, a missing secret, a bad URL or event; 403 without tenant:update', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ name: 'x', channel: 'pager', url: 'https://a.example.com', events: ['finding.created'] }, 'channel must be one of webhook, slack, teams, email'],
      [{ name: 'x', channel: 'webhook', url: 'https://a.example.com', events: ['finding.created'] }, 'secret is required for the webhook channel'],
      [{ name: 'x', channel: 'webhook', url: 'http://a.example.com', events: ['finding.created'], secret: 's' }, 'url: only https:// URLs are allowed'],
      [{ name: 'x', channel: 'webhook', url: 'https://a.example.com', events: ['nope'], secret: 's' }, 'events[0]: unknown event type "nope"'],
      [{ name: 'x', channel: 'email', url: 'secops@example.com', events: ['finding.created'] }, 'url of the email channel must be mailto:'],
      [{ name: 'x', channel: 'email', url: 'mailto:secops@example.com', events: ['finding.created'], secret: 's' }, 'secret is not used by the email channel'],
      [
        { name: 'x', channel: 'slack', url: 'https://hooks.slack.com/x', events: ['finding.created'], secret: 's' },
        'secret is not used by the slack channel (its URL is the secret)',
      ],
      [{ channel: 'webhook', url: 'https://a.example.com', events: ['finding.created'], secret: 's' }, "must have required property 'name'"],
    ];
    for (const [payload, message] of cases) {
      const res = await call(t.app, admin, { method: 'POST', url: rulesUrl(), payload });
      expect(res.statusCode, message).toBe(400);
      expect(res.json().error.message).toContain(message);
    }
    const res = await call(t.app, tenant.users.auditor.token, {
      method: 'POST',
      url: rulesUrl(),
      payload: { name: 'x', channel: 'slack', url: 'https://hooks.slack.com/x', events: ['finding.created'] },
    });
    expect(res.statusCode).toBe(403);
  });
});
