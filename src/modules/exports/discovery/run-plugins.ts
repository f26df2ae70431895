import { PermanentJobError } from '../../../platform/jobs/definition.js';
import type { NodeRecord } from '../../graph/node-repo.js';
import type { EdgeRecord } from '../../graph/edge-repo.js';
import { awsInventory, type AwsConfig } from './aws.js';
import type { Inventory } from './inventory.js';
import { readStateFromS3 } from './state-source.js';
import { TerraformStateError, terraformStateInventory } from './terraform-state.js';
import type { DiscoveryPlugin } from './schemas.js';

/** What a job keeps of the terraform-state plugin's input (`state` is dropped once the job ended). */
export interface TerraformInput {
  state?: unknown;
  state_uri?: string;
  files?: Record<string, string>;
  default_region?: string;
  account_id?: string;
}

export interface PluginConfig {
  'terraform-state'?: TerraformInput;
  aws?: AwsConfig;
}

export interface Discovered {
  nodes: NodeRecord[];
  edges: EdgeRecord[];
  /** Per plugin: its own counts (resources seen, mapped, skipped, …). */
  plugins: Record<string, Record<string, number>>;
  warnings: string[];
}

async function runOne(plugin: DiscoveryPlugin, config: PluginConfig, signal: AbortSignal): Promise<Inventory> {
  if (plugin === 'terraform-state') {
    const input = config['terraform-state'] ?? {};
    const state = input.state ?? (input.state_uri ? await readStateFromS3(input.state_uri, signal) : undefined);
    if (state === undefined) throw new PermanentJobError('terraform-state: no state given (state or state_uri)');
    try {
      return terraformStateInventory(state, { defaultRegion: input.default_region, accountId: input.account_id ?? null, files: input.files });
    } catch (error) {
      // A malformed state fails the job at once: reading it again gives the same answer.
      if (error instanceof TerraformStateError) throw new PermanentJobError(`terraform-state: ${error.message}`);
      throw error;
    }
  }
  return awsInventory(config.aws ?? {}, {}, signal);
}

/**
 * Runs the job's plugins in order and merges what they found: a node found by two plugins is kept
 * once (the later plugin's view wins, so list the more authoritative source last); edges are unioned.
 */
export async function runPlugins(plugins: DiscoveryPlugin[], config: PluginConfig, signal: AbortSignal): Promise<Discovered> {
  const nodes = new Map<string, NodeRecord>();
  const edges = new Map<string, EdgeRecord>();
  const counts: Discovered['plugins'] = {};
  const warnings: string[] = [];
  for (const plugin of plugins) {
    signal.throwIfAborted();
    const inventory = await runOne(plugin, config, signal);
    for (const node of inventory.nodes) nodes.set(node.id, node);
    for (const edge of inventory.edges) edges.set(`${edge.source}\u0000${edge.target}\u0000${edge.type}`, edge);
    counts[plugin] = { nodes: inventory.nodes.length, edges: inventory.edges.length, ...inventory.counts };
    warnings.push(...inventory.warnings.map((w) => `${plugin}: ${w}`));
  }
  return { nodes: [...nodes.values()], edges: [...edges.values()], plugins: counts, warnings };
}
