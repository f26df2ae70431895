import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { AppDeps } from '../../deps.js';
import { hashPassword, passwordProblem, randomPassword } from '../../platform/auth/passwords.js';
import { SYSTEM_ACTOR, writeAudit } from '../../platform/audit/audit-log.js';
import { createTenantRows } from './tenant-service.js';
import { refreshSystemAdminFlag } from './subjects.js';

// Serialises bootstraps of processes starting together against one empty database.
const BOOTSTRAP_LOCK_ID = 727_002;

/**
 * On first start with an empty database: account `default`, tenant `default` with its default
 * workspace, and a system-admin from CONTROLGRAPH_ADMIN_USERNAME/PASSWORD, or `admin` with a random
 * password printed once to the log.
 */
export async function bootstrap(deps: Pick<AppDeps, 'database' | 'clock' | 'config' | 'log'>): Promise<void> {
  const { config, log, clock } = deps;
  if (config.adminPassword) {
    const problem = passwordProblem(config.adminPassword);
    if (problem) throw new Error(`CONTROLGRAPH_ADMIN_PASSWORD: ${problem}`);
  }
  const printed = await deps.database.db.transaction().execute(async (trx) => {
    await sql`SELECT pg_advisory_xact_lock(${BOOTSTRAP_LOCK_ID})`.execute(trx);
    const existing = await trx.selectFrom('accounts').select('id').limit(1).executeTakeFirst();
    if (existing) return null;
    const now = clock.now();
    const accountId = randomUUID();
    await trx.insertInto('accounts').values({ id: accountId, name: 'default', created_at: now }).execute();
    const username = (config.adminUsername ?? 'admin').toLowerCase();
    const password = config.adminPassword ?? randomPassword();
    const userId = randomUUID();
    await trx
      .insertInto('users')
      .values({
        id: userId,
        username,
        password_hash: await hashPassword(password),
        account_id: accountId,
        is_system_admin: true,
        created_at: now,
        updated_at: now,
      })
      .execute();
    const { tenantId } = await createTenantRows(trx, now, {
      accountId,
      name: 'default',
      slug: 'default',
      plan: config.defaultPlan,
      creator: { userId, role: 'system-admin' },
    });
    await refreshSystemAdminFlag(trx, userId);
    await writeAudit(trx, clock, SYSTEM_ACTOR, {
      tenantId,
      action: 'system.bootstrapped',
      targetType: 'user',
      targetId: userId,
      details: { username, plan: config.defaultPlan },
    });
    return config.adminPassword ? { username, password: null } : { username, password };
  });
  if (printed?.password) {
    // Printed once, in the message text (logs redact fields named password, not messages).
    log.warn(`bootstrap: created system-admin "${printed.username}" with password ${printed.password} (change it, or set CONTROLGRAPH_ADMIN_PASSWORD)`);
  } else if (printed) {
    log.info({ username: printed.username }, 'bootstrap: created system-admin from CONTROLGRAPH_ADMIN_USERNAME');
  }
}
