import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, decodeJwt, type JWK } from 'jose';
import Provider from 'oidc-provider';

/**
 * A real OpenID provider (the oidc-provider library) on a loopback port, with its development
 * interactions (login and consent pages) and accounts of the test's choosing. `tamperIdToken` lets
 * a test turn it into a misbehaving provider: the ID token of the next token response is replaced
 * by one re-signed with the provider's own key (or another key) with altered claims.
 */
export interface TestOidcIdp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  accounts: Map<string, Record<string, unknown>>;
  tamperIdToken: ((claims: Record<string, unknown>) => Record<string, unknown>) | null;
  /** Re-sign with a key the provider does not publish. */
  tamperWithForeignKey: boolean;
  close(): Promise<void>;
}

export async function startOidcIdp(options: { redirectUris: string[]; idTokenTtlSeconds?: number; clientId?: string; clientSecret?: string }): Promise<TestOidcIdp> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const issuer = `http://127.0.0.1:${port}`;
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk: JWK = { ...(await exportJWK(privateKey)), kid: 'test-key-1', alg: 'RS256', use: 'sig' };
  const foreign = (await generateKeyPair('RS256', { extractable: true })).privateKey;
  const accounts = new Map<string, Record<string, unknown>>();
  const clientId = options.clientId ?? 'controlgraph-test';
  const clientSecret = options.clientSecret ?? 'a-client-secret-for-tests-only-0123456789';

  const provider = new Provider(issuer, {
    clients: [{ client_id: clientId, client_secret: clientSecret, redirect_uris: options.redirectUris, grant_types: ['authorization_code'], response_types: ['code'] }],
    jwks: { keys: [jwk] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'preferred_username'] },
    features: { devInteractions: { enabled: true } },
    ttl: { IdToken: options.idTokenTtlSeconds ?? 3600 },
    cookies: { keys: ['test-cookie-key-0123456789'] },
    findAccount: async (_ctx: unknown, id: string) => ({
      accountId: id,
      claims: async () => ({ sub: id, ...(accounts.get(id) ?? {}) }),
    }),
  });

  const idp: TestOidcIdp = {
    issuer,
    clientId,
    clientSecret,
    accounts,
    tamperIdToken: null,
    tamperWithForeignKey: false,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };

  provider.use(async (ctx: { path: string; body: unknown }, next: () => Promise<void>) => {
    await next();
    const body = ctx.body as { id_token?: string } | undefined;
    if (ctx.path === '/token' && body?.id_token && idp.tamperIdToken) {
      const claims = idp.tamperIdToken(decodeJwt(body.id_token) as Record<string, unknown>);
      body.id_token = await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'test-key-1' }).sign(idp.tamperWithForeignKey ? foreign : privateKey);
    }
  });
  server.on('request', provider.callback());
  return idp;
}

/** A minimal cookie jar per origin, enough to carry oidc-provider's and our cookies. */
export class CookieJar {
  private readonly jar = new Map<string, Map<string, string>>();

  store(url: string | URL, response: Response): void {
    const origin = new URL(url).origin;
    const cookies = this.jar.get(origin) ?? new Map<string, string>();
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const index = pair!.indexOf('=');
      const name = pair!.slice(0, index).trim();
      const value = pair!.slice(index + 1).trim();
      const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a)) || value === '';
      if (expired) cookies.delete(name);
      else cookies.set(name, value);
    }
    this.jar.set(origin, cookies);
  }

  header(url: string | URL): string {
    const cookies = this.jar.get(new URL(url).origin);
    return cookies ? [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') : '';
  }
}

function formAction(html: string, base: string): string {
  const match = /<form[^>]*action="([^"]+)"/.exec(html);
  if (!match) throw new Error(`no form in the interaction page: ${html.slice(0, 300)}`);
  return new URL(match[1]!.replace(/&amp;/g, '&'), base).href;
}

/**
 * Follows a browser's path from our login URL through the provider's login and consent pages until
 * the provider redirects to `stopAt` (our callback); returns that URL. No browser: fetch with
 * manual redirects and a cookie jar.
 */
export async function driveLogin(startUrl: string, stopAt: string, jar: CookieJar, login: string): Promise<string> {
  let url = startUrl;
  let method: 'GET' | 'POST' = 'GET';
  let body: string | undefined;
  for (let step = 0; step < 25; step++) {
    if (method === 'GET' && url.startsWith(stopAt)) return url;
    const response = await fetch(url, {
      method,
      redirect: 'manual',
      headers: { cookie: jar.header(url), ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      body,
    });
    jar.store(url, response);
    method = 'GET';
    body = undefined;
    if (response.status >= 300 && response.status < 400) {
      url = new URL(response.headers.get('location')!, url).href;
      continue;
    }
    const html = await response.text();
    if (response.status !== 200) throw new Error(`${url}: HTTP ${response.status}: ${html.slice(0, 300)}`);
    const action = formAction(html, url);
    method = 'POST';
    body = html.includes('name="login"') ? new URLSearchParams({ prompt: 'login', login, password: 'any' }).toString() : new URLSearchParams({ prompt: 'consent' }).toString();
    url = action;
  }
  throw new Error('the login did not come back to the callback');
}
