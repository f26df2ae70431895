import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/platform/db/database.js';
import { withDatabase } from './templates.js';

export interface TestDatabase {
  kind: 'pglite' | 'postgres';
  /** DATABASE_URL of this test file's own database. */
  url: string;
  /** Opens another handle (PostgreSQL only: a second process's view of the same database). */
  openAnother(): Promise<DatabaseHandle>;
  handle: DatabaseHandle;
  dispose(): Promise<void>;
}

export const dbKind = (): 'pglite' | 'postgres' => inject('dbKind');

/** A fresh, migrated database for one test file, on the backend of the current test project. */
export async function createTestDatabase(): Promise<TestDatabase> {
  return dbKind() === 'postgres' ? createPostgres() : createPglite();
}

/**
 * A fresh, migrated database that this process does not open, for a child process to use (PGlite
 * allows one process per data directory).
 */
export async function createDatabaseForChild(): Promise<{ url: string; dispose(): Promise<void> }> {
  if (dbKind() === 'postgres') {
    const db = await createPostgres();
    await db.handle.close();
    return db;
  }
  const dir = copyPgliteTemplate();
  return { url: `pglite://${dir}`, dispose: async () => rmSync(dir, { recursive: true, force: true }) };
}

function copyPgliteTemplate(): string {
  const dir = mkdtempSync(join(tmpdir(), 'cg-test-'));
  cpSync(inject('pgliteTemplate'), dir, { recursive: true });
  return dir;
}

async function createPglite(): Promise<TestDatabase> {
  const dir = copyPgliteTemplate();
  const url = `pglite://${dir}`;
  const handle = await openDatabase(url);
  return {
    kind: 'pglite',
    url,
    handle,
    openAnother: () => Promise.reject(new Error('PGlite has one connection: share the handle')),
    async dispose() {
      await handle.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function createPostgres(): Promise<TestDatabase> {
  const adminUrl = process.env.TEST_DATABASE_URL!;
  // The creation time in the name lets a later run tell leftovers from databases in use (templates.ts).
  const name = `cg_t_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await admin.query(`CREATE DATABASE "${name}" TEMPLATE "${inject('postgresTemplate')}"`);
        break;
      } catch (error) {
        // Two files copying the template at the same instant can collide; try again shortly.
        if (attempt >= 10 || !/being accessed by other users/.test((error as Error).message)) throw error;
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
      }
    }
  } finally {
    await admin.end();
  }
  const url = withDatabase(adminUrl, name);
  const handle = await openDatabase(url, { poolSize: 5 });
  const others: DatabaseHandle[] = [];
  return {
    kind: 'postgres',
    url,
    handle,
    async openAnother() {
      const other = await openDatabase(url, { poolSize: 5 });
      others.push(other);
      return other;
    },
    async dispose() {
      await Promise.all([handle, ...others].map((h) => h.close()));
      const cleanup = new pg.Client({ connectionString: adminUrl });
      await cleanup.connect();
      await cleanup.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).finally(() => cleanup.end());
    },
  };
}
