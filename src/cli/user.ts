import { randomUUID } from 'node:crypto';
import type { Config } from '../config.js';
import { openDatabase } from '../platform/db/database.js';
import { migrate } from '../platform/db/migrator.js';
import { hashPassword, passwordProblem } from '../platform/auth/passwords.js';
import { SYSTEM_ACTOR, writeAudit } from '../platform/audit/audit-log.js';
import { systemClock } from '../platform/clock.js';
import { isRole, ROLES, type Role } from '../platform/rbac/roles.js';
import { refreshSystemAdminFlag } from '../modules/tenancy/subjects.js';
import { bootstrap } from '../modules/tenancy/bootstrap.js';
import { announceAuthChange } from '../platform/auth/auth-cache.js';
import { createStderrLogger } from '../platform/logger.js';
import { parseOptions } from './args.js';
import { chooseTarget, readToken, REMOTE_HELP, REMOTE_OPTIONS, runLocalOrRemote, ServiceClient, ServiceError } from './remote.js';
import { UUID_PATTERN } from '../platform/http/schemas.js';

export const userHelp = `Usage: controlgraph user create --username <name> --password <password> --tenant <slug|id> --role <role> [--server URL] [--token-file FILE]

Creates a user in a tenant (or gives an existing user a role in another tenant; the password is then
ignored). Roles: ${ROLES.join(', ')}. Works directly on DATABASE_URL; the change is audit-logged.

Beside a running service on the same embedded (pglite://) database, or with --server URL, the user is
created through the service's API (POST /api/v1/tenants/{tenant}/users) as the system-admin whose
token is given; a tenant given by slug must then belong to that system-admin's account.

${REMOTE_HELP}`;

type CreateInput = { username: string; password: string | undefined; tenant: string; role: Role };

export async function userCommand(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  if (sub !== 'create') throw new Error(`unknown user command "${sub ?? ''}"\n\n${userHelp}`);
  const { values } = parseOptions(rest, { values: ['username', 'password', 'tenant', 'role', ...REMOTE_OPTIONS] });
  for (const required of ['username', 'tenant', 'role']) {
    if (!values[required]) throw new Error(`--${required} is required\n\n${userHelp}`);
  }
  if (!isRole(values.role)) throw new Error(`invalid role: must be one of ${ROLES.join(', ')}`);
  const input: CreateInput = { username: values.username!, password: values.password, tenant: values.tenant!, role: values.role };
  const target = await chooseTarget(values);
  const message = await runLocalOrRemote(
    target,
    (config) => createOnFiles(config, input),
    (remote) => createThroughApi(ServiceClient.open(remote, readToken(values), 'user create', "a system-admin's access token"), input),
  );
  console.log(message);
}

async function createOnFiles(config: Config, values: CreateInput): Promise<string> {
  const database = await openDatabase(config.databaseUrl, { owner: 'controlgraph user create' });
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
      await writeAudit(
        trx,
        systemClock,
        { ...SYSTEM_ACTOR, name: 'cli' },
        {
          tenantId: tenant.id,
          action: existing ? 'user.linked' : 'user.created',
          targetType: 'user',
          targetId: userId,
          details: { username, role: values.role, via: 'cli' },
        },
      );
    });
    return `${existing ? 'linked' : 'created'} user ${username} as ${values.role} in tenant ${tenant.slug}`;
  } finally {
    await database.close();
  }
}

interface TenantItem {
  id: string;
  slug: string;
}

/** The tenant by id, or by slug among the tenants of the caller's account. */
async function findTenant(client: ServiceClient, wanted: string): Promise<TenantItem> {
  if (UUID_PATTERN.test(wanted)) {
    try {
      return (await client.request<TenantItem>('GET', `/tenants/${wanted}`)).body;
    } catch (error) {
      if (error instanceof ServiceError && error.status === 404) throw new Error(`tenant "${wanted}" not found`);
      throw error;
    }
  }
  for (let page = 1; ; page++) {
    const { body } = await client.request<{ items: TenantItem[]; total_pages: number }>('GET', '/account/tenants', { query: { page: String(page), per_page: '100' } });
    const found = body.items.find((t) => t.slug === wanted);
    if (found) return found;
    if (page >= body.total_pages) throw new Error(`tenant "${wanted}" not found among the tenants of the token's account (pass the tenant's id)`);
  }
}

/** POST /tenants/{t}/users as a system-admin; a user already in the tenant gets the role instead. */
async function createThroughApi(client: ServiceClient, values: CreateInput): Promise<string> {
  const tenant = await findTenant(client, values.tenant);
  const username = values.username.toLowerCase();
  try {
    await client.request('POST', `/tenants/${tenant.id}/users`, { json: { username, role: values.role, ...(values.password ? { password: values.password } : {}) } });
    return `added user ${username} as ${values.role} in tenant ${tenant.slug} (through ${client.remote.url})`;
  } catch (error) {
    if (!(error instanceof ServiceError && error.status === 409)) throw error;
  }
  // Already a member: as on the files, the command sets the role.
  for (let page = 1; ; page++) {
    const { body } = await client.request<{ items: Array<{ id: string; username: string }>; total_pages: number }>('GET', `/tenants/${tenant.id}/users`, {
      query: { page: String(page), per_page: '100' },
    });
    const user = body.items.find((u) => u.username === username);
    if (user) {
      await client.request('PUT', `/tenants/${tenant.id}/users/${user.id}/role`, { json: { role: values.role } });
      return `linked user ${username} as ${values.role} in tenant ${tenant.slug} (through ${client.remote.url})`;
    }
    if (page >= body.total_pages) throw new Error(`user "${username}" is reported in tenant ${tenant.slug} but not listed`);
  }
}
