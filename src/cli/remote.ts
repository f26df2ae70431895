import { readFileSync } from 'node:fs';
import { loadConfig, type Config } from '../config.js';
import { pgliteDirectory } from '../platform/db/database.js';
import { currentHolder, DirectoryLockedError, type HolderRecord } from '../platform/db/directory-lock.js';

/**
 * Where a data command runs: on the database files (nobody else holds them, or PostgreSQL), or through
 * the API of the service that holds the embedded database (its URL is in the lock's record), or of the
 * service named by --server / CONTROLGRAPH_URL.
 *
 * A routed command authenticates with a bearer credential: CONTROLGRAPH_TOKEN or --token-file FILE (a
 * file keeps it out of the process list and the shell history). Importing, syncing and creating users
 * need a system-admin's access token (POST /api/v1/auth/token); API keys never carry platform:admin,
 * but any key or token may read `vulndb stats`.
 */

/** Refused before anything was changed; the CLI exits with status 2. */
export class CliRefusal extends Error {
  override name = 'CliRefusal';
  readonly exitCode = 2;
}

/** The options every data command accepts besides its own. */
export const REMOTE_OPTIONS = ['server', 'token-file'];

export const REMOTE_HELP = `  --server URL          Run through the API of the service at URL (or set CONTROLGRAPH_URL) instead of
                        opening DATABASE_URL. Beside a running service on an embedded (pglite://)
                        database this happens by itself: the service's lock records its URL.
  --token-file FILE     Bearer credential for the API (or set CONTROLGRAPH_TOKEN): a system-admin's
                        access token from POST /api/v1/auth/token (an API key can read stats only).`;

export interface Remote {
  url: string;
  /** Why this service: the lock of the embedded database, or --server / CONTROLGRAPH_URL. */
  reason: string;
  holder: HolderRecord | null;
}

export type Target = { kind: 'local'; config: Config } | { kind: 'remote'; remote: Remote };

/** The service named on the command line or in the environment, if any. */
function explicitServer(values: Record<string, string>, env: NodeJS.ProcessEnv): Remote | null {
  const url = values.server ?? env.CONTROLGRAPH_URL;
  if (!url) return null;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new CliRefusal(`--server "${url}" is not a URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new CliRefusal(`--server must be an http:// or https:// URL (got ${parsed.protocol})`);
  return { url: parsed.origin + parsed.pathname.replace(/\/+$/, ''), reason: values.server ? '--server' : 'CONTROLGRAPH_URL', holder: null };
}

/** The running service that holds the embedded database, or a refusal when it cannot be talked to. */
export function remoteOfHolder(dir: string, holder: HolderRecord | null): Remote {
  if (!holder?.url) throw new CliRefusal(new DirectoryLockedError(dir, holder).message);
  return { url: holder.url, reason: `process ${holder.pid} (${holder.command}) holds the embedded database ${dir}`, holder };
}

/** Decides where the command runs; a local target may still lose the race for the lock (see `runLocal`). */
export async function chooseTarget(values: Record<string, string>, env: NodeJS.ProcessEnv = process.env): Promise<Target> {
  const server = explicitServer(values, env);
  if (server) return { kind: 'remote', remote: server };
  const config = loadConfig(env);
  const dir = pgliteDirectory(config.databaseUrl);
  if (dir) {
    const held = await currentHolder(dir);
    if (held) return { kind: 'remote', remote: remoteOfHolder(dir, held.holder) };
  }
  return { kind: 'local', config };
}

/**
 * Runs `local` on the files; when another process took the embedded database between the check and
 * the open, runs `remote` against it instead.
 */
export async function runLocalOrRemote<T>(target: Target, local: (config: Config) => Promise<T>, remote: (remote: Remote) => Promise<T>): Promise<T> {
  if (target.kind === 'remote') return remote(target.remote);
  try {
    return await local(target.config);
  } catch (error) {
    if (!(error instanceof DirectoryLockedError)) throw error;
    return remote(remoteOfHolder(error.dir, error.holder));
  }
}

export function readToken(values: Record<string, string>, env: NodeJS.ProcessEnv = process.env): string | null {
  if (values['token-file']) {
    let text: string;
    try {
      text = readFileSync(values['token-file'], 'utf8');
    } catch (error) {
      throw new CliRefusal(`--token-file: cannot read ${values['token-file']}: ${(error as Error).message}`);
    }
    const token = text.trim();
    if (!token) throw new CliRefusal(`--token-file: ${values['token-file']} is empty`);
    return token;
  }
  return env.CONTROLGRAPH_TOKEN?.trim() || null;
}

interface ErrorEnvelope {
  error?: { code?: string; message?: string; details?: Record<string, unknown> | null };
}

/** A failure the service answered (not a refusal of the credential). */
export class ServiceError extends Error {
  override name = 'ServiceError';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The HTTP client of a routed command. `needs` names what the credential must be, for the refusals. */
export class ServiceClient {
  private constructor(
    readonly remote: Remote,
    private readonly token: string,
    private readonly command: string,
    private readonly needs: string,
  ) {}

  static open(remote: Remote, token: string | null, command: string, needs: string): ServiceClient {
    if (!token) {
      throw new CliRefusal(
        `${command}: ${remote.reason}, so this command goes through its API at ${remote.url}, which needs ${needs}: ` +
          `set CONTROLGRAPH_TOKEN or pass --token-file FILE (a system-admin gets a token with POST ${remote.url}/api/v1/auth/token). ` +
          (remote.holder ? `Or stop that service (kill -TERM ${remote.holder.pid}) and run the command again on the files.` : ''),
      );
    }
    return new ServiceClient(remote, token, command, needs);
  }

  async request<T>(
    method: string,
    path: string,
    init: { json?: unknown; body?: FormData; query?: Record<string, string | string[] | undefined> } = {},
  ): Promise<{ status: number; body: T }> {
    const url = new URL(`${this.remote.url}/api/v1${path}`);
    for (const [name, value] of Object.entries(init.query ?? {})) {
      for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) url.searchParams.append(name, v);
    }
    const headers: Record<string, string> = { authorization: `Bearer ${this.token}`, accept: 'application/json' };
    let body: string | FormData | undefined = init.body;
    if (init.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(init.json);
    }
    let response: Response;
    try {
      response = await fetch(url, { method, headers, body });
    } catch (error) {
      const cause = (error as { cause?: { message?: string } }).cause?.message ?? (error as Error).message;
      throw new CliRefusal(`${this.command}: cannot reach the service at ${this.remote.url} (${this.remote.reason}): ${cause}`);
    }
    const text = await response.text();
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = null;
    }
    if (response.ok) return { status: response.status, body: parsed as T };
    const message = (parsed as ErrorEnvelope | null)?.error?.message ?? (text.slice(0, 500) || response.statusText);
    if (response.status === 401) throw new CliRefusal(`${this.command}: the service at ${this.remote.url} refused the credential (${message}); it needs ${this.needs}`);
    if (response.status === 403) throw new CliRefusal(`${this.command}: the service at ${this.remote.url} refused (${message}); this command needs ${this.needs}`);
    throw new ServiceError(response.status, `${this.command}: the service at ${this.remote.url} answered ${response.status}: ${message}`);
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
