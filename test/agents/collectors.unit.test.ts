import { createHash } from 'node:crypto';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContext, type CollectContext } from '../../src/agent/context.js';
import { collectLocalUsers, collectSudo, parsePasswd } from '../../src/agent/collectors/accounts.js';
import { collectConfigChecks, collectFileIntegrity } from '../../src/agent/collectors/files.js';
import { collectFirewallPolicies, collectFirewallRules, parseIptablesSave, parseNftJson } from '../../src/agent/collectors/firewall.js';
import { collectConnections, collectInterfaces, collectListeningPorts, parseProcNet } from '../../src/agent/collectors/network.js';
import { collectPackages, parseRpmQuery } from '../../src/agent/collectors/packages.js';
import { collectProcesses, parseStat } from '../../src/agent/collectors/processes.js';
import { collectServices, parseListUnitFiles, parseListUnits } from '../../src/agent/collectors/services.js';
import { appMachineId, hostFacts } from '../../src/agent/host.js';
import { runCycle } from '../../src/agent/cycle.js';
import { fixture } from './helpers.js';

/**
 * Each collector against a fixture host root (test/fixtures/agents/root: a small Debian host's
 * files, /proc and /sys as the kernel writes them). The root is copied to a temporary directory
 * first, because what git cannot store is set up here: file modes, mtimes, and the socket links of
 * /proc/<pid>/fd. Commands that need a real kernel facility (iptables-save, nft, rpm) are replaced by
 * stub scripts on PATH printing recorded output: the collectors still find and run them the way they
 * do on a host.
 */

let root: string;
let bin: string;
const ctx = (options: Parameters<typeof createContext>[0] = {}): CollectContext => createContext({ root, ...options });

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'cg-agent-root-'));
  cpSync(fixture('root'), root, { recursive: true, verbatimSymlinks: true });
  chmodSync(join(root, 'etc/shadow'), 0o640);
  chmodSync(join(root, 'etc/crontab'), 0o666);
  const installed = new Date('2025-03-01T10:00:00.000Z');
  utimesSync(join(root, 'var/lib/dpkg/info/openssh-server.list'), installed, installed);
  utimesSync(join(root, 'var/lib/dpkg/info/libssl3:amd64.list'), installed, new Date('2025-04-02T08:30:00.000Z'));
  mkdirSync(join(root, 'proc/4242/fd'), { recursive: true });
  symlinkSync('socket:[50001]', join(root, 'proc/4242/fd/3'));
  symlinkSync('socket:[50003]', join(root, 'proc/4242/fd/7'));
  symlinkSync('/dev/null', join(root, 'proc/4242/fd/0'));
  mkdirSync(join(root, 'proc/1/fd'), { recursive: true });
  symlinkSync('socket:[50004]', join(root, 'proc/1/fd/5'));

  bin = mkdtempSync(join(tmpdir(), 'cg-agent-bin-'));
  const stub = (name: string, body: string) => {
    writeFileSync(join(bin, name), `#!/bin/sh\n${body}\n`);
    chmodSync(join(bin, name), 0o755);
  };
  stub('iptables-save', `cat '${fixture('commands/iptables-save.txt')}'`);
  stub('ip6tables-save', `cat '${fixture('commands/ip6tables-save.txt')}'`);
  stub('nft', `[ "$1 $2 $3" = "-j list ruleset" ] || exit 2; cat '${fixture('commands/nft-ruleset.json')}'`);
  stub('rpm', `echo "$@" > '${join(bin, 'rpm-args')}'; cat '${fixture('commands/rpm-qa.txt')}'`);
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
  rmSync(bin, { recursive: true, force: true });
});

/** Runs with the stub directory first on PATH. */
async function withStubs<T>(run: () => Promise<T>): Promise<T> {
  const before = process.env.PATH;
  process.env.PATH = `${bin}:${before}`;
  try {
    return await run();
  } finally {
    process.env.PATH = before;
  }
}

describe('packages', () => {
  it('reads installed dpkg packages with their source package and install time', async () => {
    const result = await collectPackages(ctx());
    expect(result.status ?? 'ok').toBe('ok');
    expect(result.items).toEqual([
      {
        name: 'openssh-server',
        version: '1:9.2p1-2+deb12u3',
        source: 'dpkg',
        cves: [],
        arch: 'amd64',
        source_name: 'openssh',
        source_version: '1:9.2p1-2+deb12u3',
        installed_at: '2025-03-01T10:00:00.000Z',
      },
      {
        name: 'libssl3',
        version: '3.0.15-1~deb12u1+b1',
        source: 'dpkg',
        cves: [],
        arch: 'amd64',
        source_name: 'openssl',
        source_version: '3.0.15-1~deb12u1',
        installed_at: '2025-04-02T08:30:00.000Z',
      },
      { name: 'bash', version: '5.2.15-2+b7', source: 'dpkg', cves: [], arch: 'amd64', source_name: 'bash', source_version: '5.2.15-2+b7', installed_at: null },
    ]);
    // "deinstall ok config-files" is not installed.
    expect(result.items.map((p) => p.name)).not.toContain('telnet');
  });

  it('reads the apk database of an Alpine root', async () => {
    const result = await collectPackages(createContext({ root: fixture('alpine') }));
    expect(result.items).toEqual([
      { name: 'musl', version: '1.2.4-r2', source: 'apk', installed_at: null, cves: [], arch: 'x86_64', source_name: 'musl', source_version: '1.2.4-r2' },
      { name: 'libcrypto3', version: '3.1.4-r1', source: 'apk', installed_at: null, cves: [], arch: 'x86_64', source_name: 'openssl', source_version: '3.1.4-r1' },
    ]);
  });

  it('reads the RPM database through rpm --root, and says when rpm is missing', async () => {
    const rpmRoot = mkdtempSync(join(tmpdir(), 'cg-agent-rpm-'));
    try {
      mkdirSync(join(rpmRoot, 'var/lib/rpm'), { recursive: true });
      const result = await withStubs(() => collectPackages(createContext({ root: rpmRoot })));
      expect(readFileSync(join(bin, 'rpm-args'), 'utf8')).toMatch(new RegExp(`^--root ${rpmRoot} -qa --qf `));
      expect(result.items).toEqual([
        {
          name: 'openssl-libs',
          version: '1:3.0.7-27.el9',
          source: 'rpm',
          installed_at: '2023-11-14T22:13:20.000Z',
          cves: [],
          arch: 'x86_64',
          source_name: 'openssl',
          source_version: '3.0.7-27.el9',
        },
        {
          name: 'bash',
          version: '5.1.8-9.el9',
          source: 'rpm',
          installed_at: '2023-11-14T22:15:00.000Z',
          cves: [],
          arch: 'x86_64',
          source_name: 'bash',
          source_version: '5.1.8-9.el9',
        },
      ]);
      const before = process.env.PATH;
      process.env.PATH = '/nonexistent';
      try {
        const missing = createContext({ root: rpmRoot });
        missing.which = async () => null;
        await expect(collectPackages(missing)).rejects.toMatchObject({ name: 'Skip', message: 'an RPM database exists but the rpm command is missing' });
      } finally {
        process.env.PATH = before;
      }
    } finally {
      rmSync(rpmRoot, { recursive: true, force: true });
    }
  });

  it('skips a root without any package database, saying so', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'cg-agent-empty-'));
    try {
      await expect(collectPackages(createContext({ root: empty }))).rejects.toMatchObject({
        name: 'Skip',
        status: 'skipped',
        message: 'no package database found (dpkg, rpm or apk)',
      });
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('parses rpm query output, leaving out gpg-pubkey pseudo-packages', () => {
    expect(parseRpmQuery(readFileSync(fixture('commands/rpm-qa.txt'), 'utf8')).map((p) => p.name)).toEqual(['openssl-libs', 'bash']);
  });
});

describe('processes', () => {
  it('reads /proc: name, user, command line, CPU over the lifetime, memory, state, parent, start time', async () => {
    const result = await collectProcesses(ctx());
    expect(result.items).toEqual([
      // 100 ticks of CPU in (3600 - 0.1) s; 3200 pages of 4 KiB.
      {
        pid: 1,
        name: 'tini',
        user: 'root',
        cmdline: '/usr/bin/tini -- /opt/app/bin/app',
        cpu_percent: 0,
        memory_mb: 12.5,
        status: 'sleeping',
        parent_pid: 0,
        start_time: '2025-11-23T08:00:00.100Z',
      },
      // 180 s of CPU in the 1800 s since it started.
      {
        pid: 4242,
        name: 'my (odd) app',
        user: 'deploy',
        cmdline: '/opt/app/bin/app --port 8080',
        cpu_percent: 10,
        memory_mb: 100,
        status: 'running',
        parent_pid: 1,
        start_time: '2025-11-23T08:30:00.000Z',
      },
    ]);
  });

  it('parses a stat line whose command name holds spaces and parentheses', () => {
    expect(parseStat('7 (a) b) (c) Z 3 7 7 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 99 0 5')).toMatchObject({
      comm: 'a) b) (c',
      state: 'Z',
      ppid: 3,
      utime: 1,
      stime: 2,
      starttime: 99,
      rss: 5,
    });
  });
});

describe('sockets and interfaces', () => {
  it('lists listening ports with the owning process where its fds are readable', async () => {
    const result = await collectListeningPorts(ctx());
    expect(result.items).toEqual([
      { port: 22, protocol: 'tcp', address: '::', pid: 1, process: 'tini' },
      { port: 53, protocol: 'udp', address: '127.0.0.53', pid: null, process: null },
      { port: 5432, protocol: 'tcp', address: '127.0.0.1', pid: null, process: null },
      { port: 8080, protocol: 'tcp', address: '0.0.0.0', pid: 4242, process: 'my (odd) app' },
    ]);
    expect(result.reason).toMatch(/2 socket\(s\)/);
  });

  it('lists TCP connections with their state; TIME_WAIT sockets belong to no process', async () => {
    const result = await collectConnections(ctx());
    expect(result.items).toEqual([
      { local_address: '10.0.0.5:8080', remote_address: '10.0.0.9:51422', state: 'ESTABLISHED', pid: 4242, process: 'my (odd) app' },
      { local_address: '10.0.0.5:53924', remote_address: '10.0.0.10:443', state: 'TIME_WAIT', pid: null, process: null },
    ]);
  });

  it('decodes IPv6 and IPv4-mapped addresses of /proc/net/tcp6', () => {
    const text = `header\n   0: 0000000000000000FFFF00000100007F:1F90 00000000000000000000000001000000:0000 0A 0:0 00:0 0 0 0 1 1\n   1: B80D0120000000000000000001000000:0050 00000000000000000000000000000000:0000 0A 0:0 00:0 0 0 0 2 1`;
    expect(parseProcNet(text, 'tcp', 6).map((r) => `${r.localAddress} ${r.localPort} ${r.state}`)).toEqual(['::ffff:127.0.0.1 8080 LISTEN', '2001:db8::1 80 LISTEN']);
  });

  it('reads interfaces from /sys/class/net', async () => {
    const result = await collectInterfaces(ctx());
    // Addresses come from the kernel only for the agent's own root (/).
    expect(result.items).toEqual([
      { name: 'eth0', mac: '02:42:ac:11:00:02', ipv4: [], ipv6: [], mtu: 1500, state: 'up' },
      { name: 'lo', mac: '00:00:00:00:00:00', ipv4: [], ipv6: [], mtu: 65536, state: 'unknown' },
    ]);
  });
});

describe('accounts', () => {
  it('reads users and their password status from shadow without ever keeping a hash', async () => {
    const result = await collectLocalUsers(ctx());
    expect(result.status ?? 'ok').toBe('ok');
    expect(result.items.map((u) => [u.username, u.uid, u.password_status])).toEqual([
      ['root', 0, 'locked'],
      ['daemon', 1, 'locked'],
      ['sshd', 100, 'locked'],
      ['deploy', 1000, 'set'],
      ['toor', 0, 'set'],
      ['guest', 1001, 'empty'],
      // No x in passwd: the (empty) field there is the password.
      ['legacy', 1002, 'empty'],
    ]);
    expect(result.items[3]).toEqual({ username: 'deploy', uid: 1000, gid: 1000, home: '/home/deploy', shell: '/bin/bash', last_login: null, password_status: 'set' });
    const text = JSON.stringify(result);
    expect(text).not.toContain('FIXTURE');
    expect(text).not.toContain('$y$');
    expect(text).not.toContain('$6$');
  });

  it('says the password status is unknown when shadow is not readable', async () => {
    const noShadow = mkdtempSync(join(tmpdir(), 'cg-agent-noshadow-'));
    try {
      mkdirSync(join(noShadow, 'etc'));
      cpSync(join(root, 'etc/passwd'), join(noShadow, 'etc/passwd'));
      const result = await collectLocalUsers(createContext({ root: noShadow }));
      expect(result.status).toBe('partial');
      expect(result.reason).toBe('/etc/shadow is not readable (needs root): password status unknown for 6 account(s)');
      expect(result.items.find((u) => u.username === 'legacy')!.password_status).toBe('empty');
    } finally {
      rmSync(noShadow, { recursive: true, force: true });
    }
  });

  it('reads sudoers with its includes; group rules reach the members', async () => {
    const result = await collectSudo(ctx());
    expect(result.items).toEqual([
      { user: '%admins', sudo_rules: ['ALL=(ALL) SHUTDOWN'] },
      { user: '%sudo', sudo_rules: ['ALL=(ALL:ALL) ALL'] },
      {
        user: 'deploy',
        sudo_rules: ['ALL=(ALL:ALL) ALL (via %sudo)', 'ALL=(root) NOPASSWD: /usr/bin/systemctl restart app, /usr/bin/journalctl -u app'],
      },
      { user: 'guest', sudo_rules: ['ALL=(ALL) SHUTDOWN', 'ALL=(ALL) SHUTDOWN (via %admins)'] },
      { user: 'root', sudo_rules: ['ALL=(ALL:ALL) ALL'] },
    ]);
  });

  it('says sudo is not installed when there is no sudoers', async () => {
    const result = await collectSudo(createContext({ root: fixture('alpine') }));
    expect(result).toEqual({ items: [], reason: 'sudo is not installed (no /etc/sudoers)' });
  });

  it('parses passwd, ignoring NIS lines and bad ids', () => {
    expect(parsePasswd('+::::::\nbad:x:-1:0::/:/bin/sh\nok:x:5:5::/:/bin/sh\n').map((e) => e.username)).toEqual(['ok']);
  });
});

describe('file integrity and configuration', () => {
  it('hashes the built-in sensitive files and the --fim paths, with mode and owner', async () => {
    const result = await collectFileIntegrity(ctx({ fimPaths: ['/etc/os-release', '/etc/missing.conf'] }));
    const byPath = new Map(result.items.map((f) => [f.path, f]));
    expect([...byPath.keys()].sort()).toEqual([
      '/etc/cron.d/backup',
      '/etc/crontab',
      '/etc/group',
      '/etc/os-release',
      '/etc/passwd',
      '/etc/shadow',
      '/etc/ssh/sshd_config',
      '/etc/ssh/sshd_config.d/10-root.conf',
      '/etc/sudoers',
      '/etc/sudoers.d/README~',
      '/etc/sudoers.d/deploy',
      '/etc/sudoers.d/ignored.bak',
    ]);
    const passwd = readFileSync(join(root, 'etc/passwd'));
    expect(byPath.get('/etc/passwd')).toMatchObject({ sha256: createHash('sha256').update(passwd).digest('hex'), size_bytes: passwd.length, permissions: '0644' });
    expect(byPath.get('/etc/shadow')!.permissions).toBe('0640');
    expect(byPath.get('/etc/crontab')!.permissions).toBe('0666');
    // Owners are named from the host's own passwd and group.
    const uid = process.getuid!();
    expect(byPath.get('/etc/passwd')!.owner).toBe(uid === 0 ? 'root' : String(uid));
    expect(result.status).toBe('partial');
    expect(result.reason).toBe('not found: /etc/missing.conf');
  });

  it('monitors only the --fim paths with the default list off, walking directories', async () => {
    const result = await collectFileIntegrity(ctx({ defaultFim: false, fimPaths: ['/etc/ssh'] }));
    expect(result.items.map((f) => f.path)).toEqual(['/etc/ssh/sshd_config', '/etc/ssh/sshd_config.d/10-root.conf']);
    expect(result.status).toBe('ok');
  });

  it("derives sshd's effective settings (first value wins, Include read in place, Match blocks are not global) and sysctl facts", async () => {
    const result = await collectConfigChecks(ctx());
    expect(result.items).toEqual([
      { id: 'sshd.permit_root_login', value: 'yes', source: '/etc/ssh/sshd_config.d/10-root.conf:2' },
      { id: 'sshd.permit_empty_passwords', value: 'no', source: '/etc/ssh/sshd_config.d/10-root.conf:3' },
      { id: 'sshd.password_authentication', value: 'yes', source: '/etc/ssh/sshd_config:5' },
      { id: 'sshd.x11_forwarding', value: 'no', source: 'default' },
      { id: 'sysctl.kernel.randomize_va_space', value: '2', source: '/proc/sys/kernel/randomize_va_space' },
      { id: 'sysctl.net.ipv4.ip_forward', value: '1', source: '/proc/sys/net/ipv4/ip_forward' },
    ]);
  });
});

describe('services', () => {
  it('falls back to unit files when systemd is not PID 1: enablement from the .wants links', async () => {
    const result = await collectServices(ctx());
    expect(result.status).toBe('partial');
    expect(result.reason).toMatch(/^systemd is not running \(PID 1 is tini\): unit files on disk/);
    expect(result.items).toEqual([
      { name: 'cron.service', status: 'unknown', enabled: false, description: 'Regular background program processing daemon' },
      { name: 'ssh.service', status: 'unknown', enabled: true, description: 'OpenBSD Secure Shell server' },
    ]);
  });

  it('parses systemctl list-units and list-unit-files output', () => {
    const units = parseListUnits(readFileSync(fixture('commands/systemctl-list-units.txt'), 'utf8'));
    expect(units.get('nginx.service')).toEqual({ active: 'failed', sub: 'failed', description: 'A high performance web server and a reverse proxy server' });
    expect(units.get('plymouth-start.service')).toMatchObject({ active: 'inactive', sub: 'dead' });
    const files = parseListUnitFiles(readFileSync(fixture('commands/systemctl-list-unit-files.txt'), 'utf8'));
    expect(files.get('systemd-fsck-root.service')).toBe('enabled-runtime');
    expect(files.get('dbus.service')).toBe('static');
  });
});

describe('firewall', () => {
  it('reads iptables-save, ip6tables-save and nft when they are installed', async () => {
    const c = createContext({ root: '/' });
    const [rules, policies] = await withStubs(() => Promise.all([collectFirewallRules(c), collectFirewallPolicies(c)]));
    expect(rules.status ?? 'ok').toBe('ok');
    expect(rules.items).toContainEqual({ chain: 'INPUT', action: 'ACCEPT', protocol: 'tcp', source: '10.0.0.0/8', destination: null, dport: '22', comment: 'ssh from the VPC' });
    expect(rules.items).toContainEqual({ chain: 'INPUT', action: 'ACCEPT', protocol: 'tcp', source: null, destination: null, dport: '80,443', comment: null });
    expect(rules.items).toContainEqual({ chain: 'INPUT', action: 'DROP', protocol: 'udp', source: '!192.168.0.0/16', destination: null, dport: '161', comment: null });
    expect(rules.items).toContainEqual({
      chain: 'inet filter input',
      action: 'accept',
      protocol: 'tcp',
      source: '10.0.0.0/8',
      destination: null,
      dport: '22',
      comment: 'ssh from the VPC',
    });
    expect(rules.items).toContainEqual({ chain: 'inet filter input', action: 'jump web', protocol: 'tcp', source: null, destination: null, dport: '8000:8100', comment: null });
    // Only the filter table: the nat rule is not a filtering rule.
    expect(rules.items.some((r) => r.chain === 'PREROUTING')).toBe(false);
    expect(policies.items).toEqual([
      { backend: 'iptables', family: 'ip', table: 'filter', chain: 'INPUT', hook: 'input', policy: 'DROP' },
      { backend: 'iptables', family: 'ip', table: 'filter', chain: 'FORWARD', hook: 'forward', policy: 'DROP' },
      { backend: 'iptables', family: 'ip', table: 'filter', chain: 'OUTPUT', hook: 'output', policy: 'ACCEPT' },
      { backend: 'ip6tables', family: 'ip6', table: 'filter', chain: 'INPUT', hook: 'input', policy: 'ACCEPT' },
      { backend: 'ip6tables', family: 'ip6', table: 'filter', chain: 'FORWARD', hook: 'forward', policy: 'ACCEPT' },
      { backend: 'ip6tables', family: 'ip6', table: 'filter', chain: 'OUTPUT', hook: 'output', policy: 'ACCEPT' },
      { backend: 'nftables', family: 'inet', table: 'filter', chain: 'input', hook: 'input', policy: 'DROP' },
      { backend: 'nftables', family: 'inet', table: 'filter', chain: 'forward', hook: 'forward', policy: 'DROP' },
      { backend: 'nftables', family: 'inet', table: 'filter', chain: 'output', hook: 'output', policy: 'ACCEPT' },
    ]);
  });

  it('says why it skipped: no tools, or a root other than /', async () => {
    const none = createContext({ root: '/' });
    none.which = async () => null;
    await expect(collectFirewallRules(none)).rejects.toMatchObject({ name: 'Skip', message: 'neither iptables-save nor nft is installed' });
    await expect(collectFirewallRules(ctx())).rejects.toMatchObject({ name: 'Skip', message: expect.stringMatching(/only run against the host root/) });
  });

  it('reports the tool error when the firewall cannot be read (an unprivileged agent)', async () => {
    const denied = mkdtempSync(join(tmpdir(), 'cg-agent-denied-'));
    try {
      writeFileSync(
        join(denied, 'iptables-save'),
        '#!/bin/sh\necho "iptables-save v1.8.9 (nf_tables): Could not fetch rule set generation id: Permission denied (you must be root)" >&2\nexit 4\n',
      );
      chmodSync(join(denied, 'iptables-save'), 0o755);
      const c = createContext({ root: '/' });
      c.which = async (name) => (name === 'iptables-save' ? join(denied, 'iptables-save') : null);
      await expect(collectFirewallRules(c)).rejects.toMatchObject({
        name: 'Skip',
        message: expect.stringMatching(
          /^the firewall could not be read.*: iptables-save: iptables-save v1\.8\.9 \(nf_tables\): Could not fetch rule set generation id: Permission denied/,
        ),
      });
    } finally {
      rmSync(denied, { recursive: true, force: true });
    }
  });

  it('parses the nat-free filter table and nft JSON on their own', () => {
    expect(parseIptablesSave(readFileSync(fixture('commands/iptables-save.txt'), 'utf8'), 'iptables').rules).toHaveLength(6);
    expect(parseNftJson(readFileSync(fixture('commands/nft-ruleset.json'), 'utf8')).rules).toHaveLength(5);
  });
});

describe('host identity and the whole cycle', () => {
  it('reads os-release, hostname, kernel and a hashed machine id', async () => {
    const facts = await hostFacts(ctx(), { fallbackId: async () => 'f'.repeat(32) });
    expect(facts.host).toEqual({
      machine_id: appMachineId('0123456789abcdef0123456789abcdef'),
      hostname: 'fixture-host',
      fqdn: null,
      region: null,
      boot_time: '2025-11-23T08:00:00.000Z',
      cloud: null,
    });
    expect(facts.host.machine_id).not.toContain('0123456789abcdef');
    expect(facts.os).toMatchObject({
      family: 'linux',
      id: 'debian',
      version_id: '12',
      version: '12 (bookworm)',
      pretty_name: 'Debian GNU/Linux 12 (bookworm)',
      kernel: '6.1.0-26-amd64',
    });
    expect(facts.machineIdSource).toBe('/etc/machine-id');
  });

  it('runs every collector in parallel into one report, saying what was skipped and why', async () => {
    const { report } = await runCycle({ agentId: 'fixture-agent', agentVersion: '9.9.9', root, fallbackId: async () => 'f'.repeat(32), disabled: new Set(['connections']) });
    const status = Object.fromEntries(report.collectors.map((c) => [c.name, c.status]));
    expect(status).toEqual({
      packages: 'ok',
      processes: 'ok',
      system_services: 'partial',
      listening_ports: 'ok',
      connections: 'skipped',
      network_interfaces: 'ok',
      firewall_rules: 'skipped',
      firewall_policies: 'skipped',
      windows_firewall_rules: 'unsupported',
      local_users: 'ok',
      sudo_access: 'ok',
      file_integrity: 'ok',
      config_checks: 'ok',
    });
    expect(report.collectors.find((c) => c.name === 'connections')!.reason).toBe('disabled in the agent configuration (--disable)');
    expect(report.connections).toBeUndefined();
    expect(report.firewall_rules).toBeUndefined();
    expect(report.packages).toHaveLength(3);
    expect(report).toMatchObject({ schema_version: '1.0', agent_id: 'fixture-agent', agent_version: '9.9.9', host: { hostname: 'fixture-host' } });
  });

  it('leaves out items that do not fit the report format instead of spoiling the report', async () => {
    const { report } = await runCycle({
      agentId: 'fixture-agent',
      agentVersion: '1',
      root,
      fallbackId: async () => 'f'.repeat(32),
      collectors: {
        processes: async () => ({
          items: [{ pid: 1, name: 'ok', user: null, cmdline: '', cpu_percent: 0, memory_mb: 0, status: 'running', parent_pid: null, start_time: null }, { pid: -1 }],
        }),
        packages: async () => {
          throw new Error('database locked');
        },
      },
    });
    const processes = report.collectors.find((c) => c.name === 'processes')!;
    expect(processes).toMatchObject({ status: 'partial', items: 1 });
    expect(processes.reason).toMatch(/^1 item\(s\) left out that do not fit the report format/);
    expect(report.collectors.find((c) => c.name === 'packages')).toMatchObject({ status: 'failed', reason: 'database locked' });
    expect(report.collectors.find((c) => c.name === 'local_users')).toMatchObject({ status: 'unsupported' });
  });
});
