import type { Module } from '../module.js';
import { ssoConfigRoutes } from './config-routes.js';
import { createSsoConfigService } from './config-service.js';
import { ssoLoginRoutes } from './login-routes.js';
import { OidcClients } from './oidc-client.js';
import { createOidcService } from './oidc-service.js';
import { loadSsoSettings } from './outbound.js';
import { createSamlService } from './saml-service.js';
import { SSO_SWEEP_JOB, sweepSso } from './sweep-job.js';
import './tables.js';

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
