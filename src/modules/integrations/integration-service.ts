import { inTenant } from '../../platform/db/scope.js';
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { AppDeps } from '../../deps.js';
import type { Database } from '../../platform/db/schema.js';
import { json } from '../../platform/db/schema.js';
import type { RequestContext } from '../../platform/auth/actor.js';
import { actorOf, writeAudit } from '../../platform/audit/audit-log.js';
import { badRequest, conflict, notFound } from '../../platform/http/errors.js';
import { offsetOf, toPage, type PageRequest } from '../../platform/http/pagination.js';
import { INTEGRATION_TYPES, SECRET_FIELDS, TARGET_URL_FIELDS, type IntegrationType } from './catalog.js';
import { joinSecrets, mergeConfig, normaliseConfig, redactedSecrets, splitSecrets, type IntegrationConfig } from './config.js';
import { secretBoxFor, SecretError } from '../../platform/crypto/secret-box.js';
import type { DeliverySettings } from './settings.js';
import { checkOutboundTarget, OutboundError, resolveOutbound } from '../../platform/outbound/index.js';
import type { IntegrationRow } from './tables.js';

type Deps = Pick<AppDeps, 'database' | 'clock' | 'tokenKey' | 'log'>;

export interface IntegrationInput {
  type: string;
  name: string;
  config: Record<string, unknown>;
}

export interface IntegrationUpdate {
  type?: string;
  name?: string;
  status?: 'active' | 'disabled';
  config?: Record<string, unknown>;
}

export interface IntegrationListFilter {
  type?: string;
  status?: 'active' | 'disabled';
  source?: 'integration' | 'alert_rule';
}

export function isIntegrationType(value: string): value is IntegrationType {
  return (INTEGRATION_TYPES as readonly string[]).includes(value);
}

const actorName = (context: RequestContext) => `${context.actor.type}:${context.actor.id}`;

// eslint-disable-next-line max-lines-per-function -- a service factory whose methods share its closure; each method is short, and moving them out is a follow-up of issue 26 not done in time
export function createIntegrationService(deps: Deps, settings: DeliverySettings) {
  const db = deps.database.db;

  /** The workspaces filter names workspaces of the tenant. */
  async function verifyWorkspaces(trx: Kysely<Database>, tenantId: string, config: IntegrationConfig): Promise<void> {
    const workspaces = (config.workspaces as string[] | undefined) ?? [];
    if (workspaces.length === 0) return;
    const found = await trx.selectFrom('workspaces').select('id').where(inTenant(tenantId)).where('id', 'in', workspaces).execute();
    const known = new Set(found.map((w) => w.id));
    const unknown = workspaces.find((w) => !known.has(w));
    if (unknown) throw badRequest(`config.workspaces: ${unknown} is not a workspace of this tenant`);
  }

  /** SMTP availability and the outbound guard on every target (DNS: outside any transaction). */
  async function verifyTargets(type: IntegrationType, config: IntegrationConfig): Promise<void> {
    if (type === 'email' && !config.smtp && !settings.smtpUrl) {
      throw badRequest('config.smtp is required: no default SMTP server is configured (CONTROLGRAPH_SMTP_URL)');
    }
    for (const field of TARGET_URL_FIELDS[type]) {
      const value = config[field];
      if (typeof value === 'string') await checkTarget(`config.${field}`, new URL(value));
    }
    const smtp = config.smtp as { host?: string } | undefined;
    if (smtp?.host) await checkHost('config.smtp.host', smtp.host);
  }

  /** A name that does not resolve now is accepted (it is checked again at every delivery). */
  async function checkTarget(name: string, url: URL): Promise<void> {
    try {
      await checkOutboundTarget(settings.policy, url);
    } catch (error) {
      if (error instanceof OutboundError) throw badRequest(`${name}: ${error.message}`);
      throw error;
    }
  }

  async function checkHost(name: string, host: string): Promise<void> {
    try {
      await resolveOutbound(settings.policy, host, 'smtp:');
    } catch (error) {
      if (error instanceof OutboundError && error.failure === 'refused') throw badRequest(`${name}: ${error.message}`);
      if (!(error instanceof OutboundError)) throw error;
    }
  }

  async function present(row: IntegrationRow, shownSecrets?: Record<string, unknown>) {
    let secretView: IntegrationConfig = {};
    if (shownSecrets) {
      secretView = joinSecrets({}, shownSecrets);
    } else {
      try {
        secretView = redactedSecrets(row.type, (await secretBoxFor(deps)).open(row.secrets, row.id));
      } catch (error) {
        if (!(error instanceof SecretError)) throw error;
      }
    }
    return {
      id: row.id,
      type: row.type,
      name: row.name,
      status: row.status,
      source: row.source,
      config: { ...row.config, ...secretView },
      disabled_at: row.disabled_at,
      disabled_reason: row.disabled_reason,
      created_at: row.created_at,
      updated_at: row.updated_at,
    };
  }

  async function load(trx: Kysely<Database>, tenantId: string, id: string, forUpdate = false): Promise<IntegrationRow> {
    let query = trx.selectFrom('integrations').selectAll().where(inTenant(tenantId)).where('id', '=', id);
    if (forUpdate) query = query.forUpdate();
    const row = await query.executeTakeFirst();
    if (!row) throw notFound('integration not found');
    return row;
  }

  function validName(name: string | undefined): string {
    const trimmed = name?.trim();
    if (!trimmed) throw badRequest('name is required');
    if (trimmed.length > 200) throw badRequest('name must be at most 200 characters');
    return trimmed;
  }

  return {
    present,

    async create(context: RequestContext, input: IntegrationInput, source: 'integration' | 'alert_rule' = 'integration') {
      const tenantId = context.scope.tenantId;
      if (!isIntegrationType(input.type)) throw badRequest(`type must be one of ${INTEGRATION_TYPES.join(', ')}`);
      const type = input.type;
      const name = validName(input.name);
      const config = normaliseConfig(type, input.config);
      const { visible, secrets } = splitSecrets(type, config);
      const box = await secretBoxFor(deps);
      const id = randomUUID();
      await verifyTargets(type, config);
      const now = deps.clock.now();
      const row = await db.transaction().execute(async (trx) => {
        await verifyWorkspaces(trx, tenantId, config);
        const inserted = await trx
          .insertInto('integrations')
          .values({
            id,
            tenant_id: tenantId,
            type,
            name,
            source,
            status: 'active',
            config: json(visible),
            events: (config.events as string[]) ?? [],
            secrets: box.seal(secrets, id),
            enabled_at: now,
            created_by: actorName(context),
            created_at: now,
            updated_at: now,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
        await writeAudit(trx, deps.clock, actorOf(context), {
          tenantId,
          action: source === 'alert_rule' ? 'alert_rule.created' : 'integration.created',
          targetType: 'integration',
          targetId: id,
          details: { name, type, events: config.events, secret_fields: Object.keys(secrets) },
        });
        return inserted;
      });
      // The only response that shows the secrets: the caller just sent them.
      return present(row, secrets);
    },

    async get(context: RequestContext, id: string) {
      return present(await load(db, context.scope.tenantId, id));
    },

    async row(context: RequestContext, id: string) {
      return load(db, context.scope.tenantId, id);
    },

    async list(context: RequestContext, filter: IntegrationListFilter, page: PageRequest) {
      let query = db.selectFrom('integrations').where(inTenant(context.scope.tenantId));
      if (filter.type) query = query.where('type', '=', filter.type as IntegrationType);
      if (filter.status) query = query.where('status', '=', filter.status);
      if (filter.source) query = query.where('source', '=', filter.source);
      const { n } = await query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      const rows = await query.selectAll().orderBy('created_at', 'asc').orderBy('id', 'asc').limit(page.perPage).offset(offsetOf(page)).execute();
      return toPage(await Promise.all(rows.map((r) => present(r))), Number(n), page);
    },

    async update(context: RequestContext, id: string, input: IntegrationUpdate, source?: 'alert_rule') {
      const tenantId = context.scope.tenantId;
      const box = await secretBoxFor(deps);
      /** The new configuration over a read of the row (secrets sealed under another key must come again). */
      const next = (current: IntegrationRow): IntegrationConfig => {
        let currentSecrets: Record<string, unknown> = {};
        try {
          currentSecrets = box.open(current.secrets, current.id);
        } catch (error) {
          if (!(error instanceof SecretError)) throw error;
        }
        const full = joinSecrets(current.config, currentSecrets);
        return normaliseConfig(current.type, input.config ? mergeConfig(full, input.config, SECRET_FIELDS[current.type]) : full);
      };
      // Targets are checked (DNS) before the transaction, on a first read; the row is then locked and
      // must not have changed in between, or the whole update runs again.
      for (let round = 0; ; round++) {
        const seen = await load(db, tenantId, id);
        if (source && seen.source !== source) throw notFound('alert rule not found');
        if (input.type !== undefined && input.type !== seen.type) throw badRequest('type cannot be changed: create a new integration');
        const name = input.name === undefined ? seen.name : validName(input.name);
        const config = next(seen);
        if (input.config) await verifyTargets(seen.type, config);
        const now = deps.clock.now();
        const row = await db.transaction().execute(async (trx) => {
          const current = await load(trx, tenantId, id, true);
          if (new Date(current.updated_at).getTime() !== new Date(seen.updated_at).getTime() || current.status !== seen.status) return null;
          if (input.config) await verifyWorkspaces(trx, tenantId, config);
          const { visible, secrets } = splitSecrets(current.type, config);
          const changes: Record<string, unknown> = {
            name,
            config: json(visible),
            events: (config.events as string[]) ?? [],
            secrets: box.seal(secrets, current.id),
            updated_at: now,
          };
          let statusChange: string | null = null;
          if (input.status === 'active' && current.status !== 'active') {
            Object.assign(changes, { status: 'active', enabled_at: now, disabled_at: null, disabled_reason: null });
            statusChange = 'enabled';
          } else if (input.status === 'disabled' && current.status !== 'disabled') {
            Object.assign(changes, { status: 'disabled', disabled_at: now, disabled_reason: `disabled by ${context.actor.name}` });
            statusChange = 'disabled';
          }
          const updated = await trx.updateTable('integrations').set(changes).where('id', '=', current.id).returningAll().executeTakeFirstOrThrow();
          await writeAudit(trx, deps.clock, actorOf(context), {
            tenantId,
            action: statusChange ? `integration.${statusChange}` : 'integration.updated',
            targetType: 'integration',
            targetId: current.id,
            details: {
              name,
              type: current.type,
              ...(name !== current.name ? { previous_name: current.name } : {}),
              // Names of the fields sent, never their values (secrets among them).
              config_fields: input.config ? Object.keys(input.config).sort() : [],
              ...(statusChange ? { previous_status: current.status, status: updated.status, previous_disabled_reason: current.disabled_reason } : {}),
            },
          });
          return updated;
        });
        if (row) return present(row);
        if (round >= 3) throw conflict('the integration is being changed concurrently: try again');
      }
    },

    async remove(context: RequestContext, id: string, source?: 'alert_rule'): Promise<void> {
      const tenantId = context.scope.tenantId;
      await db.transaction().execute(async (trx) => {
        const current = await load(trx, tenantId, id, true);
        if (source && current.source !== source) throw notFound('alert rule not found');
        await trx.deleteFrom('integrations').where('id', '=', current.id).execute();
        await writeAudit(trx, deps.clock, actorOf(context), {
          tenantId,
          action: current.source === 'alert_rule' ? 'alert_rule.deleted' : 'integration.deleted',
          targetType: 'integration',
          targetId: current.id,
          details: { name: current.name, type: current.type },
        });
      });
    },

    async listRows(context: RequestContext, filter: IntegrationListFilter, page: PageRequest) {
      let query = db.selectFrom('integrations').where(inTenant(context.scope.tenantId));
      if (filter.source) query = query.where('source', '=', filter.source);
      const { n } = await query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      const rows = await query.selectAll().orderBy('created_at', 'asc').orderBy('id', 'asc').limit(page.perPage).offset(offsetOf(page)).execute();
      return { rows, total: Number(n) };
    },
  };
}

export type IntegrationService = ReturnType<typeof createIntegrationService>;
