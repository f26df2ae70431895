import { Type, type Static, type TSchema } from 'typebox';

/*
 * Lives with the agent (not in src/modules/agents, which re-exports it) because the agent's standalone
 * bundle must import nothing of the server. These two helpers build the same schema objects as
 * src/platform/http/schemas.ts does, so the server validates exactly what the agent checks.
 */
function StringEnum<const T extends readonly string[]>(values: T, options: Record<string, unknown> = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

function Nullable<T extends TSchema>(schema: T) {
  return Type.Unsafe<Static<T> | null>({ ...schema, nullable: true });
}

/**
 * The agent report, version 1.0: what one host sends after each scan cycle. One array per collection
 * of the spec's "Agent report contents" table, with exactly the table's fields (all required; `null`
 * where the agent could not learn a value), plus a few documented extensions the server needs:
 *
 * - `packages[].arch`, `source_name`, `source_version`: distribution advisories name SOURCE packages
 *   (dpkg's `${source:Package}`), so matching needs them;
 * - `firewall_policies`: the default policy of each filtering chain (the rule table alone cannot say
 *   whether traffic no rule matches is accepted);
 * - `config_checks`: configuration facts the agent evaluates locally (the report carries no file
 *   contents), e.g. `sshd.permit_root_login`;
 * - `collectors`: per collection, whether it was collected and, when not, why.
 *
 * Objects are closed: an unknown field is a 400 naming its path, so a typo never passes silently.
 * A collection that is absent was not collected; rules that need it are not evaluated (their findings
 * keep their state).
 */

export const REPORT_SCHEMA_VERSION = '1.0';

export const COLLECTIONS = [
  'packages',
  'processes',
  'system_services',
  'listening_ports',
  'connections',
  'network_interfaces',
  'firewall_rules',
  'firewall_policies',
  'windows_firewall_rules',
  'local_users',
  'sudo_access',
  'file_integrity',
  'config_checks',
] as const;
export type CollectionName = (typeof COLLECTIONS)[number];

export const COLLECTOR_STATUSES = ['ok', 'partial', 'skipped', 'failed', 'unsupported'] as const;
export type CollectorStatus = (typeof COLLECTOR_STATUSES)[number];

export const TCP_STATES = [
  'ESTABLISHED',
  'SYN_SENT',
  'SYN_RECV',
  'FIN_WAIT1',
  'FIN_WAIT2',
  'TIME_WAIT',
  'CLOSE',
  'CLOSE_WAIT',
  'LAST_ACK',
  'LISTEN',
  'CLOSING',
  'NEW_SYN_RECV',
] as const;

export const PASSWORD_STATUSES = ['set', 'empty', 'locked', 'none', 'unknown'] as const;

const closed = { additionalProperties: false } as const;
const Str = (max: number, options: Record<string, unknown> = {}) => Type.String({ maxLength: max, ...options });
const NStr = (max: number, options: Record<string, unknown> = {}) => Nullable(Str(max, options));
const DateTime = Type.String({ format: 'date-time', maxLength: 40 });
const NDateTime = Nullable(DateTime);
const Port = Type.Integer({ minimum: 0, maximum: 65535 });
const NInt = Nullable(Type.Integer({ minimum: 0 }));
const CVE = Type.String({ pattern: '^CVE-\\d{4}-\\d{4,}$', maxLength: 30 });

export const ReportPackage = Type.Object(
  {
    name: Str(256, { minLength: 1 }),
    version: Str(256, { minLength: 1 }),
    source: Str(32, { pattern: '^[a-z0-9][a-z0-9._-]*$', description: 'the package manager: dpkg, rpm, apk, pip, npm, …' }),
    installed_at: NDateTime,
    cves: Type.Array(CVE, { maxItems: 1000, description: 'CVEs the agent already knows of (usually empty: the server matches)' }),
    arch: Type.Optional(NStr(64)),
    source_name: Type.Optional(NStr(256, { description: "the distribution's source package (dpkg ${source:Package}, apk origin)" })),
    source_version: Type.Optional(NStr(256)),
  },
  closed,
);

export const ReportProcess = Type.Object(
  {
    pid: Type.Integer({ minimum: 0 }),
    name: Str(256),
    user: NStr(256),
    cmdline: Str(4096),
    cpu_percent: Type.Number({ minimum: 0 }),
    memory_mb: Type.Number({ minimum: 0 }),
    status: Str(32),
    parent_pid: NInt,
    start_time: NDateTime,
  },
  closed,
);

export const ReportService = Type.Object(
  {
    name: Str(256, { minLength: 1 }),
    status: Str(32, { description: 'active, inactive, failed, activating, … or unknown' }),
    enabled: Type.Boolean(),
    description: NStr(1024),
  },
  closed,
);

export const ReportListeningPort = Type.Object(
  {
    port: Port,
    protocol: StringEnum(['tcp', 'udp'] as const),
    address: Str(64, { description: '0.0.0.0 and :: mean every interface' }),
    pid: NInt,
    process: NStr(256),
  },
  closed,
);

export const ReportConnection = Type.Object(
  {
    local_address: Str(80),
    remote_address: Str(80),
    state: StringEnum(TCP_STATES),
    pid: NInt,
    process: NStr(256),
  },
  closed,
);

export const ReportInterface = Type.Object(
  {
    name: Str(64, { minLength: 1 }),
    mac: NStr(64),
    ipv4: Type.Array(Str(32), { maxItems: 256 }),
    ipv6: Type.Array(Str(64), { maxItems: 256 }),
    mtu: NInt,
    state: Str(32),
  },
  closed,
);

export const ReportFirewallRule = Type.Object(
  {
    chain: Str(128, { minLength: 1 }),
    action: Str(64),
    protocol: NStr(32),
    source: NStr(256),
    destination: NStr(256),
    dport: NStr(256, { description: 'a port, a range (1000:2000) or a list (80,443)' }),
    comment: NStr(1024),
  },
  closed,
);

export const ReportFirewallPolicy = Type.Object(
  {
    backend: StringEnum(['iptables', 'ip6tables', 'nftables'] as const),
    family: StringEnum(['ip', 'ip6', 'inet', 'arp', 'bridge', 'netdev'] as const),
    table: Str(128),
    chain: Str(128),
    hook: NStr(32, { description: 'input, forward, output, prerouting, postrouting, ingress' }),
    policy: Str(32, { description: 'ACCEPT or DROP' }),
  },
  closed,
);

export const ReportWindowsFirewallRule = Type.Object(
  {
    name: Str(512),
    direction: StringEnum(['in', 'out'] as const),
    action: Str(32),
    protocol: NStr(32),
    local_port: NStr(256),
    enabled: Type.Boolean(),
    profile: Str(64),
  },
  closed,
);

export const ReportLocalUser = Type.Object(
  {
    username: Str(256, { minLength: 1 }),
    uid: Type.Integer({ minimum: 0 }),
    gid: Type.Integer({ minimum: 0 }),
    home: Str(1024),
    shell: Str(1024),
    last_login: NDateTime,
    password_status: StringEnum(PASSWORD_STATUSES, {
      description: 'set, empty (no password needed), locked, none (no password entry), unknown (shadow not readable); hashes are never collected',
    }),
  },
  closed,
);

export const ReportSudoAccess = Type.Object(
  {
    user: Str(256, { minLength: 1, description: 'a user, or %group' }),
    sudo_rules: Type.Array(Str(4096), { maxItems: 1000 }),
  },
  closed,
);

export const ReportFile = Type.Object(
  {
    path: Str(4096, { pattern: '^/', minLength: 1 }),
    sha256: NStr(64, { pattern: '^[0-9a-f]{64}$', description: 'null when the file is not readable by the agent' }),
    size_bytes: NInt,
    modified_at: NDateTime,
    permissions: NStr(4, { pattern: '^[0-7]{3,4}$', description: 'octal, e.g. 0644' }),
    owner: NStr(256),
    group: NStr(256),
  },
  closed,
);

export const ReportConfigCheck = Type.Object(
  {
    id: Str(128, { pattern: '^[a-z0-9][a-z0-9_.-]*$' }),
    value: NStr(1024),
    source: NStr(4096, { description: 'where the value comes from, e.g. /etc/ssh/sshd_config:32 or default' }),
  },
  closed,
);

export const ReportCollector = Type.Object(
  {
    name: StringEnum(COLLECTIONS),
    status: StringEnum(COLLECTOR_STATUSES),
    reason: NStr(2048),
    items: Type.Integer({ minimum: 0 }),
    duration_ms: Type.Integer({ minimum: 0 }),
  },
  closed,
);

export const AgentReport = Type.Object(
  {
    schema_version: StringEnum([REPORT_SCHEMA_VERSION] as const, { description: 'the report format version' }),
    agent_id: Str(128, { pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$', description: 'must equal the agentID of the path' }),
    agent_version: Str(64, { minLength: 1 }),
    scan_id: Str(128, { pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$', description: 'unique per scan cycle' }),
    scanned_at: DateTime,
    host: Type.Object(
      {
        machine_id: Str(128, {
          pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$',
          description: 'stable host id; the agent sends an app-specific hash of /etc/machine-id, never the id itself',
        }),
        hostname: Str(256, { minLength: 1 }),
        fqdn: Type.Optional(NStr(256)),
        region: Type.Optional(NStr(64, { pattern: '^[a-z0-9][a-z0-9-]*$', description: 'region part of the node id; default local' })),
        boot_time: Type.Optional(NDateTime),
        cloud: Type.Optional(
          Nullable(
            Type.Object(
              {
                provider: Str(32, { pattern: '^[a-z0-9-]+$' }),
                instance_id: Str(128, { minLength: 1 }),
                region: Type.Optional(NStr(64)),
                account_id: Type.Optional(NStr(64)),
              },
              closed,
            ),
          ),
        ),
      },
      closed,
    ),
    os: Type.Object(
      {
        family: StringEnum(['linux', 'windows', 'darwin', 'freebsd', 'other'] as const),
        id: NStr(64, { description: 'os-release ID, e.g. debian' }),
        version_id: NStr(64, { description: 'os-release VERSION_ID, e.g. 12' }),
        name: NStr(256),
        version: NStr(256),
        pretty_name: NStr(256),
        kernel: NStr(256),
        arch: NStr(64),
      },
      closed,
    ),
    collectors: Type.Array(ReportCollector, { maxItems: COLLECTIONS.length * 2 }),
    packages: Type.Optional(Type.Array(ReportPackage, { maxItems: 100_000 })),
    processes: Type.Optional(Type.Array(ReportProcess, { maxItems: 50_000 })),
    system_services: Type.Optional(Type.Array(ReportService, { maxItems: 20_000 })),
    listening_ports: Type.Optional(Type.Array(ReportListeningPort, { maxItems: 20_000 })),
    connections: Type.Optional(Type.Array(ReportConnection, { maxItems: 50_000 })),
    network_interfaces: Type.Optional(Type.Array(ReportInterface, { maxItems: 4_096 })),
    firewall_rules: Type.Optional(Type.Array(ReportFirewallRule, { maxItems: 50_000 })),
    firewall_policies: Type.Optional(Type.Array(ReportFirewallPolicy, { maxItems: 4_096 })),
    windows_firewall_rules: Type.Optional(Type.Array(ReportWindowsFirewallRule, { maxItems: 50_000 })),
    local_users: Type.Optional(Type.Array(ReportLocalUser, { maxItems: 100_000 })),
    sudo_access: Type.Optional(Type.Array(ReportSudoAccess, { maxItems: 100_000 })),
    file_integrity: Type.Optional(Type.Array(ReportFile, { maxItems: 20_000 })),
    config_checks: Type.Optional(Type.Array(ReportConfigCheck, { maxItems: 1_000 })),
  },
  {
    ...closed,
    description:
      'Host agent report, format 1.0 (gzip-compressed JSON: Content-Encoding: gzip). One array per collection; an absent ' +
      'collection was not collected. See src/modules/agents/README.md.',
  },
);

export type AgentReport = Static<typeof AgentReport>;
export type ReportPackage = Static<typeof ReportPackage>;
export type ReportProcess = Static<typeof ReportProcess>;
export type ReportService = Static<typeof ReportService>;
export type ReportListeningPort = Static<typeof ReportListeningPort>;
export type ReportConnection = Static<typeof ReportConnection>;
export type ReportInterface = Static<typeof ReportInterface>;
export type ReportFirewallRule = Static<typeof ReportFirewallRule>;
export type ReportFirewallPolicy = Static<typeof ReportFirewallPolicy>;
export type ReportWindowsFirewallRule = Static<typeof ReportWindowsFirewallRule>;
export type ReportLocalUser = Static<typeof ReportLocalUser>;
export type ReportSudoAccess = Static<typeof ReportSudoAccess>;
export type ReportFile = Static<typeof ReportFile>;
export type ReportConfigCheck = Static<typeof ReportConfigCheck>;
export type ReportCollector = Static<typeof ReportCollector>;
