import { randomBytes } from 'node:crypto';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer, type Socket } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, createApiKey, fresh, type TenantFixture } from '../harness/identity.js';
import { deriveSecretKey, sealSecret } from '../../src/modules/sso/legacy-secret-format.js';
import { startOidcIdp, type TestOidcIdp } from './oidc-idp.js';
import { idpMetadata, makeKeyPair, serveDocument, type TestKeyPair } from './saml-idp.js';

/** PUT/GET/DELETE /tenants/{id}/sso and POST /sso/test, against a real OpenID provider and a served SAML metadata document. */
let t: TestApp;
let tenant: TenantFixture;
let idp: TestOidcIdp;
let samlKey: TestKeyPair;
let shortKey: TestKeyPair;
let metadata: Awaited<ReturnType<typeof serveDocument>>;

/**
 * The tests' DNS (no real lookups): inside.test is a private address; rebind.test answers loopback
 * (allow-listed: where the test's IdP listens) while a URL is saved, and a private address after.
 */
const dns = { rebindTo: '127.0.0.1' };
async function ssoTestDns(host: string): Promise<Array<{ address: string; family: number }>> {
  if (host === 'inside.test') return [{ address: '10.0.0.5', family: 4 }];
  if (host === 'rebind.test') return [{ address: dns.rebindTo, family: 4 }];
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
}

/** A TCP listener on loopback that counts connections; `banner` non-null: it answers that and closes (not HTTP). */
async function tcpListener(banner: string | null) {
  const sockets = new Set<Socket>();
  const state = { port: 0, connections: 0, close: async () => undefined as void };
  const server = createServer((socket) => {
    state.connections++;
    sockets.add(socket);
    socket.on('error', () => undefined);
    if (banner !== null) socket.end(banner);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.port = (server.address() as { port: number }).port;
  state.close = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
  return state;
}

const ssoUrl = () => `/api/v1/tenants/${tenant.id}/sso`;

function oidcBody(extra: Record<string, unknown> = {}) {
  return { provider: 'okta', issuer: idp.issuer, client_id: idp.clientId, client_secret: idp.clientSecret, ...extra };
}

async function put(body: Record<string, unknown>, token = tenant.admin.token) {
  return call(t.app, token, { method: 'PUT', url: ssoUrl(), payload: body });
}

async function test(token = tenant.admin.token) {
  return call(t.app, token, { method: 'POST', url: `${ssoUrl()}/test`, expect: 200 });
}

async function auditRows(action: string) {
  return t.db.handle.db.selectFrom('audit_logs').selectAll().where('tenant_id', '=', tenant.id).where('action', '=', action).execute();
}

/** Runs `fn` and returns the audit entries of `action` it added (audit ids are UUIDs: no order to rely on). */
async function auditAdded(action: string, fn: () => Promise<unknown>) {
  const before = new Set((await auditRows(action)).map((row) => row.id));
  await fn();
  return (await auditRows(action)).filter((row) => !before.has(row.id));
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  // The fake IdPs listen on loopback: allow-listed explicitly, as an operator would for a local IdP.
  t = await createTestApp({ clockStart: new Date().toISOString(), env: { CONTROLGRAPH_OUTBOUND_ALLOW_HOSTS: '127.0.0.1' }, config: { outboundLookup: ssoTestDns } });
  tenant = await buildTenant(t);
  idp = await startOidcIdp({ redirectUris: [`http://localhost/api/v1/auth/oidc/${tenant.slug}/callback`] });
  samlKey = makeKeyPair(365);
  shortKey = makeKeyPair(10, '/CN=Short Lived');
  metadata = await serveDocument(idpMetadata([samlKey]));
});
afterAll(async () => {
  await metadata?.close();
  await idp?.close();
  await t?.close();
});
beforeEach(() => {
  t.clock.set(new Date());
});

describe('SSO configuration', () => {
  it('answers 401 without a token', async () => {
    for (const [method, url] of [
      ['GET', ssoUrl()],
      ['PUT', ssoUrl()],
      ['DELETE', ssoUrl()],
      ['POST', `${ssoUrl()}/test`],
    ] as const) {
      const res = await t.app.inject({ method, url, ...(method === 'PUT' ? { payload: oidcBody() } : {}) });
      expect(res.statusCode, `${method} ${url}`).toBe(401);
      expect(res.json().error.code).toBe('UNAUTHORIZED');
    }
  });

  it('answers 404 before anything is configured', async () => {
    const res = await call(t.app, tenant.admin.token, { method: 'GET', url: ssoUrl() });
    expect(res.statusCode).toBe(404);
    expect(res.json().error.message).toBe('SSO is not configured for this tenant');
    expect((await call(t.app, tenant.admin.token, { method: 'POST', url: `${ssoUrl()}/test` })).statusCode).toBe(404);
    expect((await call(t.app, tenant.admin.token, { method: 'DELETE', url: ssoUrl() })).statusCode).toBe(404);
  });

  it('stores an OIDC configuration with the client secret encrypted and never returned', async () => {
    const res = await put(oidcBody({ default_role: 'auditor', app_redirect_url: 'https://app.example/sso' }));
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({
      tenant_id: tenant.id,
      protocol: 'oidc',
      provider: 'okta',
      issuer: idp.issuer,
      client_id: idp.clientId,
      client_secret_set: true,
      client_secret_readable: true,
      scopes: ['openid', 'email', 'profile'],
      default_role: 'auditor',
      app_redirect_url: 'https://app.example/sso',
      // Derived from the request's origin when not given.
      service_url: 'http://localhost',
      login_url: `http://localhost/api/v1/auth/oidc/${tenant.slug}/login`,
      redirect_uri: `http://localhost/api/v1/auth/oidc/${tenant.slug}/callback`,
      sp_entity_id: null,
    });
    expect(res.body).not.toContain(idp.clientSecret);
    const read = await call(t.app, tenant.users['read-only'].token, { method: 'GET', url: ssoUrl(), expect: 200 });
    expect(read.body).not.toContain(idp.clientSecret);
    expect(read.json()).not.toHaveProperty('client_secret');

    const row = await t.db.handle.db.selectFrom('sso_configs').selectAll().where('tenant_id', '=', tenant.id).executeTakeFirstOrThrow();
    // The platform's secret box format (issue 26): `v1.<key id>.<iv>.<ciphertext+tag>`.
    expect(row.client_secret_enc).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(row.client_secret_enc).not.toContain(idp.clientSecret);
    expect(Buffer.from(row.client_secret_enc!.split('.')[3]!, 'base64url').toString('latin1')).not.toContain(idp.clientSecret);

    const audit = await t.db.handle.db.selectFrom('audit_logs').selectAll().where('tenant_id', '=', tenant.id).where('action', '=', 'sso.config_created').execute();
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actor_id: tenant.admin.user_id, target_type: 'sso_config' });
    expect(audit[0]!.details).toMatchObject({ protocol: 'oidc', issuer: idp.issuer, client_secret_changed: true, default_role: 'auditor' });
    expect(JSON.stringify(audit[0]!.details)).not.toContain(idp.clientSecret);
  });

  it('keeps the stored secret on a replace with the same issuer and client, and requires it otherwise', async () => {
    const before = await t.db.handle.db.selectFrom('sso_configs').select('client_secret_enc').where('tenant_id', '=', tenant.id).executeTakeFirstOrThrow();
    let res!: Awaited<ReturnType<typeof put>>;
    const updated = await auditAdded('sso.config_updated', async () => {
      res = await put({ provider: 'okta', issuer: idp.issuer, client_id: idp.clientId, default_role: 'read-only' });
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ client_secret_set: true, default_role: 'read-only', app_redirect_url: null });
    const after = await t.db.handle.db.selectFrom('sso_configs').select('client_secret_enc').where('tenant_id', '=', tenant.id).executeTakeFirstOrThrow();
    expect(after.client_secret_enc).toBe(before.client_secret_enc);
    expect(updated).toHaveLength(1);
    expect(updated[0]!.details).toMatchObject({ client_secret_changed: false, previous: { protocol: 'oidc', default_role: 'auditor' } });

    const other = await put({ provider: 'okta', issuer: idp.issuer, client_id: 'another-client' });
    expect(other.statusCode).toBe(400);
    expect(other.json().error.details.errors).toEqual({ client_secret: 'is required for OIDC' });
  });

  it('names every invalid field', async () => {
    const oidc = await put({ provider: 'okta', metadata_url: 'https://idp.example/metadata', default_role: 'system-admin' });
    expect(oidc.statusCode).toBe(400);
    expect(oidc.json().error.message).toBe('invalid SSO configuration: default_role must not be above tenant-admin (one of read-only, auditor, security-analyst, tenant-admin)');
    expect(oidc.json().error.details.errors).toEqual({
      default_role: 'must not be above tenant-admin (one of read-only, auditor, security-analyst, tenant-admin)',
      metadata_url: 'is a SAML field (provider "saml" selects SAML)',
      issuer: 'is required for OIDC',
      client_id: 'is required for OIDC',
      client_secret: 'is required for OIDC',
    });
    const saml = await put({ provider: 'saml', issuer: 'https://idp.example', default_role: 'owner' });
    expect(saml.statusCode).toBe(400);
    expect(saml.json().error.details.errors).toEqual({
      default_role: 'must be one of read-only, auditor, security-analyst, tenant-admin',
      issuer: 'is an OIDC field (not used with provider "saml")',
      metadata_url: 'is required for SAML (or metadata_xml with the metadata itself)',
    });
    const urls = await put(oidcBody({ issuer: 'http://idp.corp.example', service_url: 'ftp://x', app_redirect_url: 'https://app.example/#frag' }));
    expect(urls.json().error.details.errors).toEqual({
      issuer: 'only https:// URLs are allowed (http:// only to hosts the operator allow-lists)',
      service_url: 'must be an absolute http(s) URL without query or fragment',
      app_redirect_url: 'must not have a fragment (the tokens are put there)',
    });
    const metadataLinkLocal = await put({ provider: 'saml', metadata_url: 'http://169.254.169.254/latest/meta-data' });
    expect(metadataLinkLocal.json().error.details.errors).toEqual({ metadata_url: 'the address is not allowed (169.254.169.254 is a link-local address)' });
    const doctype = await put({ provider: 'saml', metadata_xml: `<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>${idpMetadata([samlKey])}` });
    expect(doctype.json().error.details.errors).toEqual({ metadata_xml: 'the IdP metadata contains a DOCTYPE or entity declaration, which is not allowed' });
    const notIdp = await put({ provider: 'saml', metadata_xml: '<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="x"/>' });
    expect(notIdp.json().error.details.errors.metadata_xml).toMatch(/has no EntityDescriptor with an IDPSSODescriptor/);
    const unknownField = await put(oidcBody({ client_secret_plain: 'x' }));
    expect(unknownField.statusCode).toBe(400);
  });

  it('is changed by tenant admins only, never with a default role above their own, and not across tenants', async () => {
    const analyst = await put(oidcBody(), tenant.users['security-analyst'].token);
    expect(analyst.statusCode).toBe(403);
    // An API key acts with no role level of its own: it cannot set up logins that would carry one.
    const key = await createApiKey(t, tenant, { permissions: ['admin:*'] });
    const byKey = await put(oidcBody(), key.key);
    expect(byKey.statusCode).toBe(403);
    expect(byKey.json().error.message).toBe('cannot assign a role higher than your own');
    const other = await buildTenant(t);
    expect((await call(t.app, other.admin.token, { method: 'GET', url: ssoUrl() })).statusCode).toBe(403);
    expect((await put(oidcBody(), other.admin.token)).statusCode).toBe(403);
  });

  it('reports a secret sealed under another service secret as unreadable, and login answers 503', async () => {
    expect((await put(oidcBody())).statusCode).toBe(200);
    const foreign = sealSecret(deriveSecretKey(randomBytes(48)), idp.clientSecret, tenant.id);
    await t.db.handle.db.updateTable('sso_configs').set({ client_secret_enc: foreign }).where('tenant_id', '=', tenant.id).execute();
    const read = await call(t.app, tenant.admin.token, { method: 'GET', url: ssoUrl(), expect: 200 });
    expect(read.json()).toMatchObject({ client_secret_set: true, client_secret_readable: false });
    const login = await t.app.inject({ method: 'GET', url: `/api/v1/auth/oidc/${tenant.slug}/login` });
    expect(login.statusCode).toBe(503);
    expect(login.json().error.message).toMatch(/client secret cannot be decrypted/);
    const result = (await test()).json();
    expect(result.ok).toBe(false);
    expect(result.errors.client_secret).toMatch(/cannot be decrypted/);
    expect((await put(oidcBody())).statusCode).toBe(200);
    expect((await call(t.app, tenant.admin.token, { method: 'GET', url: ssoUrl(), expect: 200 })).json().client_secret_readable).toBe(true);
  });

  it('opens a secret stored in the old SSO format and stores it again in the secret box format', async () => {
    expect([200, 201]).toContain((await put(oidcBody())).statusCode);
    // A row as the service wrote it before the one secret box (issue 26): `v1.` and one base64url part.
    const old = sealSecret(deriveSecretKey(await t.deps.tokenKey()), idp.clientSecret, tenant.id);
    await t.db.handle.db.updateTable('sso_configs').set({ client_secret_enc: old }).where('tenant_id', '=', tenant.id).execute();
    const stored = async () =>
      (await t.db.handle.db.selectFrom('sso_configs').select('client_secret_enc').where('tenant_id', '=', tenant.id).executeTakeFirstOrThrow()).client_secret_enc!;
    const read = await call(t.app, tenant.admin.token, { method: 'GET', url: ssoUrl(), expect: 200 });
    expect(read.json()).toMatchObject({ client_secret_set: true, client_secret_readable: true });
    const rewritten = await stored();
    expect(rewritten).not.toBe(old);
    expect(rewritten.split('.')).toHaveLength(4);
    // The rewritten secret is the same secret: the provider accepts it and a login starts.
    const result = (await test()).json();
    expect(result, JSON.stringify(result)).toMatchObject({ ok: true, errors: {} });
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/auth/oidc/${tenant.slug}/login` })).statusCode).toBe(302);
    expect(await stored()).toBe(rewritten);
  });

  it('deletes the configuration (audit-logged)', async () => {
    expect((await call(t.app, tenant.users['security-analyst'].token, { method: 'DELETE', url: ssoUrl() })).statusCode).toBe(403);
    await call(t.app, tenant.admin.token, { method: 'DELETE', url: ssoUrl(), expect: 204 });
    expect((await call(t.app, tenant.admin.token, { method: 'GET', url: ssoUrl() })).statusCode).toBe(404);
    const audit = await t.db.handle.db.selectFrom('audit_logs').selectAll().where('tenant_id', '=', tenant.id).where('action', '=', 'sso.config_deleted').execute();
    expect(audit).toHaveLength(1);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/auth/oidc/${tenant.slug}/login` })).statusCode).toBe(404);
  });
});

describe('POST /sso/test', () => {
  it('checks OIDC discovery, the JWKS and the client credentials at a real provider', async () => {
    expect((await put(oidcBody())).statusCode).toBe(201);
    let result!: { ok: boolean; checks: Array<{ check: string }> };
    const audit = await auditAdded('sso.config_tested', async () => {
      result = (await test()).json();
    });
    expect(result, JSON.stringify(result)).toMatchObject({ ok: true, protocol: 'oidc', errors: {} });
    const byName = Object.fromEntries(result.checks.map((c: { check: string }) => [c.check, c]));
    expect(byName.discovery).toMatchObject({ status: 'ok', field: 'issuer' });
    expect(byName.jwks).toMatchObject({ status: 'ok', message: expect.stringMatching(/reachable with 1 signing key/) });
    expect(byName.client_authentication).toMatchObject({ status: 'ok', field: 'client_secret' });
    expect(audit).toHaveLength(1);
    expect(audit[0]!.details).toMatchObject({ ok: true, failed: [] });
  });

  it('says which field is wrong: a wrong client secret, an unreachable issuer', async () => {
    expect((await put(oidcBody({ client_secret: 'not-the-right-secret' }))).statusCode).toBe(200);
    const wrongSecret = (await test()).json();
    expect(wrongSecret.ok).toBe(false);
    expect(Object.keys(wrongSecret.errors)).toEqual(['client_secret']);
    expect(wrongSecret.errors.client_secret).toMatch(/refused the client credentials \(invalid_client\)/);

    const port = await closedPort();
    expect((await put(oidcBody({ issuer: `http://127.0.0.1:${port}` }))).statusCode).toBe(200);
    const unreachable = (await test()).json();
    expect(unreachable.ok).toBe(false);
    expect(Object.keys(unreachable.errors)).toEqual(['issuer']);
    expect(unreachable.errors.issuer).toMatch(new RegExp(`^OpenID discovery at http://127\\.0\\.0\\.1:${port} failed: `));
    // Users starting a login meanwhile get 503, not a 500.
    const login = await t.app.inject({ method: 'GET', url: `/api/v1/auth/oidc/${tenant.slug}/login` });
    expect(login.statusCode).toBe(503);
    expect(login.json().error.message).toMatch(/^identity provider unavailable: /);
  });

  it('answers 503 at the SAML endpoints while the IdP metadata cannot be read', async () => {
    const port = await closedPort();
    expect((await put({ provider: 'saml', metadata_url: `http://127.0.0.1:${port}/metadata` })).statusCode).toBe(200);
    const login = await t.app.inject({ method: 'GET', url: `/api/v1/auth/saml/${tenant.slug}/login` });
    expect(login.statusCode).toBe(503);
    expect(login.json().error.message).toMatch(/^the SAML IdP metadata URL could not be fetched: /);
    const acs = await t.app.inject({ method: 'POST', url: `/api/v1/auth/saml/${tenant.slug}/acs`, payload: { SAMLResponse: Buffer.from('<x/>').toString('base64') } });
    expect(acs.statusCode).toBe(503);
    expect((await test()).json().errors.metadata_url).toMatch(/could not be fetched/);
  });

  it('fetches and parses SAML metadata and checks the certificate dates', async () => {
    expect((await put({ provider: 'saml', metadata_url: metadata.url })).statusCode).toBe(200);
    const good = (await test()).json();
    expect(good, JSON.stringify(good)).toMatchObject({ ok: true, protocol: 'saml', errors: {} });
    expect(good.checks.find((c: { check: string }) => c.check === 'certificate')).toMatchObject({ status: 'ok', field: 'metadata_url' });
    const config = await call(t.app, tenant.admin.token, { method: 'GET', url: ssoUrl(), expect: 200 });
    expect(config.json().idp_certificates[0]).toMatchObject({ subject: 'CN=ControlGraph Test IdP' });
    expect(config.json().metadata_fetched_at).not.toBeNull();

    metadata.status = 500;
    try {
      const down = (await test()).json();
      expect(down.ok).toBe(false);
      expect(down.errors).toEqual({ metadata_url: 'the SAML IdP metadata URL answered HTTP 500' });
    } finally {
      metadata.status = 200;
    }
    metadata.body = '<not-xml';
    try {
      const broken = (await test()).json();
      expect(broken.errors.metadata_url).toMatch(/^the SAML IdP metadata URL is not well-formed XML/);
    } finally {
      metadata.body = idpMetadata([samlKey]);
    }

    // Inline metadata: a certificate close to its end is a warning; past its end, a failure.
    expect((await put({ provider: 'saml', metadata_xml: idpMetadata([shortKey]) })).statusCode).toBe(200);
    const soon = (await test()).json();
    expect(soon.ok).toBe(true);
    expect(soon.checks.find((c: { check: string }) => c.check === 'certificate')).toMatchObject({ status: 'warning', message: expect.stringMatching(/expires in \d day\(s\)/) });
    t.clock.advance(11 * 86_400_000);
    // Eleven days on, the admin's access token has expired: a new one for the rest of this test.
    const admin = await fresh(t, tenant.admin);
    const expired = (await test(admin.token)).json();
    expect(expired.ok).toBe(false);
    expect(expired.errors.metadata_xml).toMatch(/^certificate CN=Short Lived .* expired on /);
    // Next to a valid certificate (a rotation), the expired one is only a warning.
    expect((await put({ provider: 'saml', metadata_xml: idpMetadata([shortKey, samlKey]) }, admin.token)).statusCode).toBe(200);
    const rotated = (await test(admin.token)).json();
    expect(rotated.ok).toBe(true);
    expect(rotated.checks.filter((c: { check: string; status: string }) => c.check === 'certificate').map((c: { status: string }) => c.status)).toEqual(['warning', 'ok']);
  });
});

describe('outbound policy of SSO (issue 20)', () => {
  const EMBEDDED = [
    '[::ffff:169.254.169.254]',
    '[::ffff:a9fe:a9fe]',
    '[0:0:0:0:0:ffff:a9fe:a9fe]',
    '[64:ff9b::a9fe:a9fe]',
    '[2002:a9fe:a9fe::]',
    '[::a9fe:a9fe]',
    '[::ffff:0.0.0.0]',
  ];

  it('refuses every embedded form of the metadata address as issuer and as metadata URL (400, nothing stored)', async () => {
    await call(t.app, tenant.admin.token, { method: 'DELETE', url: ssoUrl() });
    for (const host of EMBEDDED) {
      const oidc = await put(oidcBody({ issuer: `https://${host}/` }));
      expect(oidc.statusCode, host).toBe(400);
      expect(oidc.json().error.details.errors.issuer, host).toMatch(/^the address is not allowed \(.+ is an? (IPv4-mapped|NAT64|6to4|IPv4-compatible).* address\)$/);
      const saml = await put({ provider: 'saml', metadata_url: `https://${host}/metadata` });
      expect(saml.statusCode, host).toBe(400);
      expect(saml.json().error.details.errors.metadata_url, host).toMatch(/^the address is not allowed/);
    }
    // A name resolving to a private address is refused when saved too.
    expect((await put({ provider: 'saml', metadata_url: 'https://inside.test/metadata' })).json().error.details.errors).toEqual({
      metadata_url: 'the address is not allowed (inside.test resolves to a private address)',
    });
    expect((await call(t.app, tenant.admin.token, { method: 'GET', url: ssoUrl() })).statusCode).toBe(404);
  });

  it('never posts the client secret to a token endpoint the discovery document puts on 0.0.0.0 (or any refused address)', async () => {
    const trap = await tcpListener(null);
    const issuerServer: Server = createHttpServer((req, res) => {
      const issuer = `http://127.0.0.1:${(issuerServer.address() as { port: number }).port}`;
      if (req.url === '/.well-known/openid-configuration') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            issuer,
            authorization_endpoint: `${issuer}/authorize`,
            token_endpoint: `http://0.0.0.0:${trap.port}/token`,
            userinfo_endpoint: `http://0.0.0.0:${trap.port}/userinfo`,
            jwks_uri: `http://[::ffff:0.0.0.0]:${trap.port}/jwks`,
            response_types_supported: ['code'],
            code_challenge_methods_supported: ['S256'],
          }),
        );
      } else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => issuerServer.listen(0, '127.0.0.1', resolve));
    try {
      const issuer = `http://127.0.0.1:${(issuerServer.address() as { port: number }).port}`;
      expect((await put(oidcBody({ issuer, client_secret: 'the-secret-that-must-stay' }))).statusCode).toBeLessThan(300);
      const result = (await test()).json();
      const byName = Object.fromEntries(result.checks.map((c: { check: string }) => [c.check, c]));
      expect(byName.discovery).toMatchObject({ status: 'ok' });
      expect(byName.jwks).toMatchObject({
        status: 'failed',
        message: `JWKS at http://[::ffff:0.0.0.0]:${trap.port}/jwks could not be fetched: the address is not allowed (::ffff:0:0 is an IPv4-mapped unspecified ("this network") address)`,
      });
      expect(byName.client_authentication).toMatchObject({
        status: 'warning',
        message: 'could not check the client credentials: the address is not allowed (0.0.0.0 is an unspecified ("this network") address)',
      });
      expect(trap.connections).toBe(0);
    } finally {
      await trap.close();
      await new Promise<void>((resolve) => issuerServer.close(() => resolve()));
    }
  });

  it('SAML metadata on loopback: a closed port and a port that is not HTTP read the same; a refused address names the rule', async () => {
    const banner = await tcpListener('SSH-2.0-OpenSSH_9.6\r\n');
    try {
      const messages: string[] = [];
      for (const port of [await closedPort(), banner.port]) {
        expect((await put({ provider: 'saml', metadata_url: `http://127.0.0.1:${port}/metadata` })).statusCode).toBeLessThan(300);
        messages.push((await test()).json().errors.metadata_url);
      }
      expect(messages).toEqual(Array(2).fill('the SAML IdP metadata URL could not be fetched: no HTTP response within 10 s'));
    } finally {
      await banner.close();
    }
    // Saved while its name answered an allowed address; fetched after it answers a private one (DNS
    // rebinding): refused at the connection, with the same words whatever listens there.
    dns.rebindTo = '127.0.0.1';
    try {
      expect((await put({ provider: 'saml', metadata_url: `http://rebind.test:${metadata.url.split(':')[2]}` })).statusCode).toBeLessThan(300);
      dns.rebindTo = '10.0.0.5';
      expect((await test()).json().errors).toEqual({
        metadata_url: 'the SAML IdP metadata URL could not be fetched: the address is not allowed (rebind.test resolves to a private address)',
      });
      expect((await put({ provider: 'saml', metadata_url: `https://rebind.test:${metadata.url.split(':')[2]}` })).statusCode).toBe(400);
    } finally {
      dns.rebindTo = '127.0.0.1';
    }
  });
});

describe('paths that do not exist', () => {
  it.each(['okta', 'azure', 'saml'])('/api/v1/admin/sso/%s answers 404', async (name) => {
    for (const method of ['GET', 'POST', 'PUT', 'DELETE'] as const) {
      const anonymous = await t.app.inject({ method, url: `/api/v1/admin/sso/${name}` });
      expect(anonymous.statusCode).toBe(404);
      const admin = await call(t.app, tenant.admin.token, { method, url: `/api/v1/admin/sso/${name}`, payload: method === 'GET' || method === 'DELETE' ? undefined : {} });
      expect(admin.statusCode).toBe(404);
      expect(admin.json().error.code).toBe('NOT_FOUND');
    }
  });
});
