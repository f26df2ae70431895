import { agentCommand as runAgentCommand, agentHelp as helpOf } from '../agent/cli.js';
import { VERSION } from '../version.js';

/** `controlgraph agent`: the host agent run from a checkout; the packaged agent is `controlgraph-agent`. */
export const agentHelp = helpOf('controlgraph agent');

export const agentCommand = (args: string[]) =>
  runAgentCommand(args, { name: 'controlgraph agent', version: VERSION, versionLine: async () => `controlgraph-agent ${VERSION} (run from a checkout, not a build)` });

export { parseAgentArgs, UsageError } from '../agent/cli.js';
