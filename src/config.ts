import { parseDuration } from './platform/duration.js';

/** The service's configuration, parsed once from the environment and passed down (never read at import time). */
export interface Config {
  port: number;
  host: string;
  databaseUrl: string;
  artifactStore: string;
  defaultPlan: 'free' | 'pro' | 'enterprise';
  adminUsername: string | null;
  adminPassword: string | null;
  secret: string | null;
  exportRetentionMs: number;
  webhookRetryScheduleSeconds: number[];
  webhookAllowHosts: string[];
  accessTokenTtlMs: number;
  refreshTokenTtlMs: number;
  trustedProxies: string[];
  redisUrl: string | null;
  logLevel: string;
  /** Which parts this process plays: api, worker, scheduler (all three by default). */
  roles: Set<'api' | 'worker' | 'scheduler'>;
  workerConcurrency: number;
  /** How often an idle worker looks for jobs when no notification arrives. */
  workerPollMs: number;
  bodyLimitBytes: number;
  vulndbSources: string[];
  vulndbIntervalMs: number;
  /** Load the shipped KEV/EPSS snapshot into an empty store at start (off for air-gapped stores fed by the CLI). */
  vulndbSeed: boolean;
  /** Per-tenant rate limits; off only when an upstream gateway already limits. */
  rateLimitsEnabled: boolean;
}

type Env = Record<string, string | undefined>;

const PLANS = ['free', 'pro', 'enterprise'] as const;
const ROLES = ['api', 'worker', 'scheduler'] as const;

function list(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

function integer(env: Env, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name}: "${raw}" is not an integer >= ${min}`);
  return value;
}

function onOff(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (['on', 'true', '1'].includes(raw)) return true;
  if (['off', 'false', '0'].includes(raw)) return false;
  throw new Error(`${name}: "${raw}" must be on or off`);
}

export function parseRoles(text: string | undefined): Config['roles'] {
  const names = list(text);
  if (names.length === 0) return new Set(ROLES);
  for (const name of names) {
    if (!(ROLES as readonly string[]).includes(name)) throw new Error(`role "${name}" must be one of ${ROLES.join(', ')}`);
  }
  return new Set(names as Array<(typeof ROLES)[number]>);
}

export function loadConfig(env: Env = process.env): Config {
  const plan = env.CONTROLGRAPH_DEFAULT_PLAN ?? 'enterprise';
  if (!(PLANS as readonly string[]).includes(plan)) {
    throw new Error(`CONTROLGRAPH_DEFAULT_PLAN: "${plan}" must be one of ${PLANS.join(', ')}`);
  }
  const schedule = list(env.CONTROLGRAPH_WEBHOOK_RETRY_SCHEDULE ?? '0,30,300,1800,7200').map((s) => {
    const n = Number(s);
    if (!Number.isFinite(n) || n < 0) throw new Error(`CONTROLGRAPH_WEBHOOK_RETRY_SCHEDULE: "${s}" is not a number of seconds`);
    return n;
  });
  return {
    port: integer(env, 'PORT', 8080),
    host: env.HOST || '127.0.0.1',
    databaseUrl: env.DATABASE_URL || 'pglite://./data/db',
    artifactStore: env.ARTIFACT_STORE || 'file://./data/artifacts',
    defaultPlan: plan as Config['defaultPlan'],
    adminUsername: env.CONTROLGRAPH_ADMIN_USERNAME || null,
    adminPassword: env.CONTROLGRAPH_ADMIN_PASSWORD || null,
    secret: env.CONTROLGRAPH_SECRET || null,
    exportRetentionMs: parseDuration(env.CONTROLGRAPH_EXPORT_RETENTION ?? '7d', 'CONTROLGRAPH_EXPORT_RETENTION'),
    webhookRetryScheduleSeconds: schedule,
    webhookAllowHosts: list(env.CONTROLGRAPH_WEBHOOK_ALLOW_HOSTS).map((h) => h.toLowerCase()),
    accessTokenTtlMs: parseDuration(env.CONTROLGRAPH_ACCESS_TOKEN_TTL ?? '1h', 'CONTROLGRAPH_ACCESS_TOKEN_TTL'),
    refreshTokenTtlMs: parseDuration(env.CONTROLGRAPH_REFRESH_TOKEN_TTL ?? '7d', 'CONTROLGRAPH_REFRESH_TOKEN_TTL'),
    trustedProxies: list(env.CONTROLGRAPH_TRUSTED_PROXIES),
    redisUrl: env.REDIS_URL || null,
    logLevel: env.LOG_LEVEL || 'info',
    roles: parseRoles(env.CONTROLGRAPH_ROLES),
    workerConcurrency: integer(env, 'CONTROLGRAPH_WORKER_CONCURRENCY', 4, 1),
    workerPollMs: integer(env, 'CONTROLGRAPH_WORKER_POLL_MS', 1000, 10),
    bodyLimitBytes: integer(env, 'CONTROLGRAPH_BODY_LIMIT_BYTES', 10 * 1024 * 1024, 1024),
    vulndbSources: list(env.CONTROLGRAPH_VULNDB_SOURCES),
    vulndbIntervalMs: parseDuration(env.CONTROLGRAPH_VULNDB_INTERVAL ?? '6h', 'CONTROLGRAPH_VULNDB_INTERVAL'),
    vulndbSeed: onOff(env, 'CONTROLGRAPH_VULNDB_SEED', true),
    rateLimitsEnabled: onOff(env, 'CONTROLGRAPH_RATE_LIMITS', true),
  };
}
