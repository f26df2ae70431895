import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { json } from '../db/schema.js';
import type { RequestContext } from '../auth/actor.js';
import type { Clock } from '../clock.js';
import './tables.js';

export interface AuditEntry {
  tenantId: string;
  workspaceId?: string | null;
  action: string;
  targetType?: string;
  targetId?: string;
  details?: Record<string, unknown>;
}

export interface AuditActor {
  /** respondent_link: an outside respondent acting through an assessment link (id: the link's). */
  type: 'user' | 'api_key' | 'system' | 'respondent_link';
  id: string | null;
  name: string;
  ip?: string | null;
  requestId?: string | null;
}

export function actorOf(context: RequestContext): AuditActor {
  return {
    type: context.actor.type,
    id: context.actor.id,
    name: context.actor.name,
    ip: context.ip,
    requestId: context.requestId,
  };
}

export const SYSTEM_ACTOR: AuditActor = { type: 'system', id: null, name: 'system' };

/**
 * Records a security-relevant change. Call it with the transaction of the change itself, so the
 * change and its audit entry commit (or fail) together.
 */
export async function writeAudit(trx: Kysely<Database>, clock: Clock, actor: AuditActor, entry: AuditEntry): Promise<void> {
  await trx
    .insertInto('audit_logs')
    .values({
      id: randomUUID(),
      tenant_id: entry.tenantId,
      workspace_id: entry.workspaceId ?? null,
      actor_type: actor.type,
      actor_id: actor.id,
      actor_name: actor.name,
      action: entry.action,
      target_type: entry.targetType ?? null,
      target_id: entry.targetId ?? null,
      details: json(entry.details ?? {}),
      ip: actor.ip ?? null,
      request_id: actor.requestId ?? null,
      created_at: clock.now(),
    })
    .execute();
}

/** An audit entry of a tenant-wide change (rules, settings, integrations) by the request's actor: the workspace is the entry's own, or none. */
export function auditInTenant(trx: Kysely<Database>, clock: Clock, context: RequestContext, entry: Omit<AuditEntry, 'tenantId'>): Promise<void> {
  return writeAudit(trx, clock, actorOf(context), { tenantId: context.scope.tenantId, ...entry });
}

/** `writeAudit` for the common case: a request's change inside its own tenant and workspace. */
export function auditInScope(trx: Kysely<Database>, clock: Clock, context: RequestContext, entry: Omit<AuditEntry, 'tenantId' | 'workspaceId'>): Promise<void> {
  return writeAudit(trx, clock, actorOf(context), { tenantId: context.scope.tenantId, workspaceId: context.scope.workspaceId, ...entry });
}
