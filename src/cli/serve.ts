import { loadConfig, parseRoles } from '../config.js';
import { ALLOW_HOSTS_SETTING, DEPRECATED_ALLOW_HOSTS_SETTINGS } from '../platform/outbound/allow-list.js';
import { startService } from '../runtime.js';

export const serveHelp = `Usage: controlgraph serve [--role api|worker|scheduler[,...]]

Starts the service. Without --role the process plays all three parts (the embedded default):
the HTTP API, the background workers and the schedulers. Configuration comes from the
environment (see README.md): PORT, HOST, DATABASE_URL, ARTIFACT_STORE, CONTROLGRAPH_*.`;

export async function serve(args: string[]): Promise<void> {
  const env = { ...process.env };
  const roleIndex = args.indexOf('--role');
  if (roleIndex >= 0) {
    const value = args[roleIndex + 1];
    if (!value) throw new Error('--role needs a value: api, worker or scheduler');
    parseRoles(value);
    env.CONTROLGRAPH_ROLES = value;
  }
  const config = loadConfig(env);
  const service = await startService(config, { owner: 'controlgraph serve' });
  const { log } = service.deps;
  log.info({ address: service.address, roles: [...config.roles], database: service.deps.database.kind }, 'controlgraph started');
  const deprecated = DEPRECATED_ALLOW_HOSTS_SETTINGS.filter((name) => env[name]);
  if (deprecated.length) log.warn({ deprecated }, `deprecated settings: move their entries to ${ALLOW_HOSTS_SETTING} (they are still read)`);
  const shutdown = (signal: string) => {
    log.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 30_000);
    force.unref();
    service.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}
