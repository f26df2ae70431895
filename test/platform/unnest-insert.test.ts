import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, type TenantFixture } from '../harness/identity.js';
import { emitEvents } from '../../src/platform/events/outbox.js';
import { unnestInsert } from '../../src/platform/db/unnest-insert.js';

/** The array-per-column insert behind the outbox and audit findings: values must arrive unchanged. */
let t: TestApp;
let tenant: TenantFixture;
beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
});
afterAll(() => t.close());

const awkward = ['plain', 'a "quoted", {braced} value', 'back\\slash', 'NULL', '', 'ünïcødé ✓', 'line\nbreak', "it's"];

describe('unnestInsert', () => {
  it('round-trips text and jsonb values that need escaping in an array literal, and nulls', async () => {
    const db = t.db.handle.db;
    const events = awkward.map((text, i) => ({
      tenantId: tenant.id,
      workspaceId: i % 2 ? null : tenant.defaultWorkspaceId,
      type: `test.${i}`,
      data: { text, nested: { list: [text, null, 1.5] } },
    }));
    await db.transaction().execute((trx) => emitEvents(trx, { now: () => new Date('2026-01-02T03:04:05.678Z') }, events));
    const rows = await db.selectFrom('outbox_events').selectAll().where('tenant_id', '=', tenant.id).where('type', 'like', 'test.%').orderBy('seq').execute();
    expect(rows.map((r) => r.type)).toEqual(events.map((e) => e.type));
    expect(rows.map((r) => r.workspace_id)).toEqual(events.map((e) => e.workspaceId));
    expect(rows.map((r) => r.data)).toEqual(events.map((e) => e.data));
    expect(new Date(rows[0]!.created_at).toISOString()).toBe('2026-01-02T03:04:05.678Z');
  });

  it('inserts nothing for no rows, and fails the statement as a whole on a bad row', async () => {
    const db = t.db.handle.db;
    await unnestInsert(db, { table: 'outbox_events', columns: { id: 'uuid' }, rows: [] });
    const id = randomUUID();
    const insert = unnestInsert(db, {
      table: 'outbox_events',
      columns: { id: 'uuid', tenant_id: 'uuid', type: 'text', data: 'jsonb' },
      constants: { created_at: { type: 'timestamptz', value: new Date() } },
      rows: [
        { id, tenant_id: tenant.id, type: 'ok', data: {} },
        { id: randomUUID(), tenant_id: tenant.id, type: null, data: {} },
      ],
    });
    await expect(insert).rejects.toThrow();
    expect(await db.selectFrom('outbox_events').select('id').where('id', '=', id).execute()).toEqual([]);
  });

  it('with onConflictDoNothing skips the rows that conflict and inserts the others', async () => {
    const db = t.db.handle.db;
    const kept = randomUUID();
    const added = randomUUID();
    const row = (id: string, type: string) => ({ id, tenant_id: tenant.id, type, data: {} });
    const insert = (rows: Array<Record<string, unknown>>) =>
      unnestInsert(db, {
        table: 'outbox_events',
        columns: { id: 'uuid', tenant_id: 'uuid', type: 'text', data: 'jsonb' },
        constants: { created_at: { type: 'timestamptz', value: new Date() } },
        rows,
        onConflictDoNothing: ['id'],
      });
    await insert([row(kept, 'first')]);
    await insert([row(kept, 'second'), row(added, 'third')]);
    const rows = await db.selectFrom('outbox_events').select(['id', 'type']).where('id', 'in', [kept, added]).orderBy('seq').execute();
    expect(rows).toEqual([
      { id: kept, type: 'first' },
      { id: added, type: 'third' },
    ]);
  });
});
