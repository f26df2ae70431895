import type { AppDeps } from '../../deps.js';
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
