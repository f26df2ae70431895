/**
 * The aws plugin's tests read CloudMapper's demo account from its recorded API responses, played back
 * on 127.0.0.1 by the replay server the demo command uses (src/modules/discovery/aws-replay.ts;
 * recordings and their sources in content/demo/). Here: pointing every SDK client of the test process
 * at it through the AWS environment, as a deployment's AWS configuration would.
 */
export { RECORDED, recorded, signerOf, startAwsReplay, type AwsReplay } from '../../src/modules/discovery/aws-replay.js';
import { startAwsReplay, type AwsReplay } from '../../src/modules/discovery/aws-replay.js';

/** The endpoint variables of the services read (`AWS_ENDPOINT_URL_<service id>`); AWS_ENDPOINT_URL covers any other client. */
const ENDPOINT_VARIABLES = [
  'AWS_ENDPOINT_URL',
  'AWS_ENDPOINT_URL_S3',
  'AWS_ENDPOINT_URL_EC2',
  'AWS_ENDPOINT_URL_IAM',
  'AWS_ENDPOINT_URL_RDS',
  'AWS_ENDPOINT_URL_LAMBDA',
  'AWS_ENDPOINT_URL_ELASTIC_LOAD_BALANCING',
  'AWS_ENDPOINT_URL_ELASTIC_LOAD_BALANCING_V2',
];
const REPLAY_VARIABLES = [
  ...ENDPOINT_VARIABLES,
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'AWS_REGION',
  'AWS_EC2_METADATA_DISABLED',
  'AWS_IGNORE_CONFIGURED_ENDPOINT_URLS',
];

/**
 * Points every AWS SDK client of this process at the replay server with dummy credentials (nothing
 * is sent anywhere else: endpoints set in the shell are overridden, and ignoring them is switched
 * off); returns an undo.
 */
export function useAwsReplay(endpoint: string): () => void {
  if (!/^http:\/\/127\.0\.0\.1:\d+$/.test(endpoint)) throw new Error(`the replay endpoint must be on 127.0.0.1, not ${endpoint}`);
  const saved = Object.fromEntries(REPLAY_VARIABLES.map((k) => [k, process.env[k]]));
  for (const k of ENDPOINT_VARIABLES) process.env[k] = endpoint;
  Object.assign(process.env, {
    AWS_ACCESS_KEY_ID: 'AKIAREPLAYREPLAYREPL',
    AWS_SECRET_ACCESS_KEY: 'replay-secret',
    AWS_REGION: 'us-east-1',
    AWS_EC2_METADATA_DISABLED: 'true',
  });
  delete process.env.AWS_SESSION_TOKEN;
  delete process.env.AWS_IGNORE_CONFIGURED_ENDPOINT_URLS;
  return () => {
    for (const k of REPLAY_VARIABLES) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
  };
}

/** @deprecated the replay serves every service now: use startAwsReplay. */
export const startS3Replay = startAwsReplay;
/** @deprecated use AwsReplay. */
export type S3Replay = AwsReplay;
/** @deprecated use useAwsReplay. */
export const useS3Replay = useAwsReplay;
/**
 * @deprecated the real client packages are dependencies now and are replayed over HTTP: no stand-in
 * modules are needed, so this provides none (kept for docs-image.test.ts until it drops the call).
 */
export function recordedSdkModules(): Record<string, Record<string, unknown>> {
  return {};
}
