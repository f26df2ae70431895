import { createHash } from 'node:crypto';
import { arch as nodeArch, hostname as nodeHostname, platform } from 'node:os';
import type { AgentReport } from './report-schema.js';
import type { CollectContext } from './context.js';
import { bootTime } from './collectors/processes.js';

/**
 * The host part of a report: who the host is (a stable machine id, its names) and what it runs (the
 * os-release facts the server needs to pick the advisory ecosystem, kernel, architecture).
 */

/** /etc/os-release (or /usr/lib/os-release): KEY=value lines, values optionally quoted. */
export function parseOsRelease(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (!m) continue;
    let value = m[2]!.trim();
    if ((value.startsWith('"') && value.endsWith('"')) || (value.startsWith("'") && value.endsWith("'"))) {
      value = value.slice(1, -1).replace(/\\(["'$`\\])/g, '$1');
    }
    out[m[1]!] = value;
  }
  return out;
}

/**
 * The machine id sent to the server: a hash of /etc/machine-id under an application key, as
 * machine-id(5) asks ("should not be exposed in untrusted environments ... hash it with a fixed,
 * application-specific key"). Stable across agent reinstalls and hostname changes.
 */
export function appMachineId(rawMachineId: string): string {
  return createHash('sha256').update(`controlgraph-agent\u0000${rawMachineId.trim().toLowerCase()}`).digest('hex').slice(0, 32);
}

const FAMILIES: Record<string, AgentReport['os']['family']> = { linux: 'linux', win32: 'windows', darwin: 'darwin', freebsd: 'freebsd' };

const ARCH: Record<string, string> = { x64: 'x86_64', arm64: 'aarch64', ia32: 'i686', arm: 'armv7l', ppc64: 'ppc64le', s390x: 's390x', riscv64: 'riscv64' };

export interface HostFacts {
  host: AgentReport['host'];
  os: AgentReport['os'];
  /** Where the machine id came from, or why a fallback was used (for the log). */
  machineIdSource: string;
}

/**
 * Reads the host's identity. `fallbackId` is used when neither /etc/machine-id nor the D-Bus copy
 * exists (minimal containers): the caller persists one in its state directory.
 */
export async function hostFacts(ctx: CollectContext, options: { region?: string | null; fallbackId: () => Promise<string> }): Promise<HostFacts> {
  let raw: string | null = null;
  let machineIdSource = '';
  for (const p of ['/etc/machine-id', '/var/lib/dbus/machine-id']) {
    const text = (await ctx.readText(p))?.trim();
    if (text && /^[0-9a-fA-F]{32}$/.test(text)) {
      raw = text;
      machineIdSource = p;
      break;
    }
  }
  if (!raw) {
    raw = await options.fallbackId();
    machineIdSource = 'no /etc/machine-id: a generated id kept in the state directory';
  }
  const release = parseOsRelease((await ctx.readText('/etc/os-release')) ?? (await ctx.readText('/usr/lib/os-release')) ?? '');
  const hostname = ((await ctx.readText('/proc/sys/kernel/hostname'))?.trim() || (ctx.root === '/' ? nodeHostname() : '') || 'unknown').slice(0, 256);
  // Only a hostname that is already qualified says the FQDN: the kernel's domainname is the NIS
  // domain, and resolving the name would send DNS traffic from every host every cycle.
  const fqdn = hostname.includes('.') ? hostname : null;
  const boot = await bootTime(ctx);
  const kernel = (await ctx.readText('/proc/sys/kernel/osrelease'))?.trim() || null;
  const family = FAMILIES[platform()] ?? 'other';
  return {
    machineIdSource,
    host: {
      machine_id: appMachineId(raw),
      hostname,
      fqdn,
      region: options.region ?? null,
      boot_time: boot !== null ? new Date(boot * 1000).toISOString() : null,
      cloud: null,
    },
    os: {
      family,
      id: release.ID ?? null,
      version_id: release.VERSION_ID ?? null,
      name: release.NAME ?? null,
      version: release.VERSION ?? null,
      pretty_name: release.PRETTY_NAME ?? null,
      kernel,
      arch: ARCH[nodeArch()] ?? nodeArch(),
    },
  };
}
