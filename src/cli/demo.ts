import { DEMO_ACCOUNT, DEMO_REGION } from '../modules/discovery/aws-replay.js';
import { readDemoEstate } from '../modules/discovery/demo-estate.js';
import { MAX_BATCH } from '../modules/graph/schemas.js';
import { parseOptions } from './args.js';
import { chooseTarget, CliRefusal, readToken, REMOTE_OPTIONS, ServiceClient } from './remote.js';
import { UUID_PATTERN } from '../platform/http/schemas.js';

export const demoHelp = `Usage: controlgraph demo --tenant <id> [--server URL] [--token-file FILE]

Loads the demo estate into a tenant through a running service's API: CloudMapper's public demo AWS
account (${DEMO_ACCOUNT}, ${DEMO_REGION}; a VPC, subnets, security groups, EC2 instances, load
balancers, RDS instances, a Lambda function, an S3 bucket, IAM users, groups, roles and policies),
read by the aws discovery plugin from the recorded API responses shipped in content/demo/. This
process plays them back to the plugin's AWS SDK clients on 127.0.0.1 with dummy credentials: nothing
is sent to AWS. The nodes and edges found are upserted with POST /api/v1/tenants/{tenant}/nodes and
/edges into the workspace of the credential, so loading again changes nothing. Then audit them:
POST /api/v1/tenants/{tenant}/findings/run.

  --tenant ID           The tenant to load into: its id (POST /api/v1/account/tenants answers it).
  --server URL          The service's URL (or set CONTROLGRAPH_URL). Beside a running service on an
                        embedded (pglite://) database it is found by itself (the lock records it).
  --token-file FILE     Bearer credential (or set CONTROLGRAPH_TOKEN): a user's access token
                        (POST /api/v1/auth/token) or an API key with nodes:write in the tenant.`;

const NEEDS = 'an access token or API key with nodes:write in the tenant';

interface BatchResult {
  created: number;
  updated: number;
}

export async function demoCommand(args: string[]): Promise<void> {
  const { values, positional } = parseOptions(args, { values: ['tenant', ...REMOTE_OPTIONS] });
  if (positional.length) throw new CliRefusal(`demo: unexpected argument "${positional[0]}"\n\n${demoHelp}`);
  if (!values.tenant) throw new CliRefusal(`demo: --tenant is required\n\n${demoHelp}`);
  if (!UUID_PATTERN.test(values.tenant)) throw new CliRefusal(`demo: --tenant takes the tenant's id (a UUID), not "${values.tenant}"`);
  const target = await chooseTarget(values);
  if (target.kind === 'local') {
    throw new CliRefusal(
      'demo: the demo estate is loaded through the API of a running service, and none was named or found: ' +
        'start the service (npm start) and run this again beside it, or name it with --server URL (or CONTROLGRAPH_URL)',
    );
  }
  const client = ServiceClient.open(target.remote, readToken(values), 'demo', NEEDS);

  const estate = await readDemoEstate();
  for (const warning of estate.warnings) console.error(`demo: aws plugin: ${warning}`);
  const base = `/tenants/${values.tenant}`;
  const nodes = await upload(client, `${base}/nodes`, 'nodes', estate.nodes);
  const edges = await upload(client, `${base}/edges`, 'edges', estate.edges);
  console.log(
    `loaded the demo estate into tenant ${values.tenant}: ${estate.nodes.length} nodes (${nodes.created} new, ${nodes.updated} updated) and ` +
      `${estate.edges.length} edges (${edges.created} new, ${edges.updated} updated), CloudMapper's demo AWS account ${DEMO_ACCOUNT} ` +
      `read by the aws plugin from recorded responses (content/demo/README.md). Audit it: POST /api/v1/tenants/${values.tenant}/findings/run`,
  );
}

/** Upserts the items in batches the API takes; sums what it created and updated. */
async function upload(client: ServiceClient, path: string, field: 'nodes' | 'edges', items: unknown[]): Promise<BatchResult> {
  const total: BatchResult = { created: 0, updated: 0 };
  for (let i = 0; i < items.length; i += MAX_BATCH) {
    const { body } = await client.request<BatchResult>('POST', path, { json: { [field]: items.slice(i, i + MAX_BATCH) } });
    total.created += body.created;
    total.updated += body.updated;
  }
  return total;
}
