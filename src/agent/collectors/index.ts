import { platform } from 'node:os';
import type { CollectionName } from '../report-schema.js';
import { Skip, type Collector, type CollectorTable } from '../context.js';
import { collectLocalUsers, collectSudo } from './accounts.js';
import { collectConfigChecks, collectFileIntegrity } from './files.js';
import { collectFirewallPolicies, collectFirewallRules } from './firewall.js';
import { collectConnections, collectInterfaces, collectListeningPorts } from './network.js';
import { collectPackages } from './packages.js';
import { collectProcesses } from './processes.js';
import { collectServices } from './services.js';

/** Every collection of the report and the collector that fills it on this platform. */
export function linuxCollectors(): Record<CollectionName, Collector> {
  const unsupported =
    (what: string): Collector =>
    async () => {
      throw new Skip(what, 'unsupported');
    };
  return {
    packages: collectPackages as Collector,
    processes: collectProcesses as Collector,
    system_services: collectServices as Collector,
    listening_ports: collectListeningPorts as Collector,
    connections: collectConnections as Collector,
    network_interfaces: collectInterfaces as Collector,
    firewall_rules: collectFirewallRules as Collector,
    firewall_policies: collectFirewallPolicies as Collector,
    windows_firewall_rules: unsupported('Windows firewall rules exist on Windows hosts only'),
    local_users: collectLocalUsers as Collector,
    sudo_access: collectSudo as Collector,
    file_integrity: collectFileIntegrity as Collector,
    config_checks: collectConfigChecks as Collector,
  };
}

/** The collectors of the running platform: the agent reads Linux sources; elsewhere it says so. */
export function platformCollectors(): CollectorTable {
  if (platform() === 'linux') return linuxCollectors();
  const table: CollectorTable = {};
  for (const name of Object.keys(linuxCollectors()) as CollectionName[]) {
    table[name] = async () => {
      throw new Skip(`the agent reads Linux sources; this host runs ${platform()}`, 'unsupported');
    };
  }
  return table;
}
