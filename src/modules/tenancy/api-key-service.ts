import { inTenant } from '../../platform/db/scope.js';
import { randomUUID } from 'node:crypto';
import type { AppDeps } from '../../deps.js';
import type { RequestContext } from '../../platform/auth/actor.js';
import { generateApiKey, hashSecret } from '../../platform/auth/api-key-secret.js';
import { parseAllowList } from '../../platform/auth/ip-allowlist.js';
import { actorOf, writeAudit } from '../../platform/audit/audit-log.js';
import { badRequest, forbidden, notFound } from '../../platform/http/errors.js';
import { changeAccess } from '../../platform/auth/auth-cache.js';
import { offsetOf, toPage, type PageRequest } from '../../platform/http/pagination.js';
import { expandKeyPermissions, permissionsOf, type Role } from '../../platform/rbac/roles.js';

type Deps = Pick<AppDeps, 'database' | 'clock' | 'authCache'>;

export interface ApiKeyInput {
  name: string;
  tenants?: string[];
  permissions: string[];
  expires_at?: string;
  allowed_ips?: string[];
  workspace_id?: string;
}

const listColumns = [
  'id',
  'name',
  'key_prefix',
  'tenant_id',
  'workspace_id',
  'tenant_ids',
  'permissions',
  'allowed_ips',
  'expires_at',
  'revoked_at',
  'last_used_at',
  'created_at',
  'created_by',
] as const;

function present(row: {
  id: string;
  name: string;
  key_prefix: string;
  tenant_ids: string[];
  permissions: string[];
  allowed_ips: string[];
  workspace_id: string | null;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
  created_at: Date;
  created_by: string | null;
}) {
  return {
    id: row.id,
    name: row.name,
    prefix: row.key_prefix,
    tenants: row.tenant_ids,
    workspace_id: row.workspace_id,
    permissions: row.permissions,
    allowed_ips: row.allowed_ips,
    expires_at: row.expires_at,
    revoked_at: row.revoked_at,
    last_used_at: row.last_used_at,
    created_at: row.created_at,
    created_by: row.created_by,
  };
}

/**
 * API keys: created by an administrator's user token, shown once, stored as a SHA-256 hash. A key can
 * never grant more than its creator holds in each of its tenants.
 */
export function createApiKeyService(deps: Deps) {
  const db = deps.database.db;

  async function creatorRoleIn(context: RequestContext, tenantId: string): Promise<Role | null> {
    if (context.actor.isSystemAdmin) return 'system-admin';
    const row = await db.selectFrom('memberships').select('role').where('user_id', '=', context.actor.userId!).where(inTenant(tenantId)).executeTakeFirst();
    return row?.role ?? null;
  }

  return {
    async create(context: RequestContext, input: ApiKeyInput, options: { tenantScoped: boolean }) {
      if (context.actor.type !== 'user') throw forbidden('API keys are created with a user token');
      const name = input.name.trim();
      if (!name) throw badRequest('name is required');
      const tenants = options.tenantScoped ? [context.scope.tenantId] : [...new Set(input.tenants ?? [context.scope.tenantId])];
      if (tenants.length === 0) throw badRequest('tenants must name at least one tenant');
      const { granted, unknown } = expandKeyPermissions(input.permissions);
      if (unknown.length) throw badRequest(`unknown permission: ${unknown.join(', ')}`, { unknown });
      if (input.permissions.length === 0) throw badRequest('permissions must not be empty');
      for (const tenantId of tenants) {
        const role = await creatorRoleIn(context, tenantId);
        if (!role || !permissionsOf(role).has('api_keys:manage')) throw forbidden(`no right to create API keys in tenant ${tenantId}`);
        const held = permissionsOf(role);
        const beyond = [...granted].filter((p) => !held.has(p));
        if (beyond.length) throw forbidden(`cannot grant permissions you do not have: ${beyond.join(', ')}`);
      }
      const now = deps.clock.now();
      const expiresAt = input.expires_at ? new Date(input.expires_at) : null;
      if (expiresAt && expiresAt <= now) throw badRequest('expires_at must be in the future');
      const allowedIps = (input.allowed_ips ?? []).map((entry) => entry.trim());
      const { invalid } = parseAllowList(allowedIps);
      if (invalid !== null) throw badRequest(`allowed_ips: "${invalid}" is not an IP address or CIDR range`);
      const homeTenant = options.tenantScoped ? context.scope.tenantId : tenants[0]!;
      let workspaceId: string | null = homeTenant === context.scope.tenantId ? context.scope.workspaceId : null;
      if (input.workspace_id) {
        const workspace = await db.selectFrom('workspaces').select('id').where('id', '=', input.workspace_id).where(inTenant(homeTenant)).executeTakeFirst();
        if (!workspace) throw badRequest("workspace_id is not a workspace of the key's tenant");
        workspaceId = workspace.id;
      }
      const tenantRow = await db.selectFrom('tenants').select('account_id').where('id', '=', homeTenant).executeTakeFirst();
      if (!tenantRow) throw notFound('tenant not found');
      const key = generateApiKey();
      const id = randomUUID();
      const row = await db.transaction().execute(async (trx) => {
        const created = await trx
          .insertInto('api_keys')
          .values({
            id,
            name,
            key_prefix: key.slice(0, 10),
            key_hash: hashSecret(key),
            created_by: context.actor.userId,
            account_id: tenantRow.account_id,
            tenant_id: homeTenant,
            workspace_id: workspaceId,
            tenant_ids: tenants,
            permissions: input.permissions,
            allowed_ips: allowedIps,
            expires_at: expiresAt,
            created_at: now,
          })
          .returning(listColumns)
          .executeTakeFirstOrThrow();
        for (const tenantId of tenants) {
          await writeAudit(trx, deps.clock, actorOf(context), {
            tenantId,
            action: 'api_key.created',
            targetType: 'api_key',
            targetId: id,
            details: { name, permissions: input.permissions, tenants, allowed_ips: allowedIps, expires_at: expiresAt },
          });
        }
        return created;
      });
      return { ...present(row), key };
    },

    /** Keys usable in the request's tenant; the key values themselves are never returned again. */
    async list(context: RequestContext, page: PageRequest) {
      const tenantId = context.scope.tenantId;
      const base = db.selectFrom('api_keys').where((eb) => eb(eb.val(tenantId), '=', eb.fn.any('tenant_ids')));
      const [rows, count] = await Promise.all([
        base.select(listColumns).orderBy('created_at', 'desc').orderBy('id').limit(page.perPage).offset(offsetOf(page)).execute(),
        base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return toPage(rows.map(present), Number(count.n), page);
    },

    async revoke(context: RequestContext, id: string) {
      const tenantId = context.scope.tenantId;
      const row = await db
        .selectFrom('api_keys')
        .select(listColumns)
        .where('id', '=', id)
        .where((eb) => eb(eb.val(tenantId), '=', eb.fn.any('tenant_ids')))
        .executeTakeFirst();
      if (!row) throw notFound('API key not found');
      if (row.revoked_at) return present(row);
      const now = deps.clock.now();
      const revoked = await changeAccess(db, deps.authCache, async (trx) => {
        const updated = await trx.updateTable('api_keys').set({ revoked_at: now }).where('id', '=', id).returning(listColumns).executeTakeFirstOrThrow();
        for (const tenant of row.tenant_ids) {
          await writeAudit(trx, deps.clock, actorOf(context), {
            tenantId: tenant,
            action: 'api_key.revoked',
            targetType: 'api_key',
            targetId: id,
            details: { name: row.name },
          });
        }
        return updated;
      });
      return present(revoked);
    },
  };
}

export type ApiKeyService = ReturnType<typeof createApiKeyService>;
