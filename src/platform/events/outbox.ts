import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database } from '../db/schema.js';
import { json } from '../db/schema.js';
import { unnestInsert } from '../db/unnest-insert.js';
import type { Clock } from '../clock.js';

/** The channel that announces new outbox rows (payload: the tenant id); sent on commit. */
export const EVENTS_CHANNEL = 'cg_events';

export type OutboxEvent = Selectable<Database['outbox_events']>;

export interface NewEvent {
  tenantId: string;
  workspaceId: string | null;
  type: string;
  data: Record<string, unknown>;
}

/**
 * Writes domain events to the outbox in the caller's transaction: an event exists exactly when the
 * change that caused it committed. Webhook deliveries, the SSE stream and e-mail read from here.
 */
export async function emitEvents(trx: Kysely<Database>, clock: Clock, events: NewEvent[]): Promise<void> {
  if (events.length === 0) return;
  const now = clock.now();
  // One array parameter per column (see unnestInsert); chunked so a statement stays bounded.
  for (let i = 0; i < events.length; i += 5000) {
    await unnestInsert(trx, {
      table: 'outbox_events',
      columns: { id: 'uuid', tenant_id: 'uuid', workspace_id: 'uuid', type: 'text', data: 'jsonb' },
      constants: { created_at: { type: 'timestamptz', value: now } },
      rows: events.slice(i, i + 5000).map((e) => ({ id: randomUUID(), tenant_id: e.tenantId, workspace_id: e.workspaceId, type: e.type, data: json(e.data) })),
    });
  }
  await announceEvents(trx, [...new Set(events.map((e) => e.tenantId))]);
}

/**
 * Tells listeners (the SSE stream, the dispatchers of every process) that the tenants have new
 * outbox rows; the notification is sent when the transaction commits. For writers that insert
 * outbox rows in SQL of their own (the audit builds finding.created events from the rows it inserts).
 */
export async function announceEvents(trx: Kysely<Database>, tenantIds: string[]): Promise<void> {
  for (const tenant of tenantIds) await sql`SELECT pg_notify(${EVENTS_CHANNEL}, ${tenant})`.execute(trx);
}

export function emitEvent(trx: Kysely<Database>, clock: Clock, event: NewEvent): Promise<void> {
  return emitEvents(trx, clock, [event]);
}
