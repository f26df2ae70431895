import type { Kysely } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import type { Scope } from '../../platform/db/scope.js';
import type { AgentReport } from './report-schema.js';
import type { HostPackage } from './packages.js';
import { addEdgeUnlessPresent, nodeIdByNativeId, writeNodeUnlessUnchanged } from '../graph/index.js';

/**
 * The host node of the graph. Id: `host:<region>:host.os.instance:<machine_id>` (the graph's
 * `<provider>:<region>:<type>:<native_id>`), provider `host`, region the report's `host.region` or
 * `local`, native id the agent's machine id (an app-specific hash of /etc/machine-id: stable across
 * agent reinstalls and hostname changes, never the raw id).
 *
 * Its properties are the report's facts and small summaries, never the collections themselves: every
 * audit reads every node row, and a host's packages and processes run into thousands. They are also
 * chosen to stay equal between two reports of an unchanged host (no pids, no uptime, no scan time), so
 * the node only changes, and compliance only re-evaluates, when the host does.
 */
export const HOST_PROVIDER = 'host';
export const HOST_NODE_TYPE = 'host.os.instance';

export function hostRegion(report: Pick<AgentReport, 'host'>): string {
  return report.host.region ?? 'local';
}

export function hostNodeId(region: string, machineId: string): string {
  return `${HOST_PROVIDER}:${region}:${HOST_NODE_TYPE}:${machineId}`;
}

const LISTENING_CAP = 200;
const INTERFACES_CAP = 64;

export function hostProperties(report: AgentReport, packages: readonly HostPackage[] | null, previousPackageSummary: Record<string, unknown> | null) {
  const listening = report.listening_ports
    ? [
        ...new Map(
          report.listening_ports.map((p) => [`${p.protocol}/${p.address}/${p.port}`, { port: p.port, protocol: p.protocol, address: p.address, process: p.process }]),
        ).values(),
      ]
        .sort((a, b) => a.port - b.port || a.protocol.localeCompare(b.protocol) || a.address.localeCompare(b.address))
        .slice(0, LISTENING_CAP)
    : null;
  const managers = packages ? [...new Set(packages.map((p) => p.manager))].sort() : null;
  return {
    hostname: report.host.hostname,
    fqdn: report.host.fqdn ?? null,
    machine_id: report.host.machine_id,
    os: {
      family: report.os.family,
      id: report.os.id,
      version_id: report.os.version_id,
      name: report.os.name,
      version: report.os.version,
      pretty_name: report.os.pretty_name,
    },
    kernel: report.os.kernel,
    arch: report.os.arch,
    boot_time: report.host.boot_time ?? null,
    cloud: report.host.cloud ?? null,
    agent: { id: report.agent_id, version: report.agent_version },
    network_interfaces:
      report.network_interfaces?.slice(0, INTERFACES_CAP).map((i) => ({ name: i.name, mac: i.mac, ipv4: i.ipv4, ipv6: i.ipv6, mtu: i.mtu, state: i.state })) ?? null,
    listening_ports: listening,
    firewall_policies: report.firewall_policies ?? null,
    packages_summary: packages ? { count: packages.length, managers } : previousPackageSummary,
  };
}

export type NodeChange = 'created' | 'changed' | 'unchanged';

/** Upserts the node; an identical node is not written at all (its updated_at stays). */
export async function upsertHostNode(
  trx: Kysely<Database>,
  scope: Scope,
  now: Date,
  node: { id: string; region: string; native_id: string; name: string; account_id: string | null; properties: Record<string, unknown>; agentId: string },
): Promise<NodeChange> {
  return writeNodeUnlessUnchanged(trx, scope, now, {
    id: node.id,
    provider: HOST_PROVIDER,
    region: node.region,
    type: HOST_NODE_TYPE,
    native_id: node.native_id,
    name: node.name,
    account_id: node.account_id,
    properties: node.properties,
    source: { kind: 'agent', agent_id: node.agentId },
  });
}

/**
 * Links the host to the cloud instance it runs on (`same_as`), when the report names one and the
 * instance is a node of the workspace (e.g. `aws.ec2.instance` with that native id).
 */
export async function linkCloudInstance(
  trx: Kysely<Database>,
  scope: Scope,
  now: Date,
  hostId: string,
  cloud: { provider: string; instance_id: string } | null | undefined,
): Promise<string | null> {
  if (!cloud) return null;
  const instanceId = await nodeIdByNativeId(trx, scope, cloud.provider, cloud.instance_id, hostId);
  if (!instanceId) return null;
  await addEdgeUnlessPresent(trx, scope, { source: hostId, target: instanceId, type: 'same_as', properties: { via: 'agent' } }, now);
  return instanceId;
}
