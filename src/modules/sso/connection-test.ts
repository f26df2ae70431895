import { randomBytes } from 'node:crypto';
import * as client from 'openid-client';
import type { AppDeps } from '../../deps.js';
import { clientSecretOf } from './client-secret.js';
import { describeOidcError, oauthErrorCode, OidcClients } from './oidc-client.js';
import { fetchLimited, FetchProblem, fetchUrlProblem, type SsoSettings } from './outbound.js';
import { certificateInfo, parseIdpMetadata, type IdpMetadata } from './saml-metadata.js';
import type { SamlService } from './saml-service.js';
import type { SsoConfigRow } from './tables.js';
import { ssoUrls } from './urls.js';

type Deps = Pick<AppDeps, 'database' | 'clock' | 'tokenKey'>;

/** A certificate expiring within this many days is reported as a warning by /sso/test. */
const CERT_WARNING_DAYS = 30;

export interface Check {
  check: string;
  /** The configuration field the check concerns (null: the configuration as a whole). */
  field: string | null;
  status: 'ok' | 'failed' | 'warning';
  message: string;
}

/**
 * POST /sso/test: checks a stored configuration against the real identity provider (OIDC
 * discovery, JWKS and client credentials; SAML metadata and certificate dates) and reports each
 * check, so an admin learns what is wrong before users try to sign in.
 */
export function createConnectionTest(deps: Deps, settings: SsoSettings, clients: OidcClients, saml: SamlService) {
  async function testOidc(config: SsoConfigRow, slug: string): Promise<Check[]> {
    const checks: Check[] = [];
    const problem = await fetchUrlProblem(config.issuer!, settings);
    if (problem) return [{ check: 'issuer_url', field: 'issuer', status: 'failed', message: `the issuer ${problem}` }];
    const secret = await clientSecretOf(deps, config);
    if (!secret) {
      checks.push({
        check: 'client_secret',
        field: 'client_secret',
        status: 'failed',
        message: 'the stored secret cannot be decrypted (the service secret changed): enter it again',
      });
    }
    let configuration: client.Configuration;
    try {
      configuration = await clients.configuration({ issuer: config.issuer!, clientId: config.client_id!, clientSecret: secret ?? '' }, { fresh: true });
    } catch (error) {
      checks.push({ check: 'discovery', field: 'issuer', status: 'failed', message: `OpenID discovery at ${config.issuer} failed: ${describeOidcError(error)}` });
      return checks;
    }
    const server = configuration.serverMetadata();
    checks.push({ check: 'discovery', field: 'issuer', status: 'ok', message: `discovered issuer ${server.issuer}` });
    for (const endpoint of ['authorization_endpoint', 'token_endpoint', 'jwks_uri'] as const) {
      if (!server[endpoint]) checks.push({ check: endpoint, field: 'issuer', status: 'failed', message: `the discovery document has no ${endpoint}` });
    }
    if (server.response_types_supported && !server.response_types_supported.includes('code')) {
      checks.push({ check: 'response_type', field: 'issuer', status: 'failed', message: 'the provider does not support the authorization code flow' });
    }
    if (!server.code_challenge_methods_supported?.includes('S256')) {
      checks.push({ check: 'pkce', field: 'issuer', status: 'warning', message: 'the provider does not advertise PKCE S256 (code_challenge_methods_supported)' });
    }
    if (server.jwks_uri) {
      try {
        const text = await fetchLimited(server.jwks_uri, settings, { maxBytes: 256 * 1024, timeoutMs: 10_000, accept: 'application/json, application/jwk-set+json' });
        const keys = (JSON.parse(text) as { keys?: Array<{ use?: string }> }).keys;
        if (!Array.isArray(keys) || keys.length === 0) throw new FetchProblem('has no keys');
        const signing = keys.filter((k) => !k.use || k.use === 'sig').length;
        if (signing === 0) throw new FetchProblem('has no signing keys');
        checks.push({ check: 'jwks', field: 'issuer', status: 'ok', message: `JWKS at ${server.jwks_uri} reachable with ${signing} signing key(s)` });
      } catch (error) {
        const reason = error instanceof SyntaxError ? 'is not JSON' : (error as Error).message;
        checks.push({ check: 'jwks', field: 'issuer', status: 'failed', message: `JWKS at ${server.jwks_uri} ${reason}` });
      }
    }
    if (secret && server.token_endpoint) {
      checks.push(await checkClientAuthentication(configuration, ssoUrls(config.service_url, slug).oidcCallback));
    }
    return checks;
  }

  /**
   * Client authentication is only checkable by asking the token endpoint. An authorization_code
   * request with a code that cannot exist is what a login sends: providers authenticate the client
   * first (invalid_client when client_id or client_secret is wrong) and only then look at the code
   * (invalid_grant). A client_credentials probe would not do: providers commonly refuse that grant
   * before authenticating a login-only client, whatever the secret.
   */
  async function checkClientAuthentication(configuration: client.Configuration, redirectUri: string): Promise<Check> {
    const field = 'client_secret';
    try {
      await client.genericGrantRequest(configuration, 'authorization_code', {
        code: `controlgraph-sso-test-${randomBytes(16).toString('hex')}`,
        redirect_uri: redirectUri,
      });
      return { check: 'client_authentication', field, status: 'warning', message: 'the token endpoint accepted a code that cannot exist' };
    } catch (error) {
      const code = oauthErrorCode(error);
      if (code === 'invalid_client') {
        return {
          check: 'client_authentication',
          field,
          status: 'failed',
          message: 'the token endpoint refused the client credentials (invalid_client): check client_id and client_secret',
        };
      }
      if (code === 'unauthorized_client') {
        return {
          check: 'client_authentication',
          field: 'client_id',
          status: 'failed',
          message: 'the provider does not allow this client the authorization code grant (unauthorized_client)',
        };
      }
      if (code === 'invalid_grant') {
        return { check: 'client_authentication', field, status: 'ok', message: 'the token endpoint accepted client_id and client_secret' };
      }
      return { check: 'client_authentication', field, status: 'warning', message: `could not check the client credentials: ${describeOidcError(error)}` };
    }
  }

  async function testSaml(config: SsoConfigRow): Promise<Check[]> {
    const field = config.metadata_inline ? 'metadata_xml' : 'metadata_url';
    const checks: Check[] = [];
    let metadata: IdpMetadata;
    if (config.metadata_inline) {
      try {
        metadata = await parseIdpMetadata(config.metadata_xml ?? '');
      } catch (error) {
        return [{ check: 'metadata', field, status: 'failed', message: `the IdP metadata ${(error as Error).message}` }];
      }
      checks.push({ check: 'metadata', field, status: 'ok', message: 'inline IdP metadata parsed' });
    } else {
      try {
        metadata = await saml.idpMetadata(config, { refresh: true });
      } catch (error) {
        return [{ check: 'metadata', field, status: 'failed', message: (error as Error).message }];
      }
      checks.push({ check: 'metadata', field, status: 'ok', message: `IdP metadata fetched from ${config.metadata_url} and parsed` });
    }
    checks.push({ check: 'entity_id', field, status: 'ok', message: `IdP entity id ${metadata.entityId}` });
    checks.push(
      metadata.ssoUrl
        ? { check: 'sso_url', field, status: 'ok', message: `single sign-on (HTTP-Redirect) at ${metadata.ssoUrl}` }
        : { check: 'sso_url', field, status: 'warning', message: 'no HTTP-Redirect SingleSignOnService: logins can only start at the IdP' },
    );
    checks.push(
      metadata.sloUrl
        ? { check: 'slo_url', field, status: 'ok', message: `single log-out (HTTP-Redirect) at ${metadata.sloUrl}` }
        : { check: 'slo_url', field, status: 'warning', message: 'no HTTP-Redirect SingleLogoutService: log-out requests are answered without a LogoutResponse' },
    );
    const now = deps.clock.now().getTime();
    let usable = 0;
    for (const pem of metadata.certificates) {
      const info = certificateInfo(pem);
      const from = Date.parse(info.not_before);
      const until = Date.parse(info.not_after);
      const name = `certificate ${info.subject} (SHA-256 ${info.fingerprint_sha256.slice(0, 23)}…)`;
      if (now < from) checks.push({ check: 'certificate', field, status: 'failed', message: `${name} is not valid before ${info.not_before}` });
      else if (now >= until) checks.push({ check: 'certificate', field, status: 'failed', message: `${name} expired on ${info.not_after}` });
      else {
        usable++;
        const days = Math.floor((until - now) / 86_400_000);
        checks.push(
          days < CERT_WARNING_DAYS
            ? { check: 'certificate', field, status: 'warning', message: `${name} expires in ${days} day(s), on ${info.not_after}` }
            : { check: 'certificate', field, status: 'ok', message: `${name} valid until ${info.not_after}` },
        );
      }
    }
    // Signature checks do not look at validity dates; a rotated-in certificate next to an expired one is fine.
    if (usable > 0) {
      for (const check of checks) if (check.check === 'certificate' && check.status === 'failed') check.status = 'warning';
    }
    return checks;
  }

  return {
    run: (config: SsoConfigRow, slug: string): Promise<Check[]> => (config.protocol === 'oidc' ? testOidc(config, slug) : testSaml(config)),
  };
}
