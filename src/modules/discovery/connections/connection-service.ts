import { randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { AppDeps } from '../../../deps.js';
import type { Database } from '../../../platform/db/schema.js';
import { inScope, type Scope } from '../../../platform/db/scope.js';
import type { RequestContext } from '../../../platform/auth/actor.js';
import { auditInScope } from '../../../platform/audit/audit-log.js';
import { badRequest, notFound } from '../../../platform/http/errors.js';
import { offsetOf, toPage, type PageRequest } from '../../../platform/http/pagination.js';
import { secretBoxFor, SecretError } from '../../../platform/crypto/secret-box.js';
import type { ConnectionAuth } from './schemas.js';
import type { ConnectionRow } from './table.js';

type Deps = Pick<AppDeps, 'database' | 'clock' | 'tokenKey' | 'config'>;

export interface AccessKeys {
  access_key_id: string;
  secret_access_key: string;
}

export interface ConnectionCreateInput {
  name: string;
  provider?: 'aws';
  auth: ConnectionAuth;
  role_arn?: string;
  access_key_id?: string;
  secret_access_key?: string;
}

export type ConnectionUpdateInput = Partial<Pick<ConnectionCreateInput, 'name' | 'role_arn' | 'access_key_id' | 'secret_access_key'>>;

/**
 * The additional data a connection's access key is sealed with (the integrations' SecretBox): a
 * sealed value copied to another row, or read as an integration's secrets, does not open.
 */
export const sealContext = (connectionId: string) => `cloud-connection:${connectionId}`;

/** The external id the tenant's trust policy requires: random, generated here, never chosen by the tenant. */
function newExternalId(): string {
  return `controlgraph-${randomBytes(24).toString('base64url')}`;
}

const hint = (accessKeyId: string) => `…${accessKeyId.slice(-4)}`;

function validName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed) throw badRequest('name must not be blank');
  return trimmed;
}

/** The connection of the scope, or null (another tenant's or workspace's connection is not found). */
export async function findConnection(db: Kysely<Database>, scope: Scope, id: string, forUpdate = false): Promise<ConnectionRow | null> {
  return (
    (await db
      .selectFrom('cloud_connections')
      .selectAll()
      .where(inScope(scope))
      .where('id', '=', id)
      .$if(forUpdate, (q) => q.forUpdate())
      .executeTakeFirst()) ?? null
  );
}

/**
 * Cloud account connections of a workspace: the credentials its discovery jobs read with. Secrets
 * (an access key pair) are sealed at rest and never returned; creating, changing and deleting a
 * connection is audited, without the secrets.
 */
// eslint-disable-next-line max-lines-per-function -- a service factory whose methods share its closure; each method is short, and moving them out is a follow-up of issue 26 not done in time
export function createConnectionService(deps: Deps) {
  const db = deps.database.db;

  /** The trust policy to give the role, when the operator named the service's principal. */
  function trustPolicy(externalId: string) {
    const principal = deps.config.discoveryAwsPrincipal;
    if (!principal) return null;
    return {
      Version: '2012-10-17',
      Statement: [{ Effect: 'Allow', Principal: { AWS: principal }, Action: 'sts:AssumeRole', Condition: { StringEquals: { 'sts:ExternalId': externalId } } }],
    };
  }

  async function present(row: ConnectionRow) {
    let readable: boolean | null = null;
    if (row.auth === 'access_key') {
      try {
        (await secretBoxFor(deps)).open(row.secrets!, sealContext(row.id));
        readable = true;
      } catch (error) {
        if (!(error instanceof SecretError)) throw error;
        readable = false;
      }
    }
    return {
      id: row.id,
      name: row.name,
      provider: row.provider,
      auth: row.auth,
      role_arn: row.role_arn,
      external_id: row.external_id,
      trust_policy: row.external_id ? trustPolicy(row.external_id) : null,
      access_key_id_hint: row.access_key_hint,
      secret_readable: readable,
      created_by: row.created_by,
      created_at: row.created_at,
      updated_at: row.updated_at,
    };
  }

  function checkFields(auth: ConnectionAuth, input: ConnectionUpdateInput, creating: boolean): void {
    const keys = [input.access_key_id !== undefined, input.secret_access_key !== undefined];
    if (auth === 'assume_role') {
      if (keys.some(Boolean)) throw badRequest('access_key_id and secret_access_key belong to an access_key connection; an assume_role connection takes role_arn');
      if (creating && input.role_arn === undefined) throw badRequest('an assume_role connection needs role_arn (arn:aws:iam::<account>:role/<name>)');
    } else {
      if (input.role_arn !== undefined) throw badRequest('role_arn belongs to an assume_role connection; an access_key connection takes access_key_id and secret_access_key');
      if ((creating || keys.some(Boolean)) && !keys.every(Boolean)) throw badRequest('an access_key connection needs access_key_id and secret_access_key together');
    }
  }

  return {
    present,

    async create(context: RequestContext, input: ConnectionCreateInput) {
      checkFields(input.auth, input, true);
      const { scope } = context;
      const id = randomUUID();
      const box = await secretBoxFor(deps);
      const now = deps.clock.now();
      const keys = input.auth === 'access_key' ? { access_key_id: input.access_key_id!, secret_access_key: input.secret_access_key! } : null;
      const row = await db.transaction().execute(async (trx) => {
        const inserted = await trx
          .insertInto('cloud_connections')
          .values({
            id,
            tenant_id: scope.tenantId,
            workspace_id: scope.workspaceId,
            name: validName(input.name),
            provider: input.provider ?? 'aws',
            auth: input.auth,
            role_arn: input.role_arn ?? null,
            external_id: input.auth === 'assume_role' ? newExternalId() : null,
            secrets: keys ? box.seal(keys satisfies AccessKeys, sealContext(id)) : null,
            access_key_hint: keys ? hint(keys.access_key_id) : null,
            created_by: `${context.actor.type}:${context.actor.id}`,
            created_at: now,
            updated_at: now,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
        await auditInScope(trx, deps.clock, context, {
          action: 'cloud_connection.created',
          targetType: 'cloud_connection',
          targetId: id,
          details: { name: inserted.name, provider: inserted.provider, auth: inserted.auth, role_arn: inserted.role_arn, access_key_id_hint: inserted.access_key_hint },
        });
        return inserted;
      });
      return present(row);
    },

    async get(scope: Scope, id: string) {
      const row = await findConnection(db, scope, id);
      if (!row) throw notFound('cloud connection not found');
      return present(row);
    },

    async list(scope: Scope, filter: { auth?: ConnectionAuth }, page: PageRequest) {
      const base = db
        .selectFrom('cloud_connections')
        .where(inScope(scope))
        .$if(filter.auth !== undefined, (q) => q.where('auth', '=', filter.auth!));
      const [rows, count] = await Promise.all([
        base.selectAll().orderBy('created_at', 'asc').orderBy('id', 'asc').limit(page.perPage).offset(offsetOf(page)).execute(),
        base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return toPage(await Promise.all(rows.map(present)), Number(count.n), page);
    },

    /** Renames, points an assume_role connection at another role (same external id), or replaces an access key. */
    async update(context: RequestContext, id: string, input: ConnectionUpdateInput) {
      const box = await secretBoxFor(deps);
      const row = await db.transaction().execute(async (trx) => {
        const current = await findConnection(trx, context.scope, id, true);
        if (!current) throw notFound('cloud connection not found');
        checkFields(current.auth, input, false);
        const keys = input.access_key_id !== undefined ? { access_key_id: input.access_key_id, secret_access_key: input.secret_access_key! } : null;
        const updated = await trx
          .updateTable('cloud_connections')
          .set({
            ...(input.name !== undefined ? { name: validName(input.name) } : {}),
            ...(input.role_arn !== undefined ? { role_arn: input.role_arn } : {}),
            ...(keys ? { secrets: box.seal(keys satisfies AccessKeys, sealContext(id)), access_key_hint: hint(keys.access_key_id) } : {}),
            updated_at: deps.clock.now(),
          })
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirstOrThrow();
        await auditInScope(trx, deps.clock, context, {
          action: 'cloud_connection.updated',
          targetType: 'cloud_connection',
          targetId: id,
          details: {
            changed: Object.keys(input)
              .filter((k) => k !== 'secret_access_key')
              .map((k) => (k === 'access_key_id' ? 'access_key' : k)),
            name: updated.name,
            ...(input.role_arn !== undefined ? { role_arn: { from: current.role_arn, to: updated.role_arn } } : {}),
            ...(keys ? { access_key_id_hint: { from: current.access_key_hint, to: updated.access_key_hint } } : {}),
          },
        });
        return updated;
      });
      return present(row);
    },

    /** Jobs naming a deleted connection fail when they run, before any request, saying so. */
    async remove(context: RequestContext, id: string) {
      await db.transaction().execute(async (trx) => {
        const current = await findConnection(trx, context.scope, id, true);
        if (!current) throw notFound('cloud connection not found');
        await trx.deleteFrom('cloud_connections').where('id', '=', id).execute();
        await auditInScope(trx, deps.clock, context, {
          action: 'cloud_connection.deleted',
          targetType: 'cloud_connection',
          targetId: id,
          details: { name: current.name, auth: current.auth, role_arn: current.role_arn, access_key_id_hint: current.access_key_hint },
        });
      });
    },
  };
}
