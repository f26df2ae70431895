import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { openDatabase } from '../../src/platform/db/database.js';
import { migrate, migrationsDigest } from '../../src/platform/db/migrator.js';
import { projectPath } from '../../src/platform/paths.js';

/**
 * Migrated database templates, built once per migration set: a new PGlite costs seconds of initdb,
 * a copied data directory a fraction of that; PostgreSQL copies a template database.
 */
export const TEMPLATE_CACHE = projectPath('.cache', 'test');

export async function ensurePgliteTemplate(): Promise<string> {
  const dir = join(TEMPLATE_CACHE, `pglite-${migrationsDigest()}`);
  if (existsSync(dir)) return dir;
  mkdirSync(TEMPLATE_CACHE, { recursive: true });
  const building = `${dir}.${process.pid}.building`;
  rmSync(building, { recursive: true, force: true });
  const handle = await openDatabase(`pglite://${building}`);
  await migrate(handle.db);
  await handle.close();
  try {
    renameSync(building, dir);
  } catch {
    // Another runner finished first; its template is as good as ours.
    rmSync(building, { recursive: true, force: true });
  }
  return dir;
}

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

export async function ensurePostgresTemplate(adminUrl: string): Promise<string> {
  const name = `cg_tpl_${migrationsDigest()}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    // Leftovers of interrupted runs: test databases and templates of other migration sets older than a
    // day. Newer ones may belong to a run going on beside this one (a clean clone's CI next to a
    // checkout with a new migration): dropping its template failed every one of its PostgreSQL files.
    const databases = await admin.query<{ datname: string; note: string | null }>(
      `SELECT datname, shobj_description(oid, 'pg_database') AS note FROM pg_database
       WHERE datname LIKE 'cg\\_t\\_%' OR (datname LIKE 'cg\\_tpl\\_%' AND datname <> $1)`,
      [name],
    );
    const stale = databases.rows.filter(({ datname, note }) => {
      // A template another run is building right now (its builder drops a leftover one first).
      if (datname.endsWith('_building')) return false;
      const created = /^cg_t_([0-9a-z]+)_/.exec(datname);
      const built = /^built (\d+)$/.exec(note ?? '');
      const at = created ? parseInt(created[1]!, 36) : built ? Number(built[1]) : 0;
      return Date.now() - at > 86_400_000;
    });
    for (const { datname } of stale) {
      await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`).catch(() => undefined);
    }
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount) return name;
    const building = `${name}_building`;
    await admin.query(`DROP DATABASE IF EXISTS "${building}" WITH (FORCE)`);
    await admin.query(`CREATE DATABASE "${building}"`);
    const handle = await openDatabase(withDatabase(adminUrl, building));
    await migrate(handle.db);
    await handle.close();
    await admin.query(`COMMENT ON DATABASE "${building}" IS 'built ${Date.now()}'`);
    await admin.query(`ALTER DATABASE "${building}" RENAME TO "${name}"`).catch(async (error: Error) => {
      await admin.query(`DROP DATABASE IF EXISTS "${building}" WITH (FORCE)`);
      if (!/already exists/.test(error.message)) throw error;
    });
    return name;
  } finally {
    await admin.end();
  }
}
