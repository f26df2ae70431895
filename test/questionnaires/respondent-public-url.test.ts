import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call } from '../harness/identity.js';
import { loadConfig } from '../../src/config.js';
import { api, assign, fromTemplate, publish } from './helpers.js';

/**
 * The address in an outside respondent's link is the configured public URL (CONTROLGRAPH_PUBLIC_URL),
 * never the request's Host header: a forged Host would otherwise send a supplier (and the link's
 * token) to another site. Without it the service mails no links and returns the token alone.
 */
async function linkFixture(t: TestApp) {
  const tenant = await buildTenant(t);
  const q = await fromTemplate(t, tenant.admin.token, tenant.id, { template_id: 'fedramp-at' });
  await publish(t, tenant.admin.token, tenant.id, q.id);
  const [a] = await assign(t, tenant.admin.token, tenant.id, q.id, { assignees: [tenant.users['read-only'].user_id] });
  return {
    tenant,
    create: (payload: Record<string, unknown>, headers: Record<string, string> = {}) =>
      call(t.app, tenant.users['security-analyst'].token, { method: 'POST', url: `${api(tenant.id)}/assessments/${a!.id}/links`, payload, headers, expect: 201 }),
  };
}

describe('with CONTROLGRAPH_PUBLIC_URL', () => {
  let t: TestApp;
  let create: Awaited<ReturnType<typeof linkFixture>>['create'];
  beforeAll(async () => {
    t = await createTestApp({ env: { CONTROLGRAPH_PUBLIC_URL: 'https://grc.example.com/console/' } });
    ({ create } = await linkFixture(t));
  });
  afterAll(() => t.close());

  it('the link is on the public URL (its path kept, the trailing slash dropped) whatever Host and X-Forwarded-* say', async () => {
    for (const headers of [
      {} as Record<string, string>,
      { host: 'attacker.example' },
      { host: 'attacker.example:8443', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'http' },
    ]) {
      const body = (await create({ name: 'Acme' }, headers)).json();
      expect(body.url).toBe(`https://grc.example.com/console/respond#${body.token}`);
    }
  });
});

describe('without CONTROLGRAPH_PUBLIC_URL', () => {
  let t: TestApp;
  let fixture: Awaited<ReturnType<typeof linkFixture>>;
  beforeAll(async () => {
    t = await createTestApp();
    fixture = await linkFixture(t);
  });
  afterAll(() => t.close());

  it('the token is returned once, the url is null (never built from Host); a recipient is not mailed and email_error says why', async () => {
    const copy = (await fixture.create({ name: 'Acme' }, { host: 'attacker.example' })).json();
    expect(copy).toMatchObject({ delivery: 'copy', url: null, email_error: null });
    expect(copy.token).toMatch(/^cgr_/);
    const mail = (await fixture.create({ name: 'Acme', recipient_email: 'security@acme.example' })).json();
    expect(mail).toMatchObject({ delivery: 'copy', url: null, email_error: 'CONTROLGRAPH_PUBLIC_URL is not set: the service mails no links without its public address' });
    expect(mail.token).toMatch(/^cgr_/);
    // The token alone opens the respondent view.
    expect((await call(t.app, mail.token, { url: '/api/v1/respond/assessment' })).statusCode).toBe(200);
  });
});

describe('CONTROLGRAPH_PUBLIC_URL is checked at start', () => {
  it('accepts http(s) URLs and refuses anything else with a clear message', () => {
    expect(loadConfig({ CONTROLGRAPH_PUBLIC_URL: 'https://grc.example.com' }).publicUrl).toBe('https://grc.example.com');
    expect(loadConfig({ CONTROLGRAPH_PUBLIC_URL: 'http://localhost:8080/' }).publicUrl).toBe('http://localhost:8080');
    expect(loadConfig({}).publicUrl).toBeNull();
    expect(() => loadConfig({ CONTROLGRAPH_PUBLIC_URL: 'grc.example.com' })).toThrow(/CONTROLGRAPH_PUBLIC_URL: "grc.example.com" is not an absolute URL/);
    expect(() => loadConfig({ CONTROLGRAPH_PUBLIC_URL: 'ftp://grc.example.com' })).toThrow(/must be an http:\/\/ or https:\/\/ URL/);
    expect(() => loadConfig({ CONTROLGRAPH_PUBLIC_URL: 'https://grc.example.com/?a=1' })).toThrow(/no query, fragment or credentials/);
  });
});
