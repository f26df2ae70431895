import { inflateRawSync } from 'node:zlib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, type TenantFixture } from '../harness/identity.js';
import {
  acsForm,
  buildResponse,
  IDP_ENTITY_ID,
  IDP_SLO_URL,
  IDP_SSO_URL,
  idpMetadata,
  logoutRequestQuery,
  makeKeyPair,
  serveDocument,
  type ResponseOptions,
  type TestKeyPair,
} from './saml-idp.js';

/**
 * SAML login: responses are made and signed in the test with a throw-away IdP key (openssl at test
 * time, xml-crypto to sign), posted to the ACS as a browser would, and each kind of bad response is
 * refused with its own 401 message.
 */
let t: TestApp;
let tenant: TenantFixture;
let idp: TestKeyPair;
let otherKey: TestKeyPair;
let metadataServer: Awaited<ReturnType<typeof serveDocument>>;
const SERVICE = 'https://cg.test.example';
let acs: string;
let spEntityId: string;
let slo: string;

const acsPath = () => `/api/v1/auth/saml/${tenant.slug}/acs`;

async function post(xml: string, remoteAddress = '127.0.0.1') {
  return t.app.inject({
    method: 'POST',
    url: acsPath(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: acsForm(xml),
    remoteAddress,
  });
}

function response(overrides: Partial<ResponseOptions> = {}): string {
  return buildResponse(idp, { now: t.clock.now(), acs, audience: spEntityId, nameId: 'saml-user-1', ...overrides });
}

async function configure(body: Record<string, unknown>) {
  return call(t.app, tenant.admin.token, { method: 'PUT', url: `/api/v1/tenants/${tenant.id}/sso`, payload: { provider: 'saml', service_url: SERVICE, ...body } });
}

beforeAll(async () => {
  // The fake IdPs listen on loopback: allow-listed explicitly, as an operator would for a local IdP.
  t = await createTestApp({ env: { CONTROLGRAPH_OUTBOUND_ALLOW_HOSTS: '127.0.0.1' } });
  tenant = await buildTenant(t);
  idp = makeKeyPair();
  otherKey = makeKeyPair(365, '/CN=Somebody Else');
  metadataServer = await serveDocument(idpMetadata([idp]));
  acs = `${SERVICE}/api/v1/auth/saml/${tenant.slug}/acs`;
  spEntityId = `${SERVICE}/api/v1/auth/saml/${tenant.slug}/metadata`;
  slo = `${SERVICE}/api/v1/auth/saml/${tenant.slug}/slo`;
  const res = await configure({ metadata_url: metadataServer.url, default_role: 'security-analyst' });
  expect(res.statusCode, res.body).toBe(201);
  expect(res.json()).toMatchObject({ acs_url: acs, sp_entity_id: spEntityId, slo_url: slo, metadata_url: metadataServer.url });
});
afterAll(async () => {
  await metadataServer?.close();
  await t?.close();
});
beforeEach(() => {
  t.clock.set('2026-11-23T12:00:00.000Z');
});

describe('SAML assertion consumer', () => {
  it('accepts a valid signed response and signs the user in just in time', async () => {
    const res = await post(response({ nameId: 'saml-alice', email: 'alice@corp.example' }));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const tokens = res.json();
    expect(tokens).toMatchObject({ tenant_id: tenant.id, role: 'security-analyst', username: `${tenant.slug}.alice@corp.example` });
    await call(t.app, tokens.token, { method: 'GET', url: '/api/v1/auth/me', expect: 200 });
    const identity = await t.db.handle.db.selectFrom('sso_identities').selectAll().where('user_id', '=', tokens.user_id).executeTakeFirstOrThrow();
    expect(identity).toMatchObject({ protocol: 'saml', issuer: IDP_ENTITY_ID, subject: 'saml-alice', email: 'alice@corp.example' });
    const session = await t.db.handle.db.selectFrom('sso_sessions').selectAll().where('identity_id', '=', identity.id).executeTakeFirstOrThrow();
    expect(session.saml_session_index).toBe('_session1');
    // The metadata was fetched (from the loopback server) and cached.
    const config = await call(t.app, tenant.admin.token, { method: 'GET', url: `/api/v1/tenants/${tenant.id}/sso`, expect: 200 });
    expect(config.json()).toMatchObject({ idp_entity_id: IDP_ENTITY_ID, idp_sso_url: IDP_SSO_URL, idp_slo_url: IDP_SLO_URL });
    expect(config.json().idp_certificates).toHaveLength(1);

    const again = await post(response({ nameId: 'saml-alice', email: 'alice.new@corp.example' }));
    expect(again.statusCode).toBe(200);
    expect(again.json().user_id).toBe(tokens.user_id);
  });

  it('accepts a response signed as a whole (not only the assertion)', async () => {
    const res = await post(response({ nameId: 'saml-whole', sign: 'response' }));
    expect(res.statusCode, res.body).toBe(200);
  });

  const refusals: Array<[string, () => string, string | RegExp]> = [
    ['unsigned', () => response({ sign: 'none' }), /^SAML response rejected: invalid signature/],
    [
      'signed by another key',
      () => buildResponse(otherKey, { now: t.clock.now(), acs, audience: spEntityId, nameId: 'saml-user-1' }),
      /^SAML response rejected: invalid signature/,
    ],
    ['tampered after signing', () => response({ nameId: 'saml-victim' }).replace('>saml-victim<', '>saml-admin<'), /^SAML response rejected: invalid signature/],
    [
      'expired',
      () => response({ notBeforeMs: -20 * 60_000, notOnOrAfterMs: -10 * 60_000 }),
      /^SAML response rejected: the assertion has expired \(NotOnOrAfter 2026-11-23T11:50:00Z\)$/,
    ],
    [
      'not yet valid',
      () => response({ notBeforeMs: 10 * 60_000, notOnOrAfterMs: 20 * 60_000 }),
      /^SAML response rejected: the assertion is not yet valid \(NotBefore 2026-11-23T12:10:00Z\)$/,
    ],
    ['for another audience', () => response({ audience: 'https://other-sp.example/metadata' }), /^SAML response rejected: SAML assertion audience mismatch/],
    [
      'for another recipient',
      () => response({ recipient: 'https://other-sp.example/acs' }),
      /^SAML response rejected: recipient mismatch: the assertion is for https:\/\/other-sp\.example\/acs/,
    ],
    ['addressed to another destination', () => response({ destination: 'https://other-sp.example/acs' }), /^SAML response rejected: destination mismatch/],
    ['from another issuer', () => response({ issuer: 'https://evil.example/idp' }), /^SAML response rejected: unexpected issuer "https:\/\/evil\.example\/idp"/],
    ['with a transient NameID', () => response({ nameIdFormat: 'urn:oasis:names:tc:SAML:2.0:nameid-format:transient' }), /^SAML response rejected: the NameID is transient/],
    ['answering a request we never sent', () => response({ inResponseTo: '_never-sent' }), /^SAML response rejected: InResponseTo is not valid/],
  ];

  it.each(refusals)('refuses a response %s with a clear 401', async (_name, make, message) => {
    const before = await t.db.handle.db.selectFrom('sso_identities').select('id').execute();
    const res = await post(make());
    expect(res.statusCode, res.body).toBe(401);
    expect(res.json().error.code).toBe('UNAUTHORIZED');
    expect(res.json().error.message).toMatch(message);
    expect(await t.db.handle.db.selectFrom('sso_identities').select('id').execute()).toHaveLength(before.length);
  });

  it('is still valid within the 60 s clock skew, and refused beyond it', async () => {
    const xml = response({ nameId: 'saml-skew', notOnOrAfterMs: 2 * 60_000 });
    t.clock.advance(2 * 60_000 + 30_000);
    expect((await post(xml)).statusCode).toBe(200);
    const late = response({ nameId: 'saml-skew' });
    t.clock.advance(5 * 60_000 + 61_000);
    const res = await post(late);
    expect(res.statusCode).toBe(401);
    expect(res.json().error.message).toMatch(/has expired/);
  });

  it('refuses a replayed assertion (an assertion id is used once) and forgets it after expiry', async () => {
    const xml = response({ nameId: 'saml-replay' });
    expect((await post(xml)).statusCode).toBe(200);
    const replay = await post(xml);
    expect(replay.statusCode).toBe(401);
    expect(replay.json().error.message).toMatch(/^SAML response rejected: assertion _a[0-9a-f]+ was already used \(replay\)$/);
    const failures = await t.db.handle.db.selectFrom('audit_logs').select('details').where('tenant_id', '=', tenant.id).where('action', '=', 'auth.sso_login_failed').execute();
    expect(failures.some((f) => /replay/.test(String((f.details as { reason?: string }).reason)))).toBe(true);
    const id = /ID="(_a[0-9a-f]+)"/.exec(xml)![1]!;
    expect(await t.db.handle.db.selectFrom('sso_saml_assertions').select('assertion_id').where('assertion_id', '=', id).execute()).toHaveLength(1);
    t.clock.advance(10 * 60_000);
    const { sweepSso } = await import('../../src/modules/sso/sweep-job.js');
    await sweepSso(t.deps);
    expect(await t.db.handle.db.selectFrom('sso_saml_assertions').select('assertion_id').where('assertion_id', '=', id).execute()).toHaveLength(0);
  });

  it('refuses a DOCTYPE (entity declarations) and an oversized body', async () => {
    const xml = response();
    const withDoctype = `<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>${xml}`;
    const res = await post(withDoctype);
    expect(res.statusCode).toBe(401);
    expect(res.json().error.message).toBe('SAML response rejected: the SAMLResponse contains a DOCTYPE or entity declaration, which is not allowed');
    const huge = await t.app.inject({
      method: 'POST',
      url: acsPath(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `SAMLResponse=${'A'.repeat(1024 * 1024 + 10)}`,
    });
    expect(huge.statusCode).toBe(413);
    const json = await t.app.inject({ method: 'POST', url: acsPath(), payload: { SAMLResponse: Buffer.from(xml).toString('base64') } });
    expect(json.statusCode).toBe(200);
  });

  it('runs an SP-initiated login: AuthnRequest to the IdP, InResponseTo checked and used once', async () => {
    const start = await t.app.inject({ method: 'GET', url: `/api/v1/auth/saml/${tenant.slug}/login` });
    expect(start.statusCode).toBe(302);
    const location = new URL(start.headers.location as string);
    expect(`${location.origin}${location.pathname}`).toBe(IDP_SSO_URL);
    const request = inflateRawSync(Buffer.from(location.searchParams.get('SAMLRequest')!, 'base64')).toString();
    expect(request).toContain(`AssertionConsumerServiceURL="${acs}"`);
    expect(request).toContain(`>${spEntityId}</saml:Issuer>`);
    const requestId = /ID="([^"]+)"/.exec(request)![1]!;

    const xml = response({ nameId: 'saml-sp-initiated', inResponseTo: requestId });
    expect((await post(xml)).statusCode).toBe(200);
    // The same request id cannot be answered twice, even by a fresh assertion.
    const second = await post(response({ nameId: 'saml-sp-initiated', inResponseTo: requestId }));
    expect(second.statusCode).toBe(401);
    expect(second.json().error.message).toMatch(/InResponseTo is not valid/);
  });

  it('redirects to the configured app URL with the tokens in the fragment', async () => {
    expect((await configure({ metadata_url: metadataServer.url, default_role: 'security-analyst', app_redirect_url: 'https://app.example/after-login' })).statusCode).toBe(200);
    try {
      const res = await post(response({ nameId: 'saml-redirected' }));
      expect(res.statusCode).toBe(303);
      const location = new URL(res.headers.location as string);
      expect(location.search).toBe('');
      expect(new URLSearchParams(location.hash.slice(1)).get('tenant_id')).toBe(tenant.id);
    } finally {
      await configure({ metadata_url: metadataServer.url, default_role: 'security-analyst' });
    }
  });
});

describe('SAML login landing in the web console (RelayState console)', () => {
  const postWithRelayState = (xml: string, relayState: string) =>
    t.app.inject({ method: 'POST', url: acsPath(), headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: acsForm(xml, relayState) });

  it('a login started with ?to=console carries the RelayState console to the IdP', async () => {
    const start = await t.app.inject({ method: 'GET', url: `/api/v1/auth/saml/${tenant.slug}/login?to=console` });
    expect(start.statusCode).toBe(302);
    expect(new URL(start.headers.location as string).searchParams.get('RelayState')).toBe('console');
    const plain = await t.app.inject({ method: 'GET', url: `/api/v1/auth/saml/${tenant.slug}/login` });
    expect(new URL(plain.headers.location as string).searchParams.has('RelayState')).toBe(false);
    const bad = await t.app.inject({ method: 'GET', url: `/api/v1/auth/saml/${tenant.slug}/login?to=https://evil.example/` });
    expect(bad.statusCode).toBe(400);
  });

  it('with the RelayState console the ACS sets the session cookies and answers 303 to /, no token in the URL', async () => {
    const res = await postWithRelayState(response({ nameId: 'saml-console-user' }), 'console');
    expect(res.statusCode, res.body).toBe(303);
    expect(res.headers.location).toBe('/');
    expect(res.headers['cache-control']).toBe('no-store');
    const session = res.cookies.find((c) => c.name === 'cg_session')!;
    expect(session).toMatchObject({ path: '/', httpOnly: true, sameSite: 'Strict', maxAge: 3600 });
    expect(res.cookies.find((c) => c.name === 'cg_refresh')).toMatchObject({ path: '/api/v1/auth/session', httpOnly: true, sameSite: 'Strict' });
    const me = await t.app.inject({ url: '/api/v1/auth/me', headers: { cookie: `cg_session=${session.value}` } });
    expect(me.statusCode).toBe(200);
    expect(me.json()).toMatchObject({ tenant_id: tenant.id, role: 'security-analyst' });
  });

  it("wins over the tenant's app URL; any other RelayState (a URL too) changes nothing", async () => {
    const evil = await postWithRelayState(response({ nameId: 'saml-relay-url' }), 'https://evil.example/');
    expect(evil.statusCode).toBe(200);
    expect(evil.json().token).toBeTruthy();
    expect(evil.cookies).toEqual([]);
    expect((await configure({ metadata_url: metadataServer.url, default_role: 'security-analyst', app_redirect_url: 'https://app.example/after-login' })).statusCode).toBe(200);
    try {
      const res = await postWithRelayState(response({ nameId: 'saml-console-over-app' }), 'console');
      expect(res.statusCode).toBe(303);
      expect(res.headers.location).toBe('/');
      const other = await postWithRelayState(response({ nameId: 'saml-relay-other' }), '/somewhere');
      expect(other.statusCode).toBe(303);
      expect(new URL(other.headers.location as string).origin).toBe('https://app.example');
      expect(other.cookies).toEqual([]);
    } finally {
      await configure({ metadata_url: metadataServer.url, default_role: 'security-analyst' });
    }
  });
});

describe('SAML service-provider metadata and single log-out', () => {
  it('serves the SP metadata', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/auth/saml/${tenant.slug}/metadata` });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/samlmetadata\+xml/);
    expect(res.body).toContain(`entityID="${spEntityId}"`);
    expect(res.body).toContain(`Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${acs}"`);
    expect(res.body).toContain(`Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${slo}"`);
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/auth/saml/no-such-slug/metadata' })).statusCode).toBe(404);
  });

  it("a signed LogoutRequest revokes the user's sessions and answers the IdP", async () => {
    const first = (await post(response({ nameId: 'saml-logout' }))).json();
    const second = (await post(response({ nameId: 'saml-logout', sessionIndex: '_session2' }))).json();
    await call(t.app, first.token, { method: 'GET', url: '/api/v1/auth/me', expect: 200 });
    const bystander = (await post(response({ nameId: 'saml-stays' }))).json();

    const query = logoutRequestQuery(idp, { destination: slo, nameId: 'saml-logout', relayState: 'rs-1', now: t.clock.now() });
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/auth/saml/${tenant.slug}/slo?${query}` });
    expect(res.statusCode, res.body).toBe(302);
    const location = new URL(res.headers.location as string);
    expect(`${location.origin}${location.pathname}`).toBe(IDP_SLO_URL);
    expect(location.searchParams.get('RelayState')).toBe('rs-1');
    const logoutResponse = inflateRawSync(Buffer.from(location.searchParams.get('SAMLResponse')!, 'base64')).toString();
    expect(logoutResponse).toContain('urn:oasis:names:tc:SAML:2.0:status:Success');

    for (const tokens of [first, second]) {
      const me = await call(t.app, tokens.token, { method: 'GET', url: '/api/v1/auth/me' });
      expect(me.statusCode).toBe(401);
      expect(me.json().error.message).toBe('token revoked');
      const refresh = await call(t.app, null, { method: 'POST', url: '/api/v1/auth/refresh', payload: { refresh_token: tokens.refresh_token } });
      expect(refresh.statusCode).toBe(401);
    }
    await call(t.app, bystander.token, { method: 'GET', url: '/api/v1/auth/me', expect: 200 });
    const audit = await t.db.handle.db.selectFrom('audit_logs').selectAll().where('tenant_id', '=', tenant.id).where('action', '=', 'auth.sso_logout').execute();
    expect(audit.find((a) => (a.details as { subject?: string }).subject === 'saml-logout')?.details).toMatchObject({ sessions_revoked: 2 });
  });

  it('refuses an unsigned, wrongly signed or misaddressed LogoutRequest', async () => {
    const tokens = (await post(response({ nameId: 'saml-keep' }))).json();
    const cases: Array<[string, string]> = [
      [logoutRequestQuery(null, { destination: slo, nameId: 'saml-keep', now: t.clock.now() }), 'SAML logout request rejected: the request is not signed'],
      [
        logoutRequestQuery(otherKey, { destination: slo, nameId: 'saml-keep', now: t.clock.now() }),
        "SAML logout request rejected: invalid signature: the message is not signed with the IdP's certificate, or was altered after signing (Invalid query signature)",
      ],
      [
        logoutRequestQuery(idp, { destination: 'https://other.example/slo', nameId: 'saml-keep', now: t.clock.now() }),
        `SAML logout request rejected: destination mismatch: addressed to https://other.example/slo, this endpoint is ${slo}`,
      ],
    ];
    for (const [query, message] of cases) {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/auth/saml/${tenant.slug}/slo?${query}` });
      expect(res.statusCode, res.body).toBe(401);
      expect(res.json().error.message).toBe(message);
    }
    const missing = await t.app.inject({ method: 'GET', url: `/api/v1/auth/saml/${tenant.slug}/slo` });
    expect(missing.statusCode).toBe(400);
    await call(t.app, tokens.token, { method: 'GET', url: '/api/v1/auth/me', expect: 200 });
  });

  it('refuses a replayed, stale, future or foreign LogoutRequest', async () => {
    const sloUrl = (query: string) => `/api/v1/auth/saml/${tenant.slug}/slo?${query}`;
    const now = t.clock.now();
    const cases: Array<[string, RegExp]> = [
      [
        logoutRequestQuery(idp, { destination: slo, nameId: 'saml-x', now: new Date(now.getTime() - 7 * 60_000) }),
        /^SAML logout request rejected: the request is too old \(IssueInstant /,
      ],
      [
        logoutRequestQuery(idp, { destination: slo, nameId: 'saml-x', now: new Date(now.getTime() + 5 * 60_000) }),
        /^SAML logout request rejected: the request is issued in the future/,
      ],
      [
        logoutRequestQuery(idp, { destination: slo, nameId: 'saml-x', now, notOnOrAfter: new Date(now.getTime() - 2 * 60_000) }),
        /^SAML logout request rejected: the request has expired \(NotOnOrAfter /,
      ],
      [logoutRequestQuery(idp, { destination: slo, nameId: 'saml-x', now, issuer: 'https://evil.example/idp' }), /^SAML logout request rejected: Unknown SAML issuer/],
    ];
    for (const [query, message] of cases) {
      const res = await t.app.inject({ method: 'GET', url: sloUrl(query) });
      expect(res.statusCode, res.body).toBe(401);
      expect(res.json().error.message).toMatch(message);
    }

    // A captured request cannot end the sessions of a later login: its id is used once.
    const query = logoutRequestQuery(idp, { destination: slo, nameId: 'saml-replayed-logout', now });
    expect((await t.app.inject({ method: 'GET', url: sloUrl(query) })).statusCode).toBe(302);
    const tokens = (await post(response({ nameId: 'saml-replayed-logout' }))).json();
    const replay = await t.app.inject({ method: 'GET', url: sloUrl(query) });
    expect(replay.statusCode).toBe(401);
    expect(replay.json().error.message).toMatch(/^SAML logout request rejected: logout request _l[0-9a-f]+ was already used \(replay\)$/);
    await call(t.app, tokens.token, { method: 'GET', url: '/api/v1/auth/me', expect: 200 });
  });

  it('answers 200 when the IdP has no log-out endpoint (inline metadata)', async () => {
    expect((await configure({ metadata_xml: idpMetadata([idp], { withSlo: false }) })).statusCode).toBe(200);
    try {
      const tokens = (await post(response({ nameId: 'saml-inline' }))).json();
      const query = logoutRequestQuery(idp, { destination: slo, nameId: 'saml-inline', now: t.clock.now() });
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/auth/saml/${tenant.slug}/slo?${query}` });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ logged_out: true, sessions_revoked: 1 });
      expect((await call(t.app, tokens.token, { method: 'GET', url: '/api/v1/auth/me' })).statusCode).toBe(401);
    } finally {
      await configure({ metadata_url: metadataServer.url, default_role: 'security-analyst' });
    }
  });
});
