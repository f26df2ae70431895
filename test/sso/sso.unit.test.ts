import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { checkIdpUrl, fetchUrlProblem, idpUrlProblem, isLoopbackHost, loadSsoSettings, UrlPolicyError } from '../../src/modules/sso/outbound.js';
import { deriveSecretKey, openSecret, sealSecret } from '../../src/modules/sso/legacy-secret-format.js';
import { normaliseServiceUrl, ssoUrls } from '../../src/modules/sso/urls.js';
import { assertSafeXml } from '../../src/modules/sso/saml-metadata.js';

describe('IdP URL policy', () => {
  // The outbound policy of a service without an allow-list, and of one that lists hosts (through the
  // setting and the deprecated alias CONTROLGRAPH_SSO_ALLOW_INSECURE_HOSTS, which keeps working).
  const none = loadSsoSettings(loadConfig({}));
  const listed = loadSsoSettings(loadConfig({ CONTROLGRAPH_OUTBOUND_ALLOW_HOSTS: '127.0.0.1', CONTROLGRAPH_SSO_ALLOW_INSECURE_HOSTS: ' keycloak.internal , ADFS.lan ' }));

  it('takes https to public hosts; loopback and plain http only when allow-listed', () => {
    expect(checkIdpUrl('https://login.microsoftonline.com/x/v2.0', none).href).toBe('https://login.microsoftonline.com/x/v2.0');
    for (const url of ['http://127.0.0.1:8080', 'https://127.0.0.1:8080', 'http://localhost:3000/realms/a', 'http://[::1]:9000', 'http://127.1.2.3']) {
      expect(() => checkIdpUrl(url, none), url).toThrow(UrlPolicyError);
    }
    expect(() => checkIdpUrl('http://idp.corp.example', none)).toThrow('only https:// URLs are allowed (http:// only to hosts the operator allow-lists)');
    expect(() => checkIdpUrl('ftp://idp.example', none)).toThrow(/only https/);
    expect(() => checkIdpUrl('not a url', none)).toThrow('is not an absolute URL');
    expect(() => checkIdpUrl('https://user:pw@idp.example', none)).toThrow('must not contain a user name or password');
    expect(() => checkIdpUrl('https://169.254.169.254/', none)).toThrow('the address is not allowed (169.254.169.254 is a link-local address)');
    expect(() => checkIdpUrl('http://[fe80::1]/', none)).toThrow(/link-local/);
    expect(checkIdpUrl('http://127.0.0.1:8080/x', listed).href).toBe('http://127.0.0.1:8080/x');
    expect(checkIdpUrl('http://keycloak.internal:8080/realms/x', listed).hostname).toBe('keycloak.internal');
    expect(checkIdpUrl('http://adfs.lan/adfs', listed).hostname).toBe('adfs.lan');
    // With names only listed, another name's http:// is refused at once; with addresses listed, it waits
    // for the connection (the name might resolve into the list), which refuses it otherwise.
    expect(() => checkIdpUrl('http://other.lan', loadSsoSettings(loadConfig({ CONTROLGRAPH_SSO_ALLOW_INSECURE_HOSTS: 'adfs.lan' })))).toThrow(/only https/);
    // 0.0.0.0 connects to this machine: allow-listing 127.0.0.1 does not let it through.
    expect(() => checkIdpUrl('http://0.0.0.0:8080/token', listed)).toThrow(/0\.0\.0\.0 is an unspecified/);
  });

  it('refuses the embedded forms of the metadata address as IdP URLs (issue 20), allow-list or not', async () => {
    for (const settings of [none, listed]) {
      for (const host of [
        '[::ffff:169.254.169.254]',
        '[::ffff:a9fe:a9fe]',
        '[0:0:0:0:0:ffff:a9fe:a9fe]',
        '[64:ff9b::a9fe:a9fe]',
        '[2002:a9fe:a9fe::]',
        '[::a9fe:a9fe]',
        '[::ffff:0.0.0.0]',
      ]) {
        expect(await fetchUrlProblem(`https://${host}/`, settings), host).toMatch(/^the address is not allowed \(.+ is an? .+ address\)$/);
      }
    }
  });

  it('leaves browser-only URLs (service URL, app redirect) to their own rule: https, or http on loopback and listed hosts', () => {
    expect(idpUrlProblem('http://localhost:3000', none)).toBeNull();
    expect(idpUrlProblem('http://adfs.lan/x', listed)).toBeNull();
    expect(idpUrlProblem('http://app.example', none)).toMatch(/must use https/);
  });

  it('knows loopback hosts', () => {
    expect(isLoopbackHost('localhost')).toBe(true);
    expect(isLoopbackHost('[::1]')).toBe(true);
    expect(isLoopbackHost('10.0.0.1')).toBe(false);
    expect(isLoopbackHost('localhost.example.com')).toBe(false);
  });
});

describe('client secret encryption', () => {
  const key = deriveSecretKey(randomBytes(48));
  const tenant = '11111111-1111-4111-8111-111111111111';

  it('round-trips, with a fresh IV each time', () => {
    const a = sealSecret(key, 'the-secret', tenant);
    const b = sealSecret(key, 'the-secret', tenant);
    expect(a).not.toBe(b);
    expect(a).toMatch(/^v1\./);
    expect(openSecret(key, a, tenant)).toBe('the-secret');
  });

  it('does not open under another key, for another tenant, or when altered', () => {
    const box = sealSecret(key, 'the-secret', tenant);
    expect(openSecret(deriveSecretKey(randomBytes(48)), box, tenant)).toBeNull();
    expect(openSecret(key, box, '22222222-2222-4222-8222-222222222222')).toBeNull();
    const raw = Buffer.from(box.slice(3), 'base64url');
    raw[raw.length - 1] = raw[raw.length - 1]! ^ 1;
    expect(openSecret(key, `v1.${raw.toString('base64url')}`, tenant)).toBeNull();
    expect(openSecret(key, 'v2.abc', tenant)).toBeNull();
  });

  it('derives the same key from the same token key', () => {
    const tokenKey = randomBytes(48);
    expect(deriveSecretKey(tokenKey).equals(deriveSecretKey(Buffer.from(tokenKey)))).toBe(true);
    expect(deriveSecretKey(tokenKey)).toHaveLength(32);
  });
});

describe('SSO URLs and XML guard', () => {
  it('derives the endpoints from the service URL and the slug', () => {
    expect(normaliseServiceUrl('https://cg.example.com/')).toBe('https://cg.example.com');
    expect(normaliseServiceUrl('https://cg.example.com:8443/base/')).toBe('https://cg.example.com:8443/base');
    expect(normaliseServiceUrl('https://cg.example.com/?x=1')).toBeNull();
    expect(normaliseServiceUrl('javascript:alert(1)')).toBeNull();
    expect(ssoUrls('https://cg.example.com/base', 'acme')).toEqual({
      oidcLogin: 'https://cg.example.com/base/api/v1/auth/oidc/acme/login',
      oidcCallback: 'https://cg.example.com/base/api/v1/auth/oidc/acme/callback',
      samlLogin: 'https://cg.example.com/base/api/v1/auth/saml/acme/login',
      spEntityId: 'https://cg.example.com/base/api/v1/auth/saml/acme/metadata',
      acs: 'https://cg.example.com/base/api/v1/auth/saml/acme/acs',
      spMetadata: 'https://cg.example.com/base/api/v1/auth/saml/acme/metadata',
      slo: 'https://cg.example.com/base/api/v1/auth/saml/acme/slo',
    });
  });

  it('refuses DOCTYPEs, entities and oversized XML', () => {
    expect(() => assertSafeXml('<a/>', 100)).not.toThrow();
    expect(() => assertSafeXml('<!doctype a><a/>', 100)).toThrow(/DOCTYPE/);
    expect(() => assertSafeXml('<a><!ENTITY x "y"></a>', 100)).toThrow(/entity/);
    expect(() => assertSafeXml(`<a>${'x'.repeat(200)}</a>`, 100)).toThrow('is larger than 100 bytes');
  });
});
