import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, type TenantFixture } from '../harness/identity.js';
import { acsForm, buildResponse, idpMetadata, logoutRequestQuery, makeKeyPair, RSA_SHA1, SHA1_DIGEST, type ResponseOptions, type TestKeyPair } from './saml-idp.js';

/**
 * SAML messages signed with RSA-SHA1 or carrying SHA-1 digests are refused unless the tenant's SSO
 * configuration allows a legacy IdP (`allow_sha1`). The responses are signed here with xml-crypto
 * and a throw-away key, as a legacy IdP signs them; the metadata is given inline (nothing is fetched).
 */
let t: TestApp;
let tenant: TenantFixture;
let idp: TestKeyPair;
const SERVICE = 'https://cg.test.example';
const RSA_SHA256 = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256';
let acs: string;
let spEntityId: string;

const configure = (extra: Record<string, unknown> = {}) =>
  call(t.app, tenant.admin.token, {
    method: 'PUT',
    url: `/api/v1/tenants/${tenant.id}/sso`,
    payload: { provider: 'saml', service_url: SERVICE, metadata_xml: idpMetadata([idp]), ...extra },
  });

const post = (xml: string) =>
  t.app.inject({ method: 'POST', url: `/api/v1/auth/saml/${tenant.slug}/acs`, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: acsForm(xml) });

const response = (nameId: string, overrides: Partial<ResponseOptions> = {}) => buildResponse(idp, { now: t.clock.now(), acs, audience: spEntityId, nameId, ...overrides });

const refusal = (algorithms: string[]) =>
  `SAML response rejected: the message is signed with SHA-1 (${algorithms.join(', ')}), which is refused: configure the IdP to sign with RSA-SHA256, or set allow_sha1 in this tenant's SSO configuration for a legacy IdP`;

beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
  idp = makeKeyPair();
  acs = `${SERVICE}/api/v1/auth/saml/${tenant.slug}/acs`;
  spEntityId = `${SERVICE}/api/v1/auth/saml/${tenant.slug}/metadata`;
  expect((await configure()).statusCode).toBe(201);
});
afterAll(() => t?.close());
beforeEach(() => t.clock.set('2026-11-23T12:00:00.000Z'));

describe('SAML and SHA-1', () => {
  it('allow_sha1 is false by default', async () => {
    const config = await call(t.app, tenant.admin.token, { url: `/api/v1/tenants/${tenant.id}/sso`, expect: 200 });
    expect(config.json().allow_sha1).toBe(false);
    expect((await post(response('sha256-user'))).statusCode).toBe(200);
  });

  const cases: Array<[string, Partial<ResponseOptions>, string[]]> = [
    ['an RSA-SHA1 signature', { signatureAlgorithm: RSA_SHA1 }, [RSA_SHA1]],
    ['a SHA-1 digest', { digestAlgorithm: SHA1_DIGEST }, [SHA1_DIGEST]],
    ['an RSA-SHA1 signature over a SHA-1 digest of the whole response', { signatureAlgorithm: RSA_SHA1, digestAlgorithm: SHA1_DIGEST, sign: 'response' }, [RSA_SHA1, SHA1_DIGEST]],
  ];

  it.each(cases)('refuses a response with %s (401, audit-logged), though correctly signed', async (_name, algorithms, named) => {
    const res = await post(response(`legacy-${named.length}-${algorithms.sign ?? 'assertion'}`, algorithms));
    expect(res.statusCode, res.body).toBe(401);
    expect(res.json().error.message).toBe(refusal(named));
    const audit = await t.db.handle.db.selectFrom('audit_logs').select('details').where('tenant_id', '=', tenant.id).where('action', '=', 'auth.sso_login_failed').execute();
    expect(audit.map((a) => (a.details as { reason: string }).reason)).toContain(refusal(named));
  });

  it('refuses a LogoutRequest signed with RSA-SHA1', async () => {
    const query = logoutRequestQuery(idp, { destination: `${SERVICE}/api/v1/auth/saml/${tenant.slug}/slo`, nameId: 'sha256-user', now: t.clock.now(), sha1: true });
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/auth/saml/${tenant.slug}/slo?${query}` });
    expect(res.statusCode, res.body).toBe(401);
    expect(res.json().error.message).toBe(refusal([RSA_SHA1]).replace('SAML response rejected', 'SAML logout request rejected'));
  });

  it('accepts SHA-1 once the configuration allows a legacy IdP (allow_sha1: true, audit-logged), and refuses it again when turned off', async () => {
    const allowed = await configure({ allow_sha1: true });
    expect(allowed.statusCode, allowed.body).toBe(200);
    expect(allowed.json().allow_sha1).toBe(true);
    const updated = await call(t.app, tenant.admin.token, { url: `/api/v1/tenants/${tenant.id}/audit-logs?action=sso.config_updated`, expect: 200 });
    expect(updated.json().items[0].details).toMatchObject({ allow_sha1: true });
    const res = await post(response('legacy-allowed', { signatureAlgorithm: RSA_SHA1, digestAlgorithm: SHA1_DIGEST }));
    expect(res.statusCode, res.body).toBe(200);
    const query = logoutRequestQuery(idp, { destination: `${SERVICE}/api/v1/auth/saml/${tenant.slug}/slo`, nameId: 'legacy-allowed', now: t.clock.now(), sha1: true });
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/auth/saml/${tenant.slug}/slo?${query}` })).statusCode).toBe(302);
    // Still a valid signature is needed: SHA-1 allowed is not "anything goes".
    const forged = response('legacy-forged', { signatureAlgorithm: RSA_SHA1 }).replace('>legacy-forged<', '>legacy-admin<');
    expect((await post(forged)).statusCode).toBe(401);

    expect((await configure()).json().allow_sha1).toBe(false);
    expect((await post(response('legacy-again', { signatureAlgorithm: RSA_SHA1 }))).statusCode).toBe(401);
    expect((await post(response('sha256-again', { signatureAlgorithm: RSA_SHA256 }))).statusCode).toBe(200);
  });

  it('allow_sha1 is a SAML field: 400 with OIDC', async () => {
    const res = await call(t.app, tenant.admin.token, {
      method: 'PUT',
      url: `/api/v1/tenants/${tenant.id}/sso`,
      payload: { provider: 'okta', issuer: 'https://idp.example', client_id: 'c', client_secret: 's', service_url: SERVICE, allow_sha1: true },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.details.errors.allow_sha1).toBe('is a SAML field (provider "saml" selects SAML)');
  });
});
