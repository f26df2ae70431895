import { awsInventory } from './aws.js';
import { DEMO_REGION, startAwsReplay } from './aws-replay.js';
import type { Inventory } from './inventory.js';

/**
 * The demo estate: CloudMapper's public demo AWS account, read by the aws plugin exactly as a
 * discovery job reads an account, from the recorded API responses shipped in content/demo/, played
 * back on 127.0.0.1. The credentials are dummies the replay ignores, and every client's endpoint is
 * the replay, so nothing leaves the machine whatever the process's AWS configuration says.
 */
export async function readDemoEstate(signal?: AbortSignal): Promise<Inventory> {
  const replay = await startAwsReplay();
  try {
    return await awsInventory(
      { regions: [DEMO_REGION] },
      { endpoint: replay.endpoint, credentials: async () => ({ accessKeyId: 'AKIADEMOREPLAYDEMORE', secretAccessKey: 'demo-replay' }) },
      signal,
    );
  } finally {
    await replay.close();
  }
}
