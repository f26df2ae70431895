import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMigrations } from '../../src/platform/db/migrator.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, type TenantFixture } from '../harness/identity.js';
import { api, publish } from './helpers.js';

/**
 * A question's control_mappings come back as the client wrote them (the spec's NIST-PE-3 stays
 * NIST-PE-3); the normalised ids are in control_ids and drive everything else (framework filter,
 * attested controls). A question read can be written back; a changed control_ids is refused.
 * Migration 0022 gives old rows (normalised mappings only) their control_ids.
 */
let t: TestApp;
let tenant: TenantFixture;

beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
});
afterAll(() => t.close());

const admin = () => tenant.admin.token;
const url = (path = '') => `${api(tenant.id)}/questionnaires${path}`;
const AS_SENT = ['NIST-PE-3', 'nist-800-53:PE-3', 'NIST-PE-1'];

async function create(mappings: string[]) {
  const payload = { title: 'Mappings', questions: [{ id: 'doors', text: 'Are the doors locked?', type: 'yes_no', control_mappings: mappings }] };
  return (await call(t.app, admin(), { method: 'POST', url: url(), payload, expect: 201 })).json();
}

describe('control_mappings as written, control_ids normalised', () => {
  it('returns the mappings as sent and the normalised ids, once each, in control_ids', async () => {
    const q = await create(AS_SENT);
    expect(q.questions[0]).toMatchObject({ control_mappings: AS_SENT, control_ids: ['nist-800-53:PE-3', 'nist-800-53:PE-1'] });
    expect(q.frameworks).toEqual(['nist-800-53']);
    const read = (await call(t.app, admin(), { url: url(`/${q.id}`), expect: 200 })).json();
    expect(read.questions[0]).toMatchObject({ control_mappings: AS_SENT, control_ids: ['nist-800-53:PE-3', 'nist-800-53:PE-1'] });
    // The framework filter and the attested controls work on the normalised ids.
    const listed = (await call(t.app, admin(), { url: url('?framework=nist-800-53&per_page=100'), expect: 200 })).json();
    expect(listed.items.map((x: { id: string }) => x.id)).toContain(q.id);
    await publish(t, admin(), tenant.id, q.id);
    const attestations = (await call(t.app, admin(), { url: `${api(tenant.id)}/controls/attestations?framework=nist-800-53`, expect: 200 })).json();
    expect(attestations.items.map((c: { control_id: string }) => c.control_id).sort()).toEqual(['PE-1', 'PE-3']);
  });

  it('a question read can be written back; a control_ids that differs from the mappings is 400 naming it', async () => {
    const q = await create(['NIST-PE-3']);
    const question = q.questions[0];
    const same = await call(t.app, admin(), { method: 'PUT', url: url(`/${q.id}/questions/doors`), payload: question, expect: 200 });
    expect(same.json()).toEqual(question);
    const changed = await call(t.app, admin(), { method: 'PUT', url: url(`/${q.id}/questions/doors`), payload: { ...question, control_ids: ['nist-800-53:AC-1'] } });
    expect(changed.statusCode).toBe(400);
    expect(changed.json().error).toMatchObject({
      code: 'BAD_REQUEST',
      message: 'question "doors": control_ids is read-only (the normalised control_mappings, here ["nist-800-53:PE-3"]): change control_mappings instead',
      details: { field: 'control_ids' },
    });
  });

  it('migration 0022 gives questions stored before it their control_ids (the normalised mappings) and leaves newer ones alone', async () => {
    const old = await create(['nist-800-53:PE-2']);
    const recent = await create(['NIST-PE-6']);
    const db = t.deps.database.db;
    // A row as it was stored before the migration: normalised mappings, no control_ids.
    await sql`UPDATE questionnaires SET questions = (SELECT jsonb_agg(q - 'control_ids') FROM jsonb_array_elements(questions) q) WHERE id = ${old.id}`.execute(db);
    const stored = await db.selectFrom('questionnaires').select('questions').where('id', '=', old.id).executeTakeFirstOrThrow();
    expect(stored.questions[0]).not.toHaveProperty('control_ids');
    const migration = loadMigrations().find((m) => m.name === 'question_control_ids')!;
    await sql.raw(migration.sql).execute(db);
    const migrated = (await call(t.app, admin(), { url: url(`/${old.id}`), expect: 200 })).json().questions[0];
    expect(migrated).toMatchObject({ control_mappings: ['nist-800-53:PE-2'], control_ids: ['nist-800-53:PE-2'] });
    const untouched = (await call(t.app, admin(), { url: url(`/${recent.id}`), expect: 200 })).json().questions[0];
    expect(untouched).toMatchObject({ control_mappings: ['NIST-PE-6'], control_ids: ['nist-800-53:PE-6'] });
  });
});
