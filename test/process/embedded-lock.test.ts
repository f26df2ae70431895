import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, ensureDistBuilt, freePort, startServiceProcess, type ServiceProcess } from '../harness/service-process.js';
import { createDatabaseForChild, dbKind } from '../harness/database.js';
import { EPSS_KEV, KEV_CSV, KEV_JSON, OSV_DEBIAN_GZ, OSV_NPM, truncated } from '../vulndb/helpers.js';
import { LOCK_NAME, OWNER_NAME } from '../../src/platform/db/directory-lock.js';

/**
 * One owner per embedded database (issue 20 item 1), with real processes on a real data directory:
 * every data command beside a running `controlgraph serve` is refused (exit 2) or goes through its
 * API, the data stays intact and the service keeps answering; a holder killed with `kill -9` leaves a
 * lock the next start takes over at once. PostgreSQL deployments take no lock.
 */
const ADMIN = { username: 'lock-admin', password: 'a long enough admin password' };

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs the CLI and resolves with its exit code and output (never rejects on a non-zero exit). */
function cli(args: string[], env: Record<string, string | undefined>): Promise<Outcome> {
  const started = Date.now();
  const clean = { ...process.env, LOG_LEVEL: 'silent', CONTROLGRAPH_TOKEN: undefined, CONTROLGRAPH_URL: undefined, ...env };
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env: clean as NodeJS.ProcessEnv, timeout: 120_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

async function login(base: string, credentials = ADMIN): Promise<{ token: string; tenant_id: string }> {
  const res = await fetch(`${base}/api/v1/auth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(credentials) });
  expect(res.status).toBe(200);
  return (await res.json()) as { token: string; tenant_id: string };
}

async function getJson(base: string, path: string, token: string): Promise<any> {
  const res = await fetch(`${base}/api/v1${path}`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status, await res.clone().text()).toBe(200);
  return res.json();
}

describe.runIf(dbKind() === 'pglite')('one owner per embedded (PGlite) database', () => {
  let db: { url: string; dispose(): Promise<void> };
  let dir: string;
  let service: ServiceProcess;
  let token: string;
  let env: Record<string, string>;
  const scratch = mkdtempSync(join(tmpdir(), 'cg-lock-'));

  const serviceEnv = () => ({
    DATABASE_URL: db.url,
    CONTROLGRAPH_ADMIN_USERNAME: ADMIN.username,
    CONTROLGRAPH_ADMIN_PASSWORD: ADMIN.password,
    CONTROLGRAPH_VULNDB_SEED: 'off',
    // The service's own sync source (run at start, and by a routed `vulndb sync`); KEV comes from the CLI.
    CONTROLGRAPH_VULNDB_SOURCES: `epss=${EPSS_KEV}`,
  });

  beforeAll(async () => {
    await ensureDistBuilt();
    db = await createDatabaseForChild();
    dir = db.url.slice('pglite://'.length);
    service = await startServiceProcess(serviceEnv());
    token = (await login(service.base)).token;
    // What a data command beside the service sees: the same DATABASE_URL, nothing else.
    env = { DATABASE_URL: db.url };
  }, 300_000);
  afterAll(async () => {
    await service?.stop('SIGKILL');
    await db?.dispose();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('the service records itself as the holder: pid, command and listening URL', () => {
    expect(existsSync(join(dir, LOCK_NAME))).toBe(true);
    const record = JSON.parse(readFileSync(join(dir, OWNER_NAME), 'utf8'));
    expect(record).toMatchObject({ pid: service.child.pid, command: 'controlgraph serve', url: service.base });
  });

  it('a second `serve` on the directory is refused at once, exit 2, naming the holder and what to do', async () => {
    const second = await cli(['serve'], { ...env, PORT: String(await freePort()), HOST: '127.0.0.1', CONTROLGRAPH_VULNDB_SEED: 'off' });
    expect(second.code).toBe(2);
    expect(second.stderr).toContain(`is in use by process ${service.child.pid}`);
    expect(second.stderr).toContain(`controlgraph serve, serving ${service.base}`);
    expect(second.stderr).toContain(`kill -TERM ${service.child.pid}`);
    expect(second.stderr).toMatch(/give this process another DATABASE_URL/);
    expect(second.ms).toBeLessThan(20_000);
  });

  it('data commands without a credential are refused, exit 2, saying how to run them', async () => {
    const commands = [
      ['vulndb', 'import', KEV_JSON],
      ['vulndb', 'sync'],
      ['vulndb', 'stats'],
      ['user', 'create', '--username', 'nobody1', '--password', 'a long enough password', '--tenant', 'default', '--role', 'auditor'],
    ];
    for (const args of commands) {
      const outcome = await cli(args, env);
      expect(outcome.code, args.join(' ')).toBe(2);
      expect(outcome.stderr).toContain(`process ${service.child.pid} (controlgraph serve) holds the embedded database ${dir}`);
      expect(outcome.stderr).toContain(`goes through its API at ${service.base}`);
      expect(outcome.stderr).toMatch(/set CONTROLGRAPH_TOKEN or pass --token-file FILE/);
      expect(outcome.stderr).toContain(`stop that service (kill -TERM ${service.child.pid})`);
    }
  });

  it('migrate says the service applied the migrations at start (exit 0), without opening the files', async () => {
    const outcome = await cli(['migrate'], env);
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toMatch(
      new RegExp(`^nothing to do: process ${service.child.pid} \\(controlgraph serve, ${service.base}\\) applied the migrations of version \\S+ when it started`),
    );
  });

  it('vulndb import goes through the API: the file is uploaded, imported by the service and reported', async () => {
    const imported = await cli(['vulndb', 'import', KEV_JSON], { ...env, CONTROLGRAPH_TOKEN: token });
    expect(imported.stderr).toMatch(/import [0-9a-f-]{36} accepted by/);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout.trim()).toBe(`kev ${KEV_JSON}: 1404 records read; 1404 inserted, 0 updated, 0 deleted, 0 unchanged`);
    const stats = await getJson(service.base, '/vulndb/stats', token);
    expect(stats.counts.kev).toBe(1404);

    // A directory of OSV files, the token from a file.
    const osvDir = join(scratch, 'osv');
    mkdirSync(osvDir);
    copyFileSync(OSV_NPM, join(osvDir, 'npm.json'));
    copyFileSync(OSV_DEBIAN_GZ, join(osvDir, 'debian.json.gz'));
    const tokenFile = join(scratch, 'token');
    writeFileSync(tokenFile, `${token}\n`);
    const osv = await cli(['vulndb', 'import', osvDir, '--token-file', tokenFile], env);
    expect(osv.code, osv.stderr).toBe(0);
    expect(osv.stdout).toMatch(new RegExp(`^osv ${osvDir}: \\d+ records read; \\d+ inserted`));

    // A broken file fails (exit 1) saying where, and changes nothing.
    const cut = join(scratch, 'kev-cut.json');
    writeFileSync(cut, truncated(KEV_JSON, 0.5));
    const broken = await cli(['vulndb', 'import', cut], { ...env, CONTROLGRAPH_TOKEN: token });
    expect(broken.code).toBe(1);
    expect(broken.stderr).toMatch(/kev-cut\.json: FAILED: .+ \(byte \d+, after \d+ records.*\); the previous data is unchanged/);
    expect((await getJson(service.base, '/vulndb/stats', token)).counts.kev).toBe(1404);
  });

  it("vulndb sync and stats go through the API (the service's own sources)", async () => {
    const sync = await cli(['vulndb', 'sync'], { ...env, CONTROLGRAPH_TOKEN: token });
    expect(sync.code, sync.stderr).toBe(0);
    // The sync at the service's start may have imported the file already: then it is unchanged.
    expect(sync.stdout.trim()).toMatch(new RegExp(`^epss ${EPSS_KEV}: (unchanged \\(1404 records\\)|1404 records read; \\d+ inserted, 0 updated, 0 deleted, \\d+ unchanged)$`));
    const stats = await cli(['vulndb', 'stats'], { ...env, CONTROLGRAPH_TOKEN: token });
    expect(stats.code, stats.stderr).toBe(0);
    const parsed = JSON.parse(stats.stdout);
    expect(parsed.counts).toMatchObject({ kev: 1404, epss: 1404 });
    expect(parsed.package_matching.enabled).toBe(true);
  });

  it('user create goes through the tenant user endpoints as the system-admin', async () => {
    const created = await cli(['user', 'create', '--username', 'Analyst', '--password', 'analyst-password-1', '--tenant', 'default', '--role', 'security-analyst'], {
      ...env,
      CONTROLGRAPH_TOKEN: token,
    });
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout.trim()).toBe(`added user analyst as security-analyst in tenant default (through ${service.base})`);
    await login(service.base, { username: 'analyst', password: 'analyst-password-1' });
    // Again with another role: the role changes, as on the files.
    const again = await cli(['user', 'create', '--username', 'analyst', '--tenant', 'default', '--role', 'auditor'], { ...env, CONTROLGRAPH_TOKEN: token });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout.trim()).toBe(`linked user analyst as auditor in tenant default (through ${service.base})`);
    // A token without platform rights is refused with exit 2, saying what is needed.
    const analyst = await login(service.base, { username: 'analyst', password: 'analyst-password-1' });
    const refused = await cli(['vulndb', 'import', KEV_CSV], { ...env, CONTROLGRAPH_TOKEN: analyst.token });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/refused \(.+\); this command needs a system-admin's access token/);
  });

  it('--server (or CONTROLGRAPH_URL) names the service explicitly; a bad credential is refused with exit 2', async () => {
    const stats = await cli(['vulndb', 'stats', '--server', service.base], { DATABASE_URL: 'pglite://memory', CONTROLGRAPH_TOKEN: token });
    expect(stats.code, stats.stderr).toBe(0);
    expect(JSON.parse(stats.stdout).counts.kev).toBe(1404);
    const bad = await cli(['vulndb', 'stats'], { CONTROLGRAPH_URL: service.base, CONTROLGRAPH_TOKEN: 'not-a-token' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/refused the credential/);
  });

  it('the service kept answering; stopped, it releases the lock and the data is intact on the files', async () => {
    expect((await fetch(`${service.base}/healthz`)).status).toBe(200);
    expect(await service.stop('SIGTERM')).toBe(0);
    expect(existsSync(join(dir, LOCK_NAME))).toBe(false);
    expect(existsSync(join(dir, OWNER_NAME))).toBe(false);
    const local = await cli(['vulndb', 'stats'], env);
    expect(local.code, local.stderr).toBe(0);
    expect(JSON.parse(local.stdout).counts.kev).toBe(1404);
    const migrate = await cli(['migrate'], env);
    expect(migrate.stdout.trim()).toBe('database is up to date');
  });

  it('after kill -9 of the holder, the next start takes the lock at once and finds the data', async () => {
    const doomed = await startServiceProcess(serviceEnv());
    await doomed.stop('SIGKILL');
    // The lock and the record are left behind, naming a process that no longer runs.
    expect(existsSync(join(dir, LOCK_NAME))).toBe(true);
    expect(JSON.parse(readFileSync(join(dir, OWNER_NAME), 'utf8')).pid).toBe(doomed.child.pid);
    const started = Date.now();
    service = await startServiceProcess(serviceEnv());
    const tookMs = Date.now() - started;
    // Well below the 60 s after which a lock counts as stale by its age alone.
    expect(tookMs).toBeLessThan(45_000);
    expect(JSON.parse(readFileSync(join(dir, OWNER_NAME), 'utf8')).pid).toBe(service.child.pid);
    const fresh = await login(service.base);
    expect((await getJson(service.base, '/vulndb/stats', fresh.token)).counts.kev).toBe(1404);
    await login(service.base, { username: 'analyst', password: 'analyst-password-1' });
  }, 240_000);
});

describe.runIf(dbKind() === 'postgres')('PostgreSQL deployments take no lock', () => {
  let db: { url: string; dispose(): Promise<void> };
  let service: ServiceProcess;
  beforeAll(async () => {
    db = await createDatabaseForChild();
    service = await startServiceProcess({ DATABASE_URL: db.url, CONTROLGRAPH_VULNDB_SEED: 'off' });
  }, 300_000);
  afterAll(async () => {
    await service?.stop('SIGKILL');
    await db?.dispose();
  });

  it('data commands open the database beside a running service, as many processes do', async () => {
    const migrate = await cli(['migrate'], { DATABASE_URL: db.url });
    expect(migrate.code, migrate.stderr).toBe(0);
    expect(migrate.stdout.trim()).toBe('database is up to date');
    const imported = await cli(['vulndb', 'import', KEV_CSV], { DATABASE_URL: db.url });
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toMatch(/1404 records read; 1404 inserted/);
    expect((await fetch(`${service.base}/healthz`)).status).toBe(200);
  });
});
