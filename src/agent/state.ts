import { randomBytes } from 'node:crypto';
import { homedir } from 'node:os';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The agent's state directory: its spool, its agent id, and a generated machine id for hosts that
 * have none. Root uses /var/lib/controlgraph-agent; any other user the XDG state directory, so an
 * unprivileged agent needs no directory made for it.
 */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  if (typeof process.getuid === 'function' && process.getuid() === 0) return '/var/lib/controlgraph-agent';
  const base = env.XDG_STATE_HOME || join(env.HOME || homedir(), '.local', 'state');
  return join(base, 'controlgraph-agent');
}

export const AGENT_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export class AgentState {
  constructor(readonly dir: string) {}

  async init(): Promise<void> {
    try {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
    } catch (error) {
      throw new Error(`cannot create the state directory ${this.dir} (${(error as NodeJS.ErrnoException).code}): choose one with --state-dir`);
    }
  }

  private async readOrCreate(file: string, create: () => string, valid: RegExp): Promise<string> {
    const path = join(this.dir, file);
    try {
      const value = (await readFile(path, 'utf8')).trim();
      if (valid.test(value)) return value;
    } catch {
      // first run
    }
    const value = create();
    await writeFile(`${path}.tmp`, `${value}\n`, { mode: 0o600 });
    await rename(`${path}.tmp`, path);
    return value;
  }

  /**
   * The agent id: kept across runs so the server sees one agent per host. The first run names it after
   * the host (`<hostname>-<machine hash prefix>`), which reads well in the server's agent list.
   */
  agentId(hostname: string, machineId: string): Promise<string> {
    const slug =
      hostname
        .toLowerCase()
        .replace(/[^a-z0-9._-]+/g, '-')
        .replace(/^[^a-z0-9]+/, '')
        .slice(0, 60) || 'host';
    return this.readOrCreate('agent-id', () => `${slug}-${machineId.slice(0, 12)}`, AGENT_ID);
  }

  /** A machine id for hosts without /etc/machine-id (32 hex digits, like machine-id(5)). */
  fallbackMachineId(): Promise<string> {
    return this.readOrCreate('machine-id', () => randomBytes(16).toString('hex'), /^[0-9a-f]{32}$/);
  }
}
