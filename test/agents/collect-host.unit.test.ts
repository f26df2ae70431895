import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCycle } from '../../src/agent/cycle.js';
import { AgentReport } from '../../src/modules/agents/report-schema.js';

/**
 * The collectors on THIS machine, checked against what the system's own tools say (dpkg-query,
 * getent) and against things the test makes itself: a listening socket and a connection of this
 * process, and a monitored file it writes.
 */

const linux = process.platform === 'linux';
const hasDpkg = existsSync('/var/lib/dpkg/status') && existsSync('/usr/bin/dpkg-query');
let dir: string;
let server: net.Server;
let client: net.Socket;
let port: number;
let report: AgentReport;
const monitored = () => join(dir, 'monitored.conf');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cg-agent-host-'));
  writeFileSync(monitored(), 'setting = 1\n');
  server = net.createServer((socket) => socket.on('error', () => undefined));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as net.AddressInfo).port;
  client = net.connect(port, '127.0.0.1');
  await new Promise<void>((resolve) => client.once('connect', resolve));
  report = (await runCycle({ agentId: 'host-test', agentVersion: '0.0.0', fimPaths: [monitored()], fallbackId: async () => 'f'.repeat(32) })).report;
});
afterAll(async () => {
  client?.destroy();
  await new Promise((resolve) => server?.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!linux)('the collectors on this machine', () => {
  it('produce a report the server schema accepts, with every collection accounted for', () => {
    const ajv = new Ajv({ strict: false });
    (addFormats as unknown as (a: Ajv) => Ajv)(ajv);
    const validate = ajv.compile(AgentReport as object);
    expect(validate(report), JSON.stringify(validate.errors)).toBe(true);
    expect(report.collectors).toHaveLength(13);
    for (const c of report.collectors) {
      // Whatever was not collected completely says why.
      if (c.status !== 'ok') expect(c.reason, c.name).toBeTruthy();
    }
  });

  it.skipIf(!hasDpkg)('list exactly the packages dpkg-query lists as installed', () => {
    const listed = execFileSync('dpkg-query', ['-W', '-f', '${db:Status-Status}\t${Package}\t${Version}\t${Architecture}\t${source:Package}\t${source:Version}\n'], {
      encoding: 'utf8',
    })
      .split('\n')
      .filter((l) => l.startsWith('installed\t'))
      .map((l) => l.split('\t').slice(1).join('\t'))
      .sort();
    const collected = report
      .packages!.filter((p) => p.source === 'dpkg')
      .map((p) => [p.name, p.version, p.arch, p.source_name, p.source_version].join('\t'))
      .sort();
    expect(collected).toEqual(listed);
    expect(report.packages!.filter((p) => p.installed_at !== null).length).toBeGreaterThan(listed.length / 2);
  });

  it('see this process, its listening socket and its connection', () => {
    const me = report.processes!.find((p) => p.pid === process.pid);
    expect(me).toMatchObject({ user: userInfo().username, parent_pid: process.ppid });
    expect(me!.cmdline).toContain('node');
    expect(report.listening_ports).toContainEqual({ port, protocol: 'tcp', address: '127.0.0.1', pid: process.pid, process: me!.name });
    const local = `127.0.0.1:${client.localPort}`;
    expect(report.connections).toContainEqual({ local_address: local, remote_address: `127.0.0.1:${port}`, state: 'ESTABLISHED', pid: process.pid, process: me!.name });
  });

  it('list the loopback interface with its address', () => {
    expect(report.network_interfaces!.find((i) => i.name === 'lo')).toMatchObject({ ipv4: ['127.0.0.1'], mtu: expect.any(Number) });
  });

  it('list the accounts getent lists from files, and never a password hash', () => {
    const passwd = readFileSync('/etc/passwd', 'utf8')
      .split('\n')
      .filter((l) => l && !l.startsWith('#'))
      .map((l) => `${l.split(':')[0]}:${l.split(':')[2]}`);
    expect(report.local_users!.map((u) => `${u.username}:${u.uid}`)).toEqual(passwd);
    const root = execFileSync('getent', ['passwd', 'root'], { encoding: 'utf8' }).trim().split(':');
    expect(report.local_users!.find((u) => u.username === 'root')).toMatchObject({ uid: Number(root[2]), home: root[5], shell: root[6] });
    let shadow = '';
    try {
      shadow = readFileSync('/etc/shadow', 'utf8');
    } catch {
      // not root: the report says the status is unknown
      expect(report.local_users!.every((u) => u.password_status !== 'set')).toBe(true);
    }
    const text = JSON.stringify(report);
    for (const line of shadow.split('\n')) {
      const hash = (line.split(':')[1] ?? '').replace(/^[!*]+/, '');
      if (hash.length > 3) expect(text.includes(hash)).toBe(false);
    }
  });

  it('hash the monitored files', () => {
    const file = report.file_integrity!.find((f) => f.path === monitored());
    const mode = (statSync(monitored()).mode & 0o7777).toString(8).padStart(4, '0');
    expect(file).toMatchObject({ sha256: createHash('sha256').update('setting = 1\n').digest('hex'), size_bytes: 12, permissions: mode });
    expect(report.file_integrity!.find((f) => f.path === '/etc/passwd')!.sha256).toBe(createHash('sha256').update(readFileSync('/etc/passwd')).digest('hex'));
  });

  it.skipIf(!existsSync('/etc/machine-id'))('identify the host by a hash of /etc/machine-id, never the id itself', () => {
    const raw = readFileSync('/etc/machine-id', 'utf8').trim();
    expect(report.host.machine_id).toMatch(/^[0-9a-f]{32}$/);
    expect(report.host.machine_id).not.toBe(raw);
    expect(JSON.stringify(report)).not.toContain(raw);
  });
});
