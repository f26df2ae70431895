import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';
import { projectPath } from '../paths.js';

export interface Migration {
  version: string;
  name: string;
  sql: string;
  checksum: string;
}

export const MIGRATIONS_DIR = projectPath('migrations');

/** Migrations are `NNNN_name.sql` files applied in order; each runs in its own transaction. */
export function loadMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((file) => /^\d{4}_[a-z0-9_]+\.sql$/.test(file))
    .sort()
    .map((file) => {
      const text = readFileSync(join(dir, file), 'utf8');
      return {
        version: file.slice(0, 4),
        name: file.slice(5, -4),
        sql: text,
        checksum: createHash('sha256').update(text).digest('hex'),
      };
    });
}

/** Digest of the whole migration set: test harnesses key their migrated templates on it. */
export function migrationsDigest(migrations = loadMigrations()): string {
  const hash = createHash('sha256');
  for (const m of migrations) hash.update(m.version + m.checksum);
  return hash.digest('hex').slice(0, 16);
}

// Arbitrary constant: serialises migrators of several processes starting at once.
const MIGRATION_LOCK_ID = 727_001;

export interface MigrateResult {
  applied: string[];
}

export async function migrate(db: Kysely<Database>, migrations = loadMigrations()): Promise<MigrateResult> {
  return db.connection().execute(async (conn) => {
    await sql`SELECT pg_advisory_lock(${MIGRATION_LOCK_ID})`.execute(conn);
    try {
      await sql`CREATE TABLE IF NOT EXISTS schema_migrations (
        version text PRIMARY KEY,
        name text NOT NULL,
        checksum text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`.execute(conn);
      const done = new Map((await conn.selectFrom('schema_migrations').select(['version', 'checksum', 'name']).execute()).map((r) => [r.version, r]));
      const applied: string[] = [];
      for (const migration of migrations) {
        const previous = done.get(migration.version);
        if (previous) {
          if (previous.checksum !== migration.checksum) {
            throw new Error(`migration ${migration.version}_${migration.name} was changed after it was applied`);
          }
          continue;
        }
        // A failing migration rolls back whole: the schema stays as it was before it.
        await conn
          .transaction()
          .execute(async (trx) => {
            await sql.raw(migration.sql).execute(trx);
            await trx.insertInto('schema_migrations').values({ version: migration.version, name: migration.name, checksum: migration.checksum, applied_at: new Date() }).execute();
          })
          .catch((error: unknown) => {
            const reason = error instanceof Error ? error.message : String(error);
            throw new Error(`migration ${migration.version}_${migration.name} failed: ${reason}`, { cause: error });
          });
        applied.push(`${migration.version}_${migration.name}`);
      }
      return { applied };
    } finally {
      await sql`SELECT pg_advisory_unlock(${MIGRATION_LOCK_ID})`.execute(conn);
    }
  });
}
