import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, createApiKey, type TenantFixture } from '../harness/identity.js';
import type { AgentReport } from '../../src/modules/agents/report-schema.js';
import { buildReport, sendReport } from './helpers.js';

/**
 * What a report does to findings: host-configuration rules (content/rules/host/linux.yml) are opened
 * and resolved, config drift of monitored files is reported with both hashes, reports out of order
 * change nothing, and a changed host node triggers the compliance audit of rules about hosts.
 */

let t: TestApp;
let tenant: TenantFixture;
let key: string;

beforeAll(async () => {
  t = await createTestApp({ clockStart: '2026-11-23T13:00:00.000Z' });
  tenant = await buildTenant(t);
  key = (await createApiKey(t, tenant, { permissions: ['agents:write'] })).key;
});
afterAll(() => t.close());

const host = (machine: string) => ({ ...buildReport().host, machine_id: machine, hostname: machine });
const nodeId = (machine: string) => `host:local:host.os.instance:${machine}`;

async function send(agent: string, machine: string, at: string, overrides: Partial<AgentReport> = {}) {
  const res = await sendReport(t, key, agent, buildReport({ agent_id: agent, host: host(machine), ...overrides }, at));
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

interface Finding {
  id: string;
  rule_id: string;
  status: string;
  title: string;
  severity: string;
  tags: string[];
  details: Record<string, any>;
  resolved_by: string | null;
}

async function findings(machine: string): Promise<Finding[]> {
  const res = await call(t.app, tenant.admin.token, {
    method: 'GET',
    url: `/api/v1/tenants/${tenant.id}/findings?status=all&per_page=500&resource_id=${encodeURIComponent(nodeId(machine))}`,
    expect: 200,
  });
  return res.json().items;
}

async function unknownOf(machine: string): Promise<Array<Record<string, any>>> {
  const res = await call(t.app, tenant.admin.token, { url: `/api/v1/tenants/${tenant.id}/evaluations/unknown?resource_id=${encodeURIComponent(nodeId(machine))}`, expect: 200 });
  return res.json().items;
}

const statusOf = (list: Finding[]) => Object.fromEntries(list.map((f) => [f.rule_id, f.status]));

describe('host-configuration findings', () => {
  const machine = 'rules000000000000000000000000001';
  const bad: Partial<AgentReport> = {
    config_checks: [
      { id: 'sshd.permit_root_login', value: 'yes', source: '/etc/ssh/sshd_config:33' },
      { id: 'sshd.permit_empty_passwords', value: 'yes', source: '/etc/ssh/sshd_config:40' },
    ],
    file_integrity: [{ path: '/etc/passwd', sha256: 'a'.repeat(64), size_bytes: 1320, modified_at: '2026-11-01T00:00:00.000Z', permissions: '0666', owner: 'root', group: 'root' }],
    firewall_policies: [{ backend: 'iptables', family: 'ip', table: 'filter', chain: 'INPUT', hook: 'input', policy: 'ACCEPT' }],
    local_users: [
      { username: 'root', uid: 0, gid: 0, home: '/root', shell: '/bin/bash', last_login: null, password_status: 'locked' },
      { username: 'toor', uid: 0, gid: 0, home: '/root', shell: '/bin/sh', last_login: null, password_status: 'set' },
      { username: 'guest', uid: 1001, gid: 1001, home: '/home/guest', shell: '/bin/bash', last_login: null, password_status: 'empty' },
    ],
    listening_ports: [
      { port: 8080, protocol: 'tcp', address: '0.0.0.0', pid: 4242, process: 'app' },
      { port: 5432, protocol: 'tcp', address: '127.0.0.1', pid: 700, process: 'postgres' },
    ],
  };

  it('a clean host has none: every rule is evaluated and compliant', async () => {
    const body = await send('agent-rules', machine, '2026-11-23T12:00:00.000Z');
    expect(body.rules.map((r: { id: string; state: string }) => `${r.id}=${r.state}`).sort()).toEqual([
      'host-account-empty-password=compliant',
      'host-account-extra-uid0=compliant',
      'host-firewall-default-accept=compliant',
      'host-service-listening-all-interfaces=compliant',
      'host-ssh-empty-passwords=compliant',
      'host-ssh-root-login=compliant',
      'host-world-writable-sensitive-file=compliant',
    ]);
    expect(await findings(machine)).toEqual([]);
  });

  it('opens one finding per violated rule, with evidence', async () => {
    const body = await send('agent-rules', machine, '2026-11-23T12:05:00.000Z', bad);
    // Seven rules, and the drift of /etc/passwd's mode (0644 in the clean report's baseline).
    expect(body.findings).toMatchObject({ created: 8, resolved: 0, drifted_files: 1 });
    const all = await findings(machine);
    expect(all.find((f) => f.tags.includes('config-drift'))!.details).toMatchObject({ path: '/etc/passwd', changed: ['permissions'] });
    const list = all.filter((f) => f.tags.includes('host-configuration'));
    const byRule = new Map(list.map((f) => [f.rule_id, f]));
    expect([...byRule.keys()].sort()).toEqual([
      'host-account-empty-password',
      'host-account-extra-uid0',
      'host-firewall-default-accept',
      'host-service-listening-all-interfaces',
      'host-ssh-empty-passwords',
      'host-ssh-root-login',
      'host-world-writable-sensitive-file',
    ]);
    expect(byRule.get('host-ssh-root-login')).toMatchObject({ severity: 'HIGH', status: 'open', tags: ['host', 'host-configuration'] });
    expect(byRule.get('host-ssh-root-login')!.details.evidence).toEqual(['PermitRootLogin yes (/etc/ssh/sshd_config:33)']);
    // Findings word the failure, not the rule's check title ("SSH does not permit root login").
    expect(byRule.get('host-ssh-root-login')!.title).toBe('SSH permits root login');
    expect(byRule.get('host-account-empty-password')!.title).toBe('Local account has an empty password');
    expect(byRule.get('host-ssh-empty-passwords')!.severity).toBe('CRITICAL');
    expect(byRule.get('host-world-writable-sensitive-file')!.details.evidence).toEqual(['/etc/passwd mode 0666']);
    expect(byRule.get('host-account-extra-uid0')!.details.evidence).toEqual(['toor (uid 0, shell /bin/sh)']);
    expect(byRule.get('host-account-empty-password')!.details.evidence).toEqual(['guest (uid 1001)']);
    expect(byRule.get('host-service-listening-all-interfaces')!.details.evidence).toEqual(['tcp/8080 on 0.0.0.0 (app)']);
    // No DROP on the input hook for IPv4, and no IPv6 chain at all.
    expect(byRule.get('host-firewall-default-accept')!.details.evidence).toEqual(['iptables ip filter/INPUT policy ACCEPT']);
    for (const f of list) expect(f.id).toBe(`${f.rule_id}:${nodeId(machine)}`);
  });

  it('leaves a rule undecided when its collection was not collected or cannot be judged', async () => {
    const body = await send('agent-rules', machine, '2026-11-23T12:10:00.000Z', {
      ...bad,
      local_users: [{ username: 'guest', uid: 1001, gid: 1001, home: '/home/guest', shell: '/bin/bash', last_login: null, password_status: 'unknown' }],
      collectors: [{ name: 'firewall_policies', status: 'skipped', reason: 'neither iptables-save nor nft is installed', items: 0, duration_ms: 1 }],
      firewall_policies: undefined,
    });
    const rules = Object.fromEntries(body.rules.map((r: { id: string; state: string; reason?: string }) => [r.id, r]));
    expect(rules['host-firewall-default-accept']).toEqual({ id: 'host-firewall-default-accept', state: 'not_evaluated', reason: 'not collected: firewall_policies' });
    expect(rules['host-account-empty-password']).toMatchObject({ state: 'not_evaluated', reason: '1 item(s) cannot be judged' });
    // Without root in the list, no account has uid 0 besides root: that rule is decided.
    expect(rules['host-account-extra-uid0'].state).toBe('compliant');
    const status = statusOf(await findings(machine));
    expect(status['host-firewall-default-accept']).toBe('open');
    expect(status['host-account-empty-password']).toBe('open');
    expect(status['host-account-extra-uid0']).toBe('resolved');
    // Undecided is an unknown outcome, recorded per rule with what the host lacks (issue 22, fail closed).
    const unknowns = await unknownOf(machine);
    expect(unknowns.map((u) => [u.rule_id, u.reason, u.missing_paths, u.detail])).toEqual([
      ['host-account-empty-password', 'not_collected', [], '1 item(s) cannot be judged'],
      ['host-firewall-default-accept', 'not_collected', ['firewall_policies'], 'not collected: firewall_policies'],
    ]);
    expect(unknowns[1]).toMatchObject({ resource_type: 'host.os.instance', title: 'Host firewall accepts inbound traffic by default', run_id: null });
  });

  it('an sshd_config the agent could not read leaves the SSH rules unknown, not passed', async () => {
    const other = 'rules000000000000000000000000002';
    const body = await send('agent-sshd', other, '2026-11-23T12:11:00.000Z', {
      config_checks: [{ id: 'sysctl.kernel.randomize_va_space', value: '2', source: '/proc/sys/kernel/randomize_va_space' }],
      collectors: [{ name: 'config_checks', status: 'partial', reason: '/etc/ssh/sshd_config is not readable', items: 1, duration_ms: 1 }],
    });
    const rules = Object.fromEntries(body.rules.map((r: { id: string; state: string }) => [r.id, r.state]));
    expect(rules['host-ssh-root-login']).toBe('not_evaluated');
    expect(rules['host-ssh-empty-passwords']).toBe('not_evaluated');
    expect((await unknownOf(other)).map((u) => [u.rule_id, u.reason])).toEqual([
      ['host-ssh-empty-passwords', 'not_collected'],
      ['host-ssh-root-login', 'not_collected'],
    ]);
    // No sshd_config at all (no SSH daemon): nothing permits root login, a pass.
    const again = await send('agent-sshd', other, '2026-11-23T12:12:00.000Z', { config_checks: [], collectors: [] });
    expect(Object.fromEntries(again.rules.map((r: { id: string; state: string }) => [r.id, r.state]))['host-ssh-root-login']).toBe('compliant');
    expect(await unknownOf(other)).toEqual([]);
  });

  it('resolves what the next report no longer shows', async () => {
    const body = await send('agent-rules', machine, '2026-11-23T12:15:00.000Z');
    expect(body.findings.resolved).toBe(6);
    // Every rule decided again: no unknown left.
    expect(await unknownOf(machine)).toEqual([]);
    const list = await findings(machine);
    const rules = list.filter((f) => f.tags.includes('host-configuration'));
    expect(rules).toHaveLength(7);
    expect(rules.every((f) => f.status === 'resolved' && f.resolved_by === 'agent')).toBe(true);
    // A drift finding is closed by a person who confirmed the change, not by the next report.
    expect(list.filter((f) => f.tags.includes('config-drift')).map((f) => f.status)).toEqual(['open']);
  });
});

describe('config drift', () => {
  const machine = 'drift000000000000000000000000001';
  const file = (path: string, sha: string, extra: Partial<NonNullable<AgentReport['file_integrity']>[number]> = {}) => ({
    path,
    sha256: sha,
    size_bytes: 100,
    modified_at: '2026-11-01T00:00:00.000Z',
    permissions: '0644',
    owner: 'root',
    group: 'root',
    ...extra,
  });
  const A = 'a'.repeat(64);
  const B = 'b'.repeat(64);
  const C = 'c'.repeat(64);

  it('sets the baseline on first sight: no finding', async () => {
    const body = await send('agent-drift', machine, '2026-11-23T12:00:00.000Z', {
      file_integrity: [file('/etc/passwd', A), file('/etc/ssh/sshd_config', A), file('/etc/shadow', A, { permissions: '0640', group: 'shadow' })],
    });
    expect(body.findings.drifted_files).toBe(0);
    expect((await findings(machine)).filter((f) => f.tags.includes('config-drift'))).toEqual([]);
  });

  it('a changed SHA-256 (or mode, owner) creates a config-drift finding with the previous and new hash', async () => {
    const body = await send('agent-drift', machine, '2026-11-23T12:05:00.000Z', {
      file_integrity: [
        file('/etc/passwd', B, { size_bytes: 140 }),
        file('/etc/ssh/sshd_config', A, { permissions: '0600', owner: 'deploy' }),
        // An unprivileged agent cannot hash shadow: no hash is no change.
        file('/etc/shadow', null as unknown as string, { permissions: '0640', group: 'shadow' }),
      ],
    });
    expect(body.findings).toMatchObject({ drifted_files: 2, created: 2 });
    const drift = (await findings(machine)).filter((f) => f.tags.includes('config-drift'));
    expect(drift).toHaveLength(2);
    const passwd = drift.find((f) => f.details.path === '/etc/passwd')!;
    expect(passwd).toMatchObject({ status: 'open', severity: 'MEDIUM', tags: ['config-drift', 'host'] });
    expect(passwd.details).toMatchObject({ kind: 'config-drift', previous_sha256: A, sha256: B, changed: ['sha256', 'size_bytes'] });
    expect(passwd.details.previous).toMatchObject({ sha256: A, size_bytes: 100 });
    expect(passwd.details.current).toMatchObject({ sha256: B, size_bytes: 140 });
    const sshd = drift.find((f) => f.details.path === '/etc/ssh/sshd_config')!;
    expect(sshd.details).toMatchObject({ previous_sha256: A, sha256: A, changed: ['permissions', 'owner'] });
    expect(sshd.details.previous).toMatchObject({ permissions: '0644', owner: 'root' });
    expect(sshd.details.current).toMatchObject({ permissions: '0600', owner: 'deploy' });
  });

  it('ignores a report scanned before the last processed one: the baseline stays', async () => {
    const body = await send('agent-drift', machine, '2026-11-23T12:03:00.000Z', { file_integrity: [file('/etc/passwd', C)] });
    expect(body).toMatchObject({ ignored: true, reason: 'out_of_order' });
    const passwd = (await findings(machine)).find((f) => f.details.path === '/etc/passwd')!;
    expect(passwd.details.sha256).toBe(B);
    // The next report in order with the same hash as the last processed one finds no change.
    const next = await send('agent-drift', machine, '2026-11-23T12:10:00.000Z', { file_integrity: [file('/etc/passwd', B, { size_bytes: 140 })] });
    expect(next.findings.drifted_files).toBe(0);
    expect((await findings(machine)).filter((f) => f.tags.includes('config-drift') && f.status === 'open')).toHaveLength(2);
  });

  it('a further change of an open drift finding updates it and keeps the history', async () => {
    const body = await send('agent-drift', machine, '2026-11-23T12:15:00.000Z', { file_integrity: [file('/etc/passwd', C, { size_bytes: 140 })] });
    expect(body.findings).toMatchObject({ drifted_files: 1, created: 0, updated: 1 });
    const passwd = (await findings(machine)).find((f) => f.details.path === '/etc/passwd')!;
    expect(passwd.details).toMatchObject({ previous_sha256: B, sha256: C });
    expect(passwd.details.history.map((h: { previous_sha256: string; sha256: string }) => `${h.previous_sha256[0]}>${h.sha256[0]}`)).toEqual(['a>b', 'b>c']);
  });
});

describe('compliance re-evaluation', () => {
  it('queues an audit when the host node changed and a rule looks at host nodes; the audit judges the host', async () => {
    const machine = 'audit000000000000000000000000001';
    const first = await send('agent-audit', machine, '2026-11-23T12:00:00.000Z');
    // No rule about hosts yet: nothing to re-evaluate.
    expect(first.audit_run_id).toBeNull();
    await call(t.app, tenant.admin.token, {
      method: 'POST',
      url: `/api/v1/tenants/${tenant.id}/rules`,
      payload: {
        id: 'custom-host-kernel',
        title: 'Hosts run a supported kernel',
        description: 'Kernels of the 6.1 series only.',
        severity: 'LOW',
        resource_type: 'host.os.instance',
        framework: 'soc2',
        control_id: 'CC7.1',
        condition: '!resource.properties.kernel.startsWith("6.1.")',
        remediation: { summary: 'Upgrade the kernel.', steps: [{ action: 'Upgrade', command: 'sudo apt-get install linux-image-amd64' }] },
      },
      expect: 201,
    });
    const unchanged = await send('agent-audit', machine, '2026-11-23T12:05:00.000Z');
    expect(unchanged).toMatchObject({ node: 'unchanged', audit_run_id: null });
    const changed = await send('agent-audit', machine, '2026-11-23T12:10:00.000Z', { os: { ...buildReport().os, kernel: '5.10.0-30-amd64' } });
    expect(changed.node).toBe('changed');
    expect(changed.audit_run_id).toEqual(expect.any(String));
    await t.drain();
    const run = await call(t.app, tenant.admin.token, { method: 'GET', url: `/api/v1/tenants/${tenant.id}/findings/runs/${changed.audit_run_id}`, expect: 200 });
    expect(run.json().status).toBe('succeeded');
    const found = (await findings(machine)).find((f) => f.rule_id === 'custom-host-kernel');
    expect(found).toMatchObject({ status: 'open', severity: 'LOW' });
  });
});
