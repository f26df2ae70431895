import { PermanentJobError } from '../../platform/jobs/definition.js';
import type { NodeRecord } from '../graph/index.js';
import type { EdgeRecord } from '../graph/index.js';
import { awsInventory, type AwsConfig } from './aws.js';
import type { AwsCredentialProvider } from './connections/credentials.js';
import type { Inventory } from './inventory.js';
import { readStateFromS3 } from './state-source.js';
import { TerraformStateError, terraformStateInventory } from './terraform-state.js';
import type { DiscoveryPlugin } from './schemas.js';

/** What a job keeps of the terraform-state plugin's input (`state` is dropped once the job ended). */
export interface TerraformInput {
  state?: unknown;
  state_uri?: string;
  /** The cloud connection state_uri is read with (absent: the service's own credentials, if granted). */
  connection_id?: string;
  files?: Record<string, string>;
  default_region?: string;
  account_id?: string;
}

export interface PluginConfig {
  'terraform-state'?: TerraformInput;
  /** connection_id: the cloud connection the account is read with (absent: the service's own, if granted). */
  aws?: AwsConfig & { connection_id?: string };
}

/** How the plugins read: each plugin's credentials (see job-credentials.ts) and the state size limit. */
export interface PluginRunOptions {
  credentials: Partial<Record<DiscoveryPlugin, AwsCredentialProvider>>;
  maxStateBytes: number;
}

export interface Discovered {
  nodes: NodeRecord[];
  edges: EdgeRecord[];
  /** Per plugin: its own counts (resources seen, mapped, skipped, …). */
  plugins: Record<string, Record<string, number>>;
  warnings: string[];
}

async function runOne(plugin: DiscoveryPlugin, config: PluginConfig, options: PluginRunOptions, signal: AbortSignal): Promise<Inventory> {
  if (plugin === 'terraform-state') {
    const input = config['terraform-state'] ?? {};
    const read = { credentials: options.credentials['terraform-state'], maxBytes: options.maxStateBytes };
    const state = input.state ?? (input.state_uri ? await readStateFromS3(input.state_uri, read, signal) : undefined);
    if (state === undefined) throw new PermanentJobError('terraform-state: no state given (state or state_uri)');
    try {
      return terraformStateInventory(state, { defaultRegion: input.default_region, accountId: input.account_id ?? null, files: input.files });
    } catch (error) {
      // A malformed state fails the job at once: reading it again gives the same answer.
      if (error instanceof TerraformStateError) throw new PermanentJobError(`terraform-state: ${error.message}`);
      throw error;
    }
  }
  return awsInventory(config.aws ?? {}, { credentials: options.credentials.aws }, signal);
}

/**
 * Runs the job's plugins in order and merges what they found: a node found by two plugins is kept
 * once (the later plugin's view wins, so list the more authoritative source last); edges are unioned.
 */
export async function runPlugins(plugins: DiscoveryPlugin[], config: PluginConfig, options: PluginRunOptions, signal: AbortSignal): Promise<Discovered> {
  const nodes = new Map<string, NodeRecord>();
  const edges = new Map<string, EdgeRecord>();
  const counts: Discovered['plugins'] = {};
  const warnings: string[] = [];
  for (const plugin of plugins) {
    signal.throwIfAborted();
    const inventory = await runOne(plugin, config, options, signal);
    for (const node of inventory.nodes) nodes.set(node.id, node);
    for (const edge of inventory.edges) edges.set(`${edge.source}\u0000${edge.target}\u0000${edge.type}`, edge);
    counts[plugin] = { nodes: inventory.nodes.length, edges: inventory.edges.length, ...inventory.counts };
    warnings.push(...inventory.warnings.map((w) => `${plugin}: ${w}`));
  }
  return { nodes: [...nodes.values()], edges: [...edges.values()], plugins: counts, warnings };
}
