import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, createApiKey } from '../harness/identity.js';
import { startTcpProxy } from '../harness/tcp-proxy.js';
import { prepare, runAgent, runOneCycle, type AgentOptions, type CycleSummary } from '../../src/agent/agent.js';
import { Spool } from '../../src/agent/spool.js';
import { fixture } from './helpers.js';

/**
 * The agent's delivery against the real app over a real port, behind a loopback TCP proxy that the
 * test cuts to make the server unreachable: nothing is lost in an outage, the backlog goes out oldest
 * first (so the server's out-of-order rule applies every report), retries happen within a cycle, a
 * refused key stops sending without dropping anything, and a malformed report is moved aside.
 * The agent reads the fixture host root, so cycles are quick and the same every time.
 */

let t: TestApp;
let key: string;
let proxy: Awaited<ReturnType<typeof startTcpProxy>>;
let dir: string;
const lines: string[] = [];

beforeAll(async () => {
  t = await createTestApp({ clockStart: new Date(Date.now() + 60_000).toISOString() });
  const tenant = await buildTenant(t);
  key = (await createApiKey(t, tenant, { permissions: ['agents:write'] })).key;
  const base = new URL(await t.app.listen({ port: 0, host: '127.0.0.1' }));
  proxy = await startTcpProxy('127.0.0.1', Number(base.port));
  dir = mkdtempSync(join(tmpdir(), 'cg-agent-delivery-'));
});
afterAll(async () => {
  // Drop the agent's keep-alive connections first: close() alone waits for them to time out.
  proxy?.cut();
  await proxy?.close();
  await t?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function agent(name: string, overrides: Partial<AgentOptions> = {}): AgentOptions {
  return {
    server: `http://127.0.0.1:${proxy.port}`,
    apiKey: key,
    agentVersion: '0.1.0-test',
    stateDir: join(dir, name),
    intervalMs: 300_000,
    once: true,
    agentId: name,
    root: fixture('root'),
    retry: { retries: 0, baseDelayMs: 5, maxDelayMs: 5 },
    requestTimeoutMs: 10_000,
    log: (line) => lines.push(line),
    ...overrides,
  };
}

const reportsOf = async (agentId: string) =>
  (
    await sql<{ scan_id: string; outcome: string; reason: string | null; scanned_at: Date; compressed_bytes: number; raw_bytes: number }>`
      SELECT scan_id, outcome, reason, scanned_at, compressed_bytes, raw_bytes FROM agent_reports WHERE agent_id = ${agentId} ORDER BY received_at, scanned_at`.execute(
      t.deps.database.db,
    )
  ).rows;

describe('agent delivery', () => {
  it('keeps every report through a server outage and sends the backlog oldest first', async () => {
    const options = agent('agent-outage');
    const prepared = await prepare(options);
    proxy.cut();
    try {
      const one = await runOneCycle(options, prepared);
      expect(one).toMatchObject({ delivered: false, spool: { pending: 1, delivered: 0 }, stopped: { kind: 'retry', status: null } });
      expect(one.stopped!.message).toMatch(/^cannot reach http:\/\/127\.0\.0\.1:\d+: /);
      const two = await runOneCycle(options, prepared);
      expect(two.spool.pending).toBe(2);
    } finally {
      proxy.restore();
    }
    const three = await runOneCycle(options, prepared);
    expect(three).toMatchObject({ delivered: true, spool: { delivered: 3, pending: 0 }, stopped: null });
    expect(three.node_id).toMatch(/^host:local:host\.os\.instance:[0-9a-f]{32}$/);
    const received = await reportsOf('agent-outage');
    // All three were applied, in scan order: none was ignored as out of order.
    expect(received.map((r) => `${r.outcome}:${r.reason}`)).toEqual(['processed:null', 'processed:null', 'processed:null']);
    const times = received.map((r) => new Date(r.scanned_at).getTime());
    expect(times).toEqual([...times].sort((a, b) => a - b));
    // Gzip on the wire.
    for (const r of received) expect(r.compressed_bytes).toBeLessThan(r.raw_bytes / 3);
    expect(lines.some((l) => /the server is not reachable: cannot reach .*; 1 report\(s\) kept in the spool/.test(l))).toBe(true);
    expect(lines.filter((l) => l.startsWith('sent the spooled report scanned at'))).toHaveLength(2);
  });

  it('retries within a cycle: a send that fails is repeated after a backoff', async () => {
    const options = agent('agent-retry', {
      retry: { retries: 3, baseDelayMs: 5, maxDelayMs: 5 },
      log: (line) => {
        lines.push(line);
        // The server comes back while the agent waits to retry.
        if (line.startsWith('send failed')) proxy.restore();
      },
    });
    const prepared = await prepare(options);
    proxy.cut();
    const summary = await runOneCycle(options, prepared);
    proxy.restore();
    expect(summary).toMatchObject({ delivered: true, spool: { delivered: 1, pending: 0 } });
    expect(lines.some((l) => /^send failed \(cannot reach .*\); retrying in 0 s$/.test(l))).toBe(true);
  });

  it('stops sending when the server refuses the key, and drops nothing', async () => {
    const wrong = agent('agent-key', { apiKey: 'cg_not-a-valid-key' });
    const prepared = await prepare(wrong);
    const refused = await runOneCycle(wrong, prepared);
    expect(refused).toMatchObject({ delivered: false, stopped: { kind: 'fatal', status: 401 }, spool: { pending: 1 } });
    expect(refused.stopped!.message).toMatch(/^401 /);
    expect(lines.some((l) => l.startsWith('the server refused the agent: 401'))).toBe(true);
    const fixed = { ...wrong, apiKey: key };
    const sent = await runOneCycle(fixed, prepared);
    expect(sent).toMatchObject({ delivered: true, spool: { delivered: 2, pending: 0 } });
  });

  it('moves a report the server refuses as malformed aside; the reports behind it still go', async () => {
    const options = agent('agent-bad');
    const prepared = await prepare(options);
    const spool = new Spool(join(options.stateDir, 'spool'));
    await spool.put(new Date(Date.now() - 3_600_000), 'broken-scan', gzipSync(JSON.stringify({ schema_version: '0.9', agent_id: 'agent-bad' })));
    const summary = await runOneCycle(options, prepared);
    expect(summary).toMatchObject({ delivered: true, spool: { delivered: 1, rejected: 1, pending: 0 } });
    const aside = readdirSync(spool.rejectedDir);
    expect(aside.some((n) => n.endsWith('-broken-scan.json.gz'))).toBe(true);
    const reason = readFileSync(
      join(
        spool.rejectedDir,
        aside.find((n) => n.endsWith('.reason.txt'))!,
      ),
      'utf8',
    );
    expect(reason).toMatch(/^400 invalid body: \//);
  });

  it("a report of another tenant's agent id is refused with 409 and kept", async () => {
    const other = await buildTenant(t);
    const otherKey = (await createApiKey(t, other, { permissions: ['agents:write'] })).key;
    const options = agent('agent-outage', { apiKey: otherKey, stateDir: join(dir, 'agent-outage-other') });
    const summary = await runOneCycle(options, await prepare(options));
    expect(summary).toMatchObject({
      delivered: false,
      stopped: { kind: 'fatal', status: 409, message: '409 agent id "agent-outage" belongs to another tenant' },
      spool: { pending: 1 },
    });
  });

  it('runs cycle after cycle until it is stopped', async () => {
    const controller = new AbortController();
    const seen: CycleSummary[] = [];
    const last = await runAgent({ ...agent('agent-loop'), once: false, intervalMs: 1, signal: controller.signal }, (summary) => {
      seen.push(summary);
      if (seen.length === 3) controller.abort();
    });
    expect(seen.map((s) => s.delivered)).toEqual([true, true, true]);
    expect(last!.scan_id).toBe(seen[2]!.scan_id);
    expect((await reportsOf('agent-loop')).map((r) => r.outcome)).toEqual(['processed', 'processed', 'processed']);
    expect(lines.some((l) => l.startsWith('agent agent-loop 0.1.0-test: sending to http://127.0.0.1:'))).toBe(true);
  });

  it('spools before it sends: an agent stopped before delivery leaves the report for its next run', async () => {
    const options = agent('agent-stopped');
    const prepared = await prepare(options);
    const controller = new AbortController();
    controller.abort();
    const summary = await runOneCycle({ ...options, signal: controller.signal }, prepared);
    expect(summary).toMatchObject({ delivered: false, stopped: { kind: 'retry', message: 'the agent is stopping' } });
    expect(readdirSync(join(options.stateDir, 'spool')).filter((n) => n.endsWith('.json.gz'))).toHaveLength(1);
    const next = await runOneCycle(options, prepared);
    expect(next.spool).toMatchObject({ delivered: 2, pending: 0 });
  });
});
