import { randomUUID } from 'node:crypto';
import { loadConfig } from '../config.js';
import { openDatabase } from '../platform/db/database.js';
import { migrate } from '../platform/db/migrator.js';
import { hashPassword, passwordProblem } from '../platform/auth/passwords.js';
import { SYSTEM_ACTOR, writeAudit } from '../platform/audit/audit-log.js';
import { systemClock } from '../platform/clock.js';
import { isRole, ROLES } from '../platform/rbac/roles.js';
import { refreshSystemAdminFlag } from '../modules/tenancy/subjects.js';
import { bootstrap } from '../modules/tenancy/bootstrap.js';
import { announceAuthChange } from '../platform/auth/auth-cache.js';
import { createStderrLogger } from '../platform/logger.js';
import { parseOptions } from './args.js';

export const userHelp = `Usage: controlgraph user create --username <name> --password <password> --tenant <slug|id> --role <role>

Creates a user in a tenant (or gives an existing user a role in another tenant; the password is then
ignored). Roles: ${ROLES.join(', ')}. Works directly on DATABASE_URL; the change is audit-logged.`;

export async function userCommand(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  if (sub !== 'create') throw new Error(`unknown user command "${sub ?? ''}"\n\n${userHelp}`);
  const { values } = parseOptions(rest, { values: ['username', 'password', 'tenant', 'role'] });
  for (const required of ['username', 'tenant', 'role']) {
    if (!values[required]) throw new Error(`--${required} is required\n\n${userHelp}`);
  }
  if (!isRole(values.role)) throw new Error(`invalid role: must be one of ${ROLES.join(', ')}`);
  const config = loadConfig();
  const database = await openDatabase(config.databaseUrl);
  try {
    await migrate(database.db);
    await bootstrap({ database, clock: systemClock, config, log: createStderrLogger(config.logLevel) });
    const db = database.db;
    const tenant = await db
      .selectFrom('tenants')
      .select(['id', 'account_id', 'slug'])
      .where((eb) => (/^[0-9a-f-]{36}$/i.test(values.tenant!) ? eb('id', '=', values.tenant!) : eb('slug', '=', values.tenant!)))
      .executeTakeFirst();
    if (!tenant) throw new Error(`tenant "${values.tenant}" not found`);
    const username = values.username!.toLowerCase();
    const existing = await db.selectFrom('users').select('id').where('username', '=', username).executeTakeFirst();
    if (!existing) {
      const problem = passwordProblem(values.password);
      if (problem) throw new Error(problem);
    }
    const now = new Date();
    const passwordHash = existing ? null : await hashPassword(values.password!);
    const userId = existing?.id ?? randomUUID();
    await db.transaction().execute(async (trx) => {
      if (!existing) {
        await trx
          .insertInto('users')
          .values({ id: userId, username, password_hash: passwordHash, account_id: tenant.account_id, is_system_admin: false, created_at: now, updated_at: now })
          .execute();
      }
      await trx
        .insertInto('memberships')
        .values({ user_id: userId, tenant_id: tenant.id, role: values.role as (typeof ROLES)[number], created_at: now, updated_at: now })
        .onConflict((oc) => oc.columns(['user_id', 'tenant_id']).doUpdateSet({ role: values.role as (typeof ROLES)[number], updated_at: now }))
        .execute();
      await refreshSystemAdminFlag(trx, userId);
      // A running service may have this user's old role cached.
      await announceAuthChange(trx);
      await writeAudit(trx, systemClock, { ...SYSTEM_ACTOR, name: 'cli' }, {
        tenantId: tenant.id,
        action: existing ? 'user.linked' : 'user.created',
        targetType: 'user',
        targetId: userId,
        details: { username, role: values.role, via: 'cli' },
      });
    });
    console.log(`${existing ? 'linked' : 'created'} user ${username} as ${values.role} in tenant ${tenant.slug}`);
  } finally {
    await database.close();
  }
}
