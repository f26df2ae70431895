import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, createApiKey } from '../harness/identity.js';
import { prepare, runOneCycle } from '../../src/agent/agent.js';
import { buildReport, fixture, sendReport } from './helpers.js';

/**
 * Agent reports count against the tenant's rate limit like any request: past the burst the report
 * route answers 429 with Retry-After, and the agent waits and sends again instead of dropping the
 * report. The limiter runs on the app's manual clock, which the test moves while the agent waits.
 */

let t: TestApp;
let key: string;
let dir: string;
let base: string;

beforeAll(async () => {
  t = await createTestApp({ env: { CONTROLGRAPH_RATE_LIMITS: 'on' }, clockStart: new Date(Date.now() + 60_000).toISOString() });
  const tenant = await buildTenant(t, { plan: 'free' });
  key = (await createApiKey(t, tenant, { permissions: ['agents:write'] })).key;
  t.clock.advance(120_000);
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  dir = mkdtempSync(join(tmpdir(), 'cg-agent-rl-'));
});
afterAll(async () => {
  await t?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('rate limits on agent reports', () => {
  it('answer 429 with Retry-After past the burst; the agent waits and delivers', async () => {
    let limited = null as Awaited<ReturnType<typeof sendReport>> | null;
    for (let i = 0; i < 20 && !limited; i++) {
      const res = await sendReport(t, key, 'agent-filler', buildReport({ agent_id: 'agent-filler' }, new Date(Date.now() - 3_600_000 + i * 1000).toISOString()));
      if (res.statusCode === 429) limited = res;
      else expect(res.statusCode, res.body).toBe(200);
    }
    expect(limited).not.toBeNull();
    expect(limited!.json().error).toMatchObject({ code: 'RATE_LIMITED', message: 'too many requests' });
    expect(limited!.headers['retry-after']).toBe('1');

    const lines: string[] = [];
    const options = {
      server: base,
      apiKey: key,
      agentVersion: '0.1.0-test',
      stateDir: join(dir, 'state'),
      intervalMs: 300_000,
      once: true,
      agentId: 'agent-limited',
      root: fixture('root'),
      retry: { retries: 3, baseDelayMs: 5, maxDelayMs: 5 },
      log: (line: string) => {
        lines.push(line);
        // Time passes on the server while the agent waits.
        if (line.startsWith('send failed')) t.clock.advance(2_000);
      },
    };
    const summary = await runOneCycle(options, await prepare(options));
    expect(summary).toMatchObject({ delivered: true, spool: { delivered: 1, pending: 0 } });
    expect(lines).toContain('send failed (429 too many requests); retrying in 0 s');
  });
});
