import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseAgentArgs } from '../../src/cli/agent.js';
import { backoffMs, reportUrl, retryAfterMs } from '../../src/agent/sender.js';
import { Spool } from '../../src/agent/spool.js';
import { AgentState, defaultStateDir } from '../../src/agent/state.js';
import { parseOsRelease } from '../../src/agent/host.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cg-agent-parts-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('spool', () => {
  it('lists reports oldest first by scan time, whatever order they were written in', async () => {
    const spool = new Spool(dir);
    await spool.init();
    await spool.put(new Date('2026-11-23T12:10:00Z'), 'scan-c', Buffer.from('c'));
    await spool.put(new Date('2026-11-23T12:00:00Z'), 'scan-a', Buffer.from('a'));
    await spool.put(new Date('2026-11-23T12:05:00Z'), 'scan-b', Buffer.from('b'));
    const entries = await spool.list();
    expect(entries.map((e) => e.scanId)).toEqual(['scan-a', 'scan-b', 'scan-c']);
    expect((await spool.read(entries[0]!)).toString()).toBe('a');
    await spool.remove(entries[0]!);
    expect((await spool.list()).map((e) => e.scanId)).toEqual(['scan-b', 'scan-c']);
  });

  it('stays within its limits by dropping the oldest reports, never the new one', async () => {
    const spool = new Spool(dir, { maxReports: 2, maxBytes: 1024, maxAgeMs: 86_400_000 });
    await spool.init();
    await spool.put(new Date('2026-11-23T12:00:00Z'), 'one', Buffer.alloc(10));
    await spool.put(new Date('2026-11-23T12:05:00Z'), 'two', Buffer.alloc(10));
    const third = await spool.put(new Date('2026-11-23T12:10:00Z'), 'three', Buffer.alloc(10));
    expect(third.dropped.map((d) => d.scanId)).toEqual(['one']);
    const big = await spool.put(new Date('2026-11-23T12:15:00Z'), 'big', Buffer.alloc(2000));
    expect(big.dropped.map((d) => d.scanId)).toEqual(['two', 'three']);
    expect((await spool.list()).map((e) => e.scanId)).toEqual(['big']);
  });

  it('drops reports older than its age bound, and keeps what it holds across a restart', async () => {
    const day = 86_400_000;
    const first = new Spool(dir, { maxReports: 100, maxBytes: 1024 * 1024, maxAgeMs: 7 * day });
    await first.init();
    await first.put(new Date('2026-11-01T00:00:00Z'), 'old', Buffer.from('o'));
    await first.put(new Date('2026-11-05T00:00:00Z'), 'recent', Buffer.from('r'));
    // A new process (the agent restarted after an outage) finds both, then trims by age on its first put.
    const again = new Spool(dir, { maxReports: 100, maxBytes: 1024 * 1024, maxAgeMs: 7 * day });
    await again.init();
    expect((await again.list()).map((e) => e.scanId)).toEqual(['old', 'recent']);
    const put = await again.put(new Date('2026-11-10T00:00:00Z'), 'now', Buffer.from('n'));
    expect(put.dropped.map((d) => d.scanId)).toEqual(['old']);
    expect((await again.list()).map((e) => e.scanId)).toEqual(['recent', 'now']);
  });

  it('moves refused reports aside with the reason, keeping the last 20', async () => {
    const spool = new Spool(dir);
    await spool.init();
    for (let i = 0; i < 22; i++) {
      const { entry } = await spool.put(new Date(Date.UTC(2026, 10, 23, 12, i)), `bad-${i}`, Buffer.from('x'));
      await spool.reject(entry, `400 invalid body ${i}`);
    }
    expect(await spool.list()).toEqual([]);
    const kept = readdirSync(spool.rejectedDir)
      .filter((n) => n.endsWith('.json.gz'))
      .sort();
    expect(kept).toHaveLength(20);
    expect(kept[0]).toMatch(/-bad-2\.json\.gz$/);
    expect(readdirSync(spool.rejectedDir)).toContain(`${kept[19]}.reason.txt`);
  });

  it('removes half-written files of a crash on start', async () => {
    writeFileSync(join(dir, '000000000000001-x.json.gz.tmp'), 'partial');
    const spool = new Spool(dir);
    await spool.init();
    expect(readdirSync(dir).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });
});

describe('sender', () => {
  it('builds the report URL from a base with or without /api/v1', () => {
    expect(reportUrl('https://cg.example.com', 'web-1')).toBe('https://cg.example.com/api/v1/agents/web-1/report');
    expect(reportUrl('https://cg.example.com/api/v1/', 'web-1')).toBe('https://cg.example.com/api/v1/agents/web-1/report');
    expect(reportUrl('http://127.0.0.1:8080/', 'a b')).toBe('http://127.0.0.1:8080/api/v1/agents/a%20b/report');
  });

  it('backs off exponentially with jitter, honouring Retry-After up to the cap', () => {
    const policy = { retries: 4, baseDelayMs: 1000, maxDelayMs: 10_000 };
    expect([0, 1, 2, 3, 4].map((n) => backoffMs(n, policy, null, () => 0.5))).toEqual([1000, 2000, 4000, 8000, 10_000]);
    expect(backoffMs(0, policy, null, () => 0)).toBe(800);
    expect(backoffMs(0, policy, null, () => 1)).toBe(1200);
    expect(backoffMs(0, policy, 3000)).toBe(3000);
    expect(backoffMs(0, policy, 60_000)).toBe(10_000);
    expect(retryAfterMs('7')).toBe(7000);
    expect(retryAfterMs('Wed, 21 Oct 2026 07:28:10 GMT', Date.parse('Wed, 21 Oct 2026 07:28:00 GMT'))).toBe(10_000);
    expect(retryAfterMs('soon')).toBeNull();
  });
});

describe('state', () => {
  it('keeps the agent id and a generated machine id across runs', async () => {
    const state = new AgentState(join(dir, 'state'));
    await state.init();
    const id = await state.agentId('Web-1.Example.COM', 'abcdef0123456789abcdef0123456789');
    expect(id).toBe('web-1.example.com-abcdef012345');
    expect(await new AgentState(join(dir, 'state')).agentId('renamed', '0'.repeat(32))).toBe(id);
    const machine = await state.fallbackMachineId();
    expect(machine).toMatch(/^[0-9a-f]{32}$/);
    expect(await state.fallbackMachineId()).toBe(machine);
  });

  it('uses the XDG state directory for an unprivileged agent', () => {
    if (process.getuid?.() === 0) expect(defaultStateDir({})).toBe('/var/lib/controlgraph-agent');
    else expect(defaultStateDir({ XDG_STATE_HOME: '/x' })).toBe('/x/controlgraph-agent');
  });

  it('parses os-release quoting', () => {
    expect(parseOsRelease('ID=ubuntu\nVERSION="22.04.4 LTS (Jammy Jellyfish)"\nNAME=\'Ubuntu\'\n# c\n')).toEqual({
      ID: 'ubuntu',
      VERSION: '22.04.4 LTS (Jammy Jellyfish)',
      NAME: 'Ubuntu',
    });
  });
});

describe('agent arguments', () => {
  const base = ['--server', 'https://cg.example.com', '--api-key-file', '/etc/controlgraph-agent/api-key'];

  it('takes the documented options, several --fim paths and the key from the environment', () => {
    const parsed = parseAgentArgs(
      [...base, '--interval', '30s', '--once', '--fim', '/etc/app.conf', '/srv/app', '--fim=/opt/x', '--disable', 'processes,connections', '--region', 'eu-west-1'],
      {},
    );
    expect(parsed).toMatchObject({
      server: 'https://cg.example.com',
      apiKey: null,
      apiKeyFile: '/etc/controlgraph-agent/api-key',
      intervalMs: 30_000,
      once: true,
      fim: ['/etc/app.conf', '/srv/app', '/opt/x'],
      defaultFim: true,
      region: 'eu-west-1',
      root: '/',
      retries: 4,
    });
    expect([...parsed.disabled]).toEqual(['processes', 'connections']);
    expect(parseAgentArgs(['--server', 'http://127.0.0.1:8080'], { CONTROLGRAPH_AGENT_API_KEY: 'from-env' }).apiKey).toBe('from-env');
    expect(parseAgentArgs(base, {}).intervalMs).toBe(300_000);
    expect(parseAgentArgs(['--dry-run'], {}).dryRun).toBe(true);
    // --collectors names what runs; everything else is disabled (and --disable still applies).
    const only = parseAgentArgs([...base, '--collectors', 'packages,processes,local_users', '--disable', 'processes'], {});
    expect([...only.disabled].sort()).toEqual([
      'config_checks',
      'connections',
      'file_integrity',
      'firewall_policies',
      'firewall_rules',
      'listening_ports',
      'network_interfaces',
      'processes',
      'sudo_access',
      'system_services',
      'windows_firewall_rules',
    ]);
    expect(parseAgentArgs([...base, '--spool-max-mb', '64', '--spool-max-age', '3d'], {})).toMatchObject({ spoolMaxBytes: 64 * 1024 * 1024, spoolMaxAgeMs: 3 * 86_400_000 });
  });

  it('refuses bad input with a message naming the option', () => {
    const cases: Array<[string[], string]> = [
      [['--api-key-file', '/k'], '--server is required'],
      [['--server', 'https://x'], '--api-key-file is required (or set CONTROLGRAPH_AGENT_API_KEY)'],
      [['--server', 'https://x', '--api-key', 'k'], '--api-key is not accepted: a key on the command line is visible to every user'],
      [['--server', 'https://x', '--api-key-file', 'key.txt'], '--api-key-file must be an absolute path'],
      [['--server', 'ftp://x', '--api-key-file', '/k'], '--server must be an http:// or https:// URL (got ftp:)'],
      [['--server', 'not a url', '--api-key-file', '/k'], '--server "not a url" is not a URL'],
      [[...base, '--collectors', 'packages,kittens'], '--collectors: unknown collection "kittens"'],
      [[...base, '--spool-max-mb', '0'], '--spool-max-mb must be a whole number of MiB, at least 1'],
      [[...base, '--spool-max-age', '10m'], '--spool-max-age must be at least 1h'],
      [[...base, '--interval', '5x'], '--interval: "5x" is not a duration like 30s, 5m, 1h or 7d'],
      [[...base, '--interval', '5s'], '--interval must be at least 10s'],
      [[...base, '--fim'], '--fim needs at least one path'],
      [[...base, '--fim', 'relative/path'], '--fim paths must be absolute (got "relative/path")'],
      [[...base, '--disable', 'kittens'], '--disable: unknown collection "kittens"'],
      [[...base, '--agent-id', 'bad id!'], '--agent-id must be 1-128 characters'],
      [[...base, '--retries', '-1'], '--retries must be a whole number from 0 to 100'],
      [[...base, '--region'], '--region needs a value'],
      [[...base, '--retries', 'many'], '--retries must be a whole number from 0 to 100'],
      [[...base, '--frobnicate'], 'unknown option --frobnicate'],
      [[...base, 'stray'], 'unexpected argument "stray"'],
      [[...base, '--once=yes'], '--once takes no value'],
    ];
    for (const [args, message] of cases) expect(() => parseAgentArgs(args, {}), message).toThrow(message);
  });
});
