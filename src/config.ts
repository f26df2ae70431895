import { parseDuration } from './platform/duration.js';
import { allowHostsFromEnv } from './platform/outbound/allow-list.js';
import type { OutboundLookup } from './platform/outbound/policy.js';

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
  /** Targets of outbound requests that may be private and use http:// (CONTROLGRAPH_OUTBOUND_ALLOW_HOSTS and its deprecated aliases). */
  outboundAllowHosts: string[];
  /** The DNS lookup of outbound requests; set by tests only (no real DNS there), the system resolver otherwise. */
  outboundLookup?: OutboundLookup;
  accessTokenTtlMs: number;
  refreshTokenTtlMs: number;
  /** How long an invitation into a tenant can be accepted. */
  invitationTtlMs: number;
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
  /** Largest upload POST /api/v1/vulndb/imports takes (all its files together); 413 above. */
  vulndbUploadMaxBytes: number;
  /** What decompression (gzip, zip, tar) may produce in one vulnerability import; refused above (archive bombs). */
  vulndbUncompressedMaxBytes: number;
  /** Entries one vulnerability archive (zip or tar) may hold; refused above. */
  vulndbArchiveMaxEntries: number;
  /**
   * The console's address as people outside reach it (CONTROLGRAPH_PUBLIC_URL), e.g. https://grc.example.com:
   * links the service hands out (outside respondents' links, mailed or shown to copy) start with it,
   * never with a request's Host header, which a client chooses. Null when unset.
   */
  publicUrl: string | null;
  /** Per-tenant rate limits; off only when an upstream gateway already limits. */
  rateLimitsEnabled: boolean;
  /** Time budget of one rule evaluation (one rule on one resource) in an audit, ms. */
  ruleBudgetMs: number;
  /**
   * Tenants (ids or slugs) whose discovery may read with the service's own cloud credentials; every
   * other tenant reads only through a cloud connection it supplied (docs/exports.md).
   */
  discoveryOwnCredentialsTenants: string[];
  /** The service's AWS principal (account id or ARN), named in the trust policy shown for role connections. */
  discoveryAwsPrincipal: string | null;
  /** The largest Terraform state a discovery job reads (uploaded or from S3). */
  discoveryStateMaxBytes: number;
  /** The largest scanner file POST /imports accepts (unpacked, when gzipped). */
  importMaxBytes: number;
  /** Memory for dashboard answers kept per process under their read version (platform/http/read-cache.ts); 0 turns it off. */
  readCacheBytes: number;
  /** The longest a kept answer is served: what changes with time alone (an SLA due time, an acceptance's expiry) shows within it. */
  readCacheTtlMs: number;
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

function awsPrincipal(raw: string | undefined): string | null {
  if (!raw) return null;
  if (!/^(\d{12}|arn:aws[a-z-]*:(iam|sts)::\d{12}:[\w+=,.@/:-]+)$/.test(raw)) {
    throw new Error(`CONTROLGRAPH_DISCOVERY_AWS_PRINCIPAL: "${raw}" must be an AWS account id or an IAM or STS ARN`);
  }
  return raw;
}

export function parseRoles(text: string | undefined): Config['roles'] {
  const names = list(text);
  if (names.length === 0) return new Set(ROLES);
  for (const name of names) {
    if (!(ROLES as readonly string[]).includes(name)) throw new Error(`role "${name}" must be one of ${ROLES.join(', ')}`);
  }
  return new Set(names as Array<(typeof ROLES)[number]>);
}

/** An absolute http(s) URL without query or fragment; a trailing slash is dropped (links append /respond…). */
function publicUrl(value: string | undefined): string | null {
  if (!value?.trim()) return null;
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw new Error(`CONTROLGRAPH_PUBLIC_URL: "${value}" is not an absolute URL (e.g. https://grc.example.com)`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`CONTROLGRAPH_PUBLIC_URL: "${value}" must be an http:// or https:// URL`);
  if (url.search || url.hash || url.username || url.password) throw new Error(`CONTROLGRAPH_PUBLIC_URL: "${value}" must have no query, fragment or credentials`);
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
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
    outboundAllowHosts: allowHostsFromEnv(env),
    accessTokenTtlMs: parseDuration(env.CONTROLGRAPH_ACCESS_TOKEN_TTL ?? '1h', 'CONTROLGRAPH_ACCESS_TOKEN_TTL'),
    refreshTokenTtlMs: parseDuration(env.CONTROLGRAPH_REFRESH_TOKEN_TTL ?? '7d', 'CONTROLGRAPH_REFRESH_TOKEN_TTL'),
    invitationTtlMs: parseDuration(env.CONTROLGRAPH_INVITATION_TTL ?? '7d', 'CONTROLGRAPH_INVITATION_TTL'),
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
    vulndbUploadMaxBytes: integer(env, 'CONTROLGRAPH_VULNDB_UPLOAD_MAX_BYTES', 2 * 1024 ** 3, 1024),
    vulndbUncompressedMaxBytes: integer(env, 'CONTROLGRAPH_VULNDB_UNCOMPRESSED_MAX_BYTES', 16 * 1024 ** 3, 1024),
    vulndbArchiveMaxEntries: integer(env, 'CONTROLGRAPH_VULNDB_ARCHIVE_MAX_ENTRIES', 1_000_000, 1),
    publicUrl: publicUrl(env.CONTROLGRAPH_PUBLIC_URL),
    rateLimitsEnabled: onOff(env, 'CONTROLGRAPH_RATE_LIMITS', true),
    ruleBudgetMs: integer(env, 'CONTROLGRAPH_RULE_BUDGET_MS', 100, 1),
    discoveryOwnCredentialsTenants: list(env.CONTROLGRAPH_DISCOVERY_OWN_CREDENTIALS_TENANTS).map((t) => t.toLowerCase()),
    discoveryAwsPrincipal: awsPrincipal(env.CONTROLGRAPH_DISCOVERY_AWS_PRINCIPAL),
    discoveryStateMaxBytes: integer(env, 'CONTROLGRAPH_DISCOVERY_STATE_MAX_BYTES', 64 * 1024 * 1024, 1024),
    importMaxBytes: integer(env, 'CONTROLGRAPH_IMPORT_MAX_BYTES', 512 * 1024 * 1024, 1024),
    readCacheBytes: integer(env, 'CONTROLGRAPH_READ_CACHE_BYTES', 64 * 1024 * 1024, 0),
    readCacheTtlMs: parseDuration(env.CONTROLGRAPH_READ_CACHE_TTL ?? '10s', 'CONTROLGRAPH_READ_CACHE_TTL'),
  };
}
