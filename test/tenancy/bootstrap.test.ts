import { Writable } from 'node:stream';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { loggerOptions } from '../../src/platform/logger.js';
import { bootstrap } from '../../src/modules/tenancy/bootstrap.js';
import { openDatabase } from '../../src/platform/db/database.js';
import { createTestApp } from '../harness/app.js';
import { createDatabaseForChild } from '../harness/database.js';
import { call, login } from '../harness/identity.js';
import { CLI } from '../harness/service-process.js';

const run = promisify(execFile);

function capture() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _e, cb) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      cb();
    },
  });
  return { lines, log: pino(loggerOptions('info'), sink) };
}

describe('bootstrap', () => {
  it('creates account, tenant and workspace "default" and a system-admin "admin" with a random password printed once', async () => {
    const { lines, log } = capture();
    const t = await createTestApp({ env: { CONTROLGRAPH_ADMIN_USERNAME: '', CONTROLGRAPH_ADMIN_PASSWORD: '', CONTROLGRAPH_DEFAULT_PLAN: 'pro' }, log });
    try {
      const printed = lines.map((l) => JSON.parse(l).msg as string).find((m) => m?.startsWith('bootstrap: created system-admin "admin" with password '));
      expect(printed).toBeDefined();
      const password = /with password (\S+) /.exec(printed!)![1]!;
      const session = await login(t.app, 'admin', password);
      expect(session.role).toBe('system-admin');
      const tenant = await call(t.app, session.token, { url: `/api/v1/tenants/${session.tenant_id}`, expect: 200 });
      expect(tenant.json()).toMatchObject({ name: 'default', slug: 'default', plan: 'pro', default_workspace_id: session.workspace_id });
      const account = await t.deps.database.db.selectFrom('accounts').selectAll().execute();
      expect(account.map((a) => a.name)).toEqual(['default']);
      // A second start finds the database populated and prints nothing.
      lines.length = 0;
      await bootstrap({ ...t.deps, log });
      expect(lines.filter((l) => l.includes('bootstrap'))).toEqual([]);
      expect(await t.deps.database.db.selectFrom('users').select('id').execute()).toHaveLength(1);
    } finally {
      await t.close();
    }
  });

  it('uses CONTROLGRAPH_ADMIN_USERNAME and CONTROLGRAPH_ADMIN_PASSWORD, never logging the password', async () => {
    const { lines, log } = capture();
    const t = await createTestApp({ env: { CONTROLGRAPH_ADMIN_USERNAME: 'Operator', CONTROLGRAPH_ADMIN_PASSWORD: 'operator-password-42' }, log });
    try {
      expect(lines.join('\n')).not.toContain('operator-password-42');
      const session = await login(t.app, 'operator', 'operator-password-42');
      expect(session.role).toBe('system-admin');
    } finally {
      await t.close();
    }
  });

  it('refuses a configured admin password shorter than 12 characters', async () => {
    await expect(createTestApp({ env: { CONTROLGRAPH_ADMIN_PASSWORD: 'short' } })).rejects.toThrow('CONTROLGRAPH_ADMIN_PASSWORD: password must be at least 12 characters');
  });
});

describe('controlgraph user create', () => {
  it('creates a user in a tenant by slug, who can then log in with that role', async () => {
    const db = await createDatabaseForChild();
    try {
      const env = { ...process.env, DATABASE_URL: db.url, CONTROLGRAPH_ADMIN_PASSWORD: 'admin-password-for-cli' };
      const out = await run(
        process.execPath,
        [CLI, 'user', 'create', '--username', 'Analyst', '--password', 'analyst-password-1', '--tenant', 'default', '--role', 'security-analyst'],
        { env },
      );
      expect(out.stdout.trim()).toBe('created user analyst as security-analyst in tenant default');
      const bad = run(process.execPath, [CLI, 'user', 'create', '--username', 'x1x', '--password', 'short', '--tenant', 'default', '--role', 'auditor'], { env });
      await expect(bad).rejects.toMatchObject({ stderr: expect.stringContaining('password must be at least 12 characters') });
      const badRole = run(process.execPath, [CLI, 'user', 'create', '--username', 'x2x', '--password', 'long-enough-pass', '--tenant', 'default', '--role', 'boss'], { env });
      await expect(badRole).rejects.toMatchObject({ stderr: expect.stringContaining('invalid role') });
      const help = await run(process.execPath, [CLI, 'user', '--help']);
      expect(help.stdout).toMatch(/--username <name> --password <password> --tenant <slug\|id> --role <role>/);
      const handle = await openDatabase(db.url);
      try {
        const row = await handle.db
          .selectFrom('memberships as m')
          .innerJoin('users as u', 'u.id', 'm.user_id')
          .select(['u.username', 'm.role'])
          .where('u.username', '=', 'analyst')
          .executeTakeFirstOrThrow();
        expect(row).toEqual({ username: 'analyst', role: 'security-analyst' });
        const audit = await handle.db.selectFrom('audit_logs').select(['action', 'actor_name']).where('action', '=', 'user.created').execute();
        expect(audit).toEqual([{ action: 'user.created', actor_name: 'cli' }]);
      } finally {
        await handle.close();
      }
    } finally {
      await db.dispose();
    }
  });
});
