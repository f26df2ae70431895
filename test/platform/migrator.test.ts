import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { loadMigrations, migrate, type Migration } from '../../src/platform/db/migrator.js';
import { createTestDatabase, type TestDatabase } from '../harness/database.js';

let testDb: TestDatabase;
beforeAll(async () => {
  testDb = await createTestDatabase();
});
afterAll(() => testDb.dispose());

function extra(version: string, name: string, text: string): Migration {
  return { version, name, sql: text, checksum: `${version}-${text.length}-${name}` };
}

async function tableExists(name: string): Promise<boolean> {
  const result = await sql<{ exists: boolean }>`SELECT to_regclass(${name}) IS NOT NULL AS exists`.execute(testDb.handle.db);
  return result.rows[0]!.exists;
}

describe('migrations', () => {
  it('records every applied migration and applies nothing twice', async () => {
    const rows = await testDb.handle.db.selectFrom('schema_migrations').select('version').orderBy('version').execute();
    expect(rows.map((r) => r.version)).toEqual(loadMigrations().map((m) => m.version));
    expect(await migrate(testDb.handle.db)).toEqual({ applied: [] });
  });

  it('rolls a failing migration back whole, leaving the schema unchanged', async () => {
    const broken = extra('9001', 'broken', 'CREATE TABLE half_done (id int); INSERT INTO no_such_table VALUES (1);');
    await expect(migrate(testDb.handle.db, [...loadMigrations(), broken])).rejects.toThrow(/migration 9001_broken failed: .*no_such_table/);
    expect(await tableExists('half_done')).toBe(false);
    const recorded = await testDb.handle.db.selectFrom('schema_migrations').select('version').where('version', '=', '9001').execute();
    expect(recorded).toEqual([]);
  });

  it('applies new migrations in order', async () => {
    const a = extra('9002', 'add_a', 'CREATE TABLE mig_a (id int);');
    const b = extra('9003', 'add_b', 'CREATE TABLE mig_b (a int);');
    expect(await migrate(testDb.handle.db, [...loadMigrations(), a, b])).toEqual({ applied: ['9002_add_a', '9003_add_b'] });
    expect(await tableExists('mig_b')).toBe(true);
  });

  it('refuses to run when an applied migration was edited', async () => {
    const edited = extra('9002', 'add_a', 'CREATE TABLE mig_a (id bigint);');
    await expect(migrate(testDb.handle.db, [...loadMigrations(), edited])).rejects.toThrow('migration 9002_add_a was changed after it was applied');
  });
});
