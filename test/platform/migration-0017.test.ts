import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { loadMigrations } from '../../src/platform/db/migrator.js';
import { createTestDatabase, type TestDatabase } from '../harness/database.js';

// Migration 0017 moves the findings' texts out of their rows. Its backfill runs once, on databases
// that hold findings from before it: this builds such a database (the migrations before 0017 in a
// schema of their own, on one connection), adds findings, applies 0017 and reads them back.

let testDb: TestDatabase;
beforeAll(async () => {
  testDb = await createTestDatabase();
});
afterAll(() => testDb.dispose());

const TENANT = '00000000-0000-4000-8000-0000000000a1';
const WORKSPACE = '00000000-0000-4000-8000-0000000000b1';
const OTHER_WORKSPACE = '00000000-0000-4000-8000-0000000000b2';

describe('migration 0017: finding texts', () => {
  it("keeps every finding's text, stores each distinct text once per workspace, and the view reads as the table did", async () => {
    const migrations = loadMigrations();
    const before = migrations.filter((m) => m.version < '0017');
    const m17 = migrations.find((m) => m.version === '0017')!;
    const rows = await testDb.handle.db.connection().execute(async (conn) => {
      await sql`CREATE SCHEMA m17`.execute(conn);
      try {
        await sql`SET search_path TO m17`.execute(conn);
        for (const m of before) await sql.raw(m.sql).execute(conn);
        await sql`INSERT INTO accounts (id, name, created_at) VALUES (${TENANT}, 'a', now())`.execute(conn);
        await sql`INSERT INTO tenants (id, account_id, name, slug, plan, created_at, updated_at) VALUES (${TENANT}, ${TENANT}, 't', 't-m17', 'pro', now(), now())`.execute(conn);
        await sql`INSERT INTO workspaces (id, tenant_id, name, created_at, updated_at)
          VALUES (${WORKSPACE}, ${TENANT}, 'w1', now(), now()), (${OTHER_WORKSPACE}, ${TENANT}, 'w2', now(), now())`.execute(conn);
        const finding = (workspace: string, id: string, title: string, mappings: string) =>
          sql`
          INSERT INTO findings (tenant_id, workspace_id, id, rule_id, framework, control_id, framework_mappings, base_severity, severity, status,
            title, description, remediation, resource_id, resource_type, resource_name, region, group_id, first_seen, last_seen, created_at, updated_at)
          VALUES (${TENANT}, ${workspace}, ${id}, 'r1', 'soc2', 'CC6.1', ${mappings}::jsonb, 'HIGH', 'HIGH', 'open',
            ${title}, 'why it matters', 'fix it', ${id}, 'aws.s3.bucket', 'b', 'eu-west-1', 'g', now(), now(), now(), now())`.execute(conn);
        const mappings = '[{"framework":"nist-800-53","control_id":"AC-3"}]';
        await finding(WORKSPACE, 'f1', 'Bucket is public', mappings);
        await finding(WORKSPACE, 'f2', 'Bucket is public', mappings);
        await finding(WORKSPACE, 'f3', 'Bucket is public', '[]');
        await finding(WORKSPACE, 'f4', 'Bucket is unencrypted', mappings);
        await finding(OTHER_WORKSPACE, 'f5', 'Bucket is public', mappings);
        await sql.raw(m17.sql).execute(conn);
        const read = await sql<{ id: string; workspace_id: string; title: string; description: string; remediation: string; framework_mappings: unknown; severity_rank: number }>`
          SELECT id, workspace_id, title, description, remediation, framework_mappings, severity_rank FROM findings ORDER BY id`.execute(conn);
        const texts = await sql<{ workspace_id: string; n: number }>`
          SELECT workspace_id, count(*)::int AS n FROM finding_texts GROUP BY workspace_id ORDER BY n DESC`.execute(conn);
        const columns = await sql<{ column_name: string }>`
          SELECT column_name FROM information_schema.columns WHERE table_schema = 'm17' AND table_name = 'finding_rows'
            AND column_name IN ('title', 'description', 'remediation', 'framework_mappings')`.execute(conn);
        return { read: read.rows, texts: texts.rows, textColumns: columns.rows };
      } finally {
        await sql`RESET search_path`.execute(conn);
        await sql`DROP SCHEMA m17 CASCADE`.execute(conn);
      }
    });
    expect(rows.read.map((r) => [r.id, r.title, r.description, r.remediation, r.framework_mappings, r.severity_rank])).toEqual([
      ['f1', 'Bucket is public', 'why it matters', 'fix it', [{ framework: 'nist-800-53', control_id: 'AC-3' }], 4],
      ['f2', 'Bucket is public', 'why it matters', 'fix it', [{ framework: 'nist-800-53', control_id: 'AC-3' }], 4],
      ['f3', 'Bucket is public', 'why it matters', 'fix it', [], 4],
      ['f4', 'Bucket is unencrypted', 'why it matters', 'fix it', [{ framework: 'nist-800-53', control_id: 'AC-3' }], 4],
      ['f5', 'Bucket is public', 'why it matters', 'fix it', [{ framework: 'nist-800-53', control_id: 'AC-3' }], 4],
    ]);
    // f1 and f2 share a text; f3 (other mappings) and f4 (other title) have their own; f5 is in another workspace.
    expect(rows.texts).toEqual([
      { workspace_id: WORKSPACE, n: 3 },
      { workspace_id: OTHER_WORKSPACE, n: 1 },
    ]);
    expect(rows.textColumns).toEqual([]);
  });
});
