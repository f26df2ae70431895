import { openDatabase } from '../platform/db/database.js';
import { migrate } from '../platform/db/migrator.js';
import { VERSION } from '../version.js';
import { parseOptions } from './args.js';
import { chooseTarget, CliRefusal, runLocalOrRemote, type Remote } from './remote.js';

export const migrateHelp = `Usage: controlgraph migrate [--server URL]

Applies the pending database migrations to DATABASE_URL and exits. The service also migrates at
start; this command lets a deployment migrate once before starting many processes.

Beside a running service on the same embedded (pglite://) database, or with --server URL (or
CONTROLGRAPH_URL), nothing is opened: the service applied its migrations when it started. When it
runs this CLI's version the command says so and exits 0; when it runs another version it exits 2
(restart the service with the new version: it migrates at start).`;

export async function migrateCommand(args: string[] = []): Promise<void> {
  const { values, positional } = parseOptions(args, { values: ['server'] });
  if (positional.length) throw new CliRefusal(`migrate takes no arguments\n\n${migrateHelp}`);
  const target = await chooseTarget(values);
  const message = await runLocalOrRemote(
    target,
    async (config) => {
      const database = await openDatabase(config.databaseUrl, { owner: 'controlgraph migrate' });
      try {
        const { applied } = await migrate(database.db);
        return applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date';
      } finally {
        await database.close();
      }
    },
    (remote) => migratedByService(remote),
  );
  console.log(message);
}

/** A running service migrated its database at start; say so, or why its version does not fit. */
async function migratedByService(remote: Remote): Promise<string> {
  let version: string;
  try {
    const response = await fetch(`${remote.url}/api/v1/status`, { headers: { accept: 'application/json' } });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    version = ((await response.json()) as { version: string }).version;
  } catch (error) {
    throw new CliRefusal(`migrate: ${remote.reason}, but its API at ${remote.url} does not answer (${(error as Error).message}): stop it, then run migrate again`);
  }
  const who = remote.holder ? `process ${remote.holder.pid} (${remote.holder.command}, ${remote.url})` : `the service at ${remote.url}`;
  if (version !== VERSION) {
    throw new CliRefusal(
      `migrate: ${who} runs version ${version}, this CLI is ${VERSION}: nothing was migrated. Restart the service with version ${VERSION} ` +
        `(it applies its migrations at start)${remote.holder ? ', or stop it and run migrate again' : ''}.`,
    );
  }
  return `nothing to do: ${who} applied the migrations of version ${version} when it started, and migrates again at every start`;
}
