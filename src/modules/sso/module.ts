import type { AppDeps } from '../../deps.js';
import type { Module } from '../module.js';
import { ssoConfigRoutes } from './config-routes.js';
import { createSsoConfigService } from './config-service.js';
import { ssoLoginRoutes } from './login-routes.js';
import { OidcClients } from './oidc-client.js';
import { createOidcService } from './oidc-service.js';
import { loadSsoSettings } from './outbound.js';
import { createSamlService } from './saml-service.js';
import './tables.js';

export const SSO_SWEEP_JOB = 'sso.sweep';

/** Deletes what has expired: pending OIDC logins, SAML request ids, used assertion ids. */
export async function sweepSso(deps: Pick<AppDeps, 'database' | 'clock'>): Promise<number> {
  const db = deps.database.db;
  const now = deps.clock.now();
  let removed = 0;
  for (const table of ['sso_login_states', 'sso_saml_requests', 'sso_saml_assertions'] as const) {
    const result = await db.deleteFrom(table).where('expires_at', '<=', now).executeTakeFirst();
    removed += Number(result.numDeletedRows);
  }
  return removed;
}

/** Single sign-on: tenant SSO configuration, OIDC and SAML login (issue 13). */
export const ssoModule: Module = {
  name: 'sso',
  routes: async (app, { deps }) => {
    const settings = loadSsoSettings(deps.config, deps.version, deps.log);
    const clients = new OidcClients(settings, deps.clock);
    const oidc = createOidcService(deps, settings, clients);
    const saml = createSamlService(deps, settings);
    await app.register(ssoConfigRoutes(createSsoConfigService(deps, settings, clients, saml)), { deps });
    await app.register(ssoLoginRoutes(oidc, saml), { deps });
  },
  jobs: (deps) => [{ kind: SSO_SWEEP_JOB, maxAttempts: 3, run: async () => ({ removed: await sweepSso(deps) }) }],
  schedules: () => [{ name: 'sso-sweeper', kind: SSO_SWEEP_JOB, intervalMs: 10 * 60_000 }],
};
