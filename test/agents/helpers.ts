import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import pino from 'pino';
import { projectPath } from '../../src/platform/paths.js';
import { importLocation } from '../../src/modules/vulndb/import/importer.js';
import type { AgentReport, ReportPackage } from '../../src/modules/agents/report-schema.js';
import type { TestApp } from '../harness/app.js';
import { bearer } from '../harness/identity.js';

export const FIXTURES = projectPath('test', 'fixtures', 'agents');
export const fixture = (name: string) => join(FIXTURES, name);
export const OSV_DEBIAN = fixture('osv-debian12-host-subset.json.gz');

/** The build machine's 710 dpkg packages with their source packages (Debian 12). */
export function inventoryPackages(): ReportPackage[] {
  return readFileSync(fixture('dpkg-packages-with-source.tsv'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [name, version, arch, sourceName, sourceVersion] = line.split('\t') as [string, string, string, string, string];
      return { name, version, source: 'dpkg', installed_at: null, cves: [], arch, source_name: sourceName, source_version: sourceVersion };
    });
}

export const DEBIAN_OS: AgentReport['os'] = {
  family: 'linux',
  id: 'debian',
  version_id: '12',
  name: 'Debian GNU/Linux',
  version: '12 (bookworm)',
  pretty_name: 'Debian GNU/Linux 12 (bookworm)',
  kernel: '6.1.0-26-amd64',
  arch: 'x86_64',
};

let sequence = 0;

/** A complete report of a small, clean Debian host; override what a test is about. */
export function buildReport(overrides: Partial<AgentReport> = {}, at = '2026-11-23T12:00:00.000Z'): AgentReport {
  sequence++;
  const base: AgentReport = {
    schema_version: '1.0',
    agent_id: 'agent-test',
    agent_version: '0.1.0',
    scan_id: `scan-${sequence}-${randomUUID()}`,
    scanned_at: at,
    host: { machine_id: 'a1b2c3d4e5f60718293a4b5c6d7e8f90', hostname: 'web-1', fqdn: 'web-1.example.internal', region: null, boot_time: '2026-11-20T08:00:00.000Z', cloud: null },
    os: DEBIAN_OS,
    collectors: [],
    packages: [
      {
        name: 'openssh-server',
        version: '1:9.2p1-2+deb12u3',
        source: 'dpkg',
        installed_at: '2026-01-10T10:00:00.000Z',
        cves: [],
        arch: 'amd64',
        source_name: 'openssh',
        source_version: '1:9.2p1-2+deb12u3',
      },
      { name: 'bash', version: '5.2.15-2+b7', source: 'dpkg', installed_at: null, cves: [], arch: 'amd64', source_name: 'bash', source_version: '5.2.15-2' },
    ],
    processes: [
      {
        pid: 1,
        name: 'systemd',
        user: 'root',
        cmdline: '/sbin/init',
        cpu_percent: 0.1,
        memory_mb: 12.5,
        status: 'sleeping',
        parent_pid: 0,
        start_time: '2026-11-20T08:00:00.000Z',
      },
      {
        pid: 812,
        name: 'sshd',
        user: 'root',
        cmdline: 'sshd: /usr/sbin/sshd -D',
        cpu_percent: 0,
        memory_mb: 8.1,
        status: 'sleeping',
        parent_pid: 1,
        start_time: '2026-11-20T08:00:05.000Z',
      },
    ],
    system_services: [
      { name: 'ssh.service', status: 'active', enabled: true, description: 'OpenBSD Secure Shell server' },
      { name: 'cron.service', status: 'active', enabled: true, description: 'Regular background program processing daemon' },
    ],
    listening_ports: [{ port: 22, protocol: 'tcp', address: '10.0.0.5', pid: 812, process: 'sshd' }],
    connections: [{ local_address: '10.0.0.5:22', remote_address: '10.0.0.9:51422', state: 'ESTABLISHED', pid: 812, process: 'sshd' }],
    network_interfaces: [
      { name: 'lo', mac: '00:00:00:00:00:00', ipv4: ['127.0.0.1'], ipv6: ['::1'], mtu: 65536, state: 'unknown' },
      { name: 'eth0', mac: '02:42:ac:11:00:02', ipv4: ['10.0.0.5'], ipv6: [], mtu: 1500, state: 'up' },
    ],
    firewall_rules: [{ chain: 'INPUT', action: 'ACCEPT', protocol: 'tcp', source: '10.0.0.0/8', destination: null, dport: '22', comment: 'ssh from the VPC' }],
    firewall_policies: [
      { backend: 'nftables', family: 'inet', table: 'filter', chain: 'input', hook: 'input', policy: 'DROP' },
      { backend: 'nftables', family: 'inet', table: 'filter', chain: 'output', hook: 'output', policy: 'ACCEPT' },
    ],
    local_users: [
      { username: 'root', uid: 0, gid: 0, home: '/root', shell: '/bin/bash', last_login: null, password_status: 'locked' },
      { username: 'deploy', uid: 1000, gid: 1000, home: '/home/deploy', shell: '/bin/bash', last_login: '2026-11-22T09:00:00.000Z', password_status: 'set' },
    ],
    sudo_access: [{ user: '%sudo', sudo_rules: ['ALL=(ALL:ALL) ALL'] }],
    file_integrity: [
      { path: '/etc/passwd', sha256: 'a'.repeat(64), size_bytes: 1320, modified_at: '2026-11-01T00:00:00.000Z', permissions: '0644', owner: 'root', group: 'root' },
      { path: '/etc/ssh/sshd_config', sha256: 'b'.repeat(64), size_bytes: 3223, modified_at: '2026-11-01T00:00:00.000Z', permissions: '0644', owner: 'root', group: 'root' },
    ],
    config_checks: [
      { id: 'sshd.permit_root_login', value: 'no', source: '/etc/ssh/sshd_config:33' },
      { id: 'sshd.permit_empty_passwords', value: 'no', source: 'default' },
    ],
    windows_firewall_rules: undefined,
  };
  const report = { ...base, ...overrides };
  if (report.windows_firewall_rules === undefined) delete report.windows_firewall_rules;
  return report;
}

export interface SendOptions {
  gzip?: boolean;
  body?: Buffer | string;
  headers?: Record<string, string>;
}

/** POSTs a report the way the agent does (gzip JSON). */
export function sendReport(t: TestApp, credential: string | null, agentId: string, report: unknown, options: SendOptions = {}) {
  const gzip = options.gzip ?? true;
  const json = typeof report === 'string' ? report : JSON.stringify(report);
  const payload = options.body ?? (gzip ? gzipSync(json) : json);
  return t.app.inject({
    method: 'POST',
    url: `/api/v1/agents/${encodeURIComponent(agentId)}/report`,
    headers: {
      ...(credential ? bearer(credential) : {}),
      'content-type': 'application/json',
      ...(gzip ? { 'content-encoding': 'gzip' } : {}),
      ...options.headers,
    },
    payload,
  });
}

const silent = pino({ level: 'silent' });

/** Imports the Debian OSV advisories (and runs the queued KEV/EPSS seed import). */
export async function loadVulnerabilityData(t: TestApp): Promise<void> {
  await t.drain();
  const result = await importLocation({ db: t.deps.database.db, clock: t.clock, log: silent }, OSV_DEBIAN, { trigger: 'cli' });
  if (result.status === 'failed') throw new Error(`OSV import failed: ${result.error}`);
}

export const nodePath = (tenantId: string, nodeId: string) => `/api/v1/tenants/${tenantId}/nodes/${encodeURIComponent(nodeId)}`;
