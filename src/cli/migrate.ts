import { loadConfig } from '../config.js';
import { openDatabase } from '../platform/db/database.js';
import { migrate } from '../platform/db/migrator.js';

export const migrateHelp = `Usage: controlgraph migrate

Applies the pending database migrations to DATABASE_URL and exits. The service also migrates at
start; this command lets a deployment migrate once before starting many processes.`;

export async function migrateCommand(): Promise<void> {
  const config = loadConfig();
  const database = await openDatabase(config.databaseUrl);
  try {
    const { applied } = await migrate(database.db);
    console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
  } finally {
    await database.close();
  }
}
