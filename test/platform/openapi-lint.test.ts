import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { createTestApp, type TestApp } from '../harness/app.js';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');
const redoclyCli = join(dirname(createRequire(import.meta.url).resolve('@redocly/cli/package.json')), 'bin/cli.js');

interface Problem {
  ruleId: string;
  severity: 'error' | 'warn';
  message: string;
  location: Array<{ pointer: string }>;
}

let t: TestApp;
let dir: string;
beforeAll(async () => {
  t = await createTestApp();
  dir = mkdtempSync(join(tmpdir(), 'cg-openapi-lint-'));
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await t.close();
});

describe('OpenAPI document under redocly lint (recommended rules)', () => {
  it('has no error, and no warning that .redocly.lint-ignore.yaml does not list with its reason', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    expect(res.statusCode).toBe(200);
    writeFileSync(join(dir, 'openapi.json'), res.body);
    copyFileSync(join(root, 'redocly.yaml'), join(dir, 'redocly.yaml'));
    // Linted without the ignore file, so the test sees every problem and can tell a listed warning
    // from a new one, and a stale entry from a live one. Telemetry and the update check would try
    // the network: both are off (tests talk to loopback only).
    const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_NOTIFICATIONS: 'true', NO_COLOR: '1' };
    const result = await run(process.execPath, [redoclyCli, 'lint', 'openapi.json', '--config', 'redocly.yaml', '--format', 'json'], {
      cwd: dir,
      env,
      maxBuffer: 64 * 1024 * 1024,
    }).catch((error: { stdout?: string; stderr?: string }) => ({ stdout: error.stdout ?? '', stderr: error.stderr ?? '' }));
    const report = JSON.parse(result.stdout.slice(result.stdout.indexOf('{'))) as { problems: Problem[] };
    const kept = YAML.parse(readFileSync(join(root, '.redocly.lint-ignore.yaml'), 'utf8'))['openapi.json'] as Record<string, string[]>;
    const keptKeys = new Set(Object.entries(kept).flatMap(([rule, pointers]) => pointers.map((pointer) => `${rule} ${pointer}`)));
    const seen = new Set<string>();
    const unlisted: string[] = [];
    for (const problem of report.problems) {
      const key = `${problem.ruleId} ${problem.location[0]?.pointer}`;
      seen.add(key);
      if (problem.severity === 'error' || !keptKeys.has(key)) unlisted.push(`${problem.severity} ${key}: ${problem.message}`);
    }
    expect(unlisted).toEqual([]);
    expect(
      [...keptKeys].filter((key) => !seen.has(key)),
      'entries of .redocly.lint-ignore.yaml the linter no longer reports',
    ).toEqual([]);
  });
});
