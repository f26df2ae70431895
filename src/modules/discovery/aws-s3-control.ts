import type { Any, AwsReader } from './aws.js';
import { errorName, PERMISSION_ERROR } from './aws-errors.js';
import { awsNode, configCase, plain } from './inventory.js';

/**
 * S3 Control for the aws plugin: the account's S3 Block Public Access settings
 * (AWS::S3::AccountPublicAccessBlock, read once) and the S3 access points of a region
 * (AWS::S3::AccessPoint, CloudFormation's PascalCase as AWS Config records it, each with its own
 * block-public-access settings from GetAccessPoint). Every S3 Control call names the account: the one
 * the job is configured with or the other services' responses told; when none is known yet, nothing
 * is read and the job says so.
 */
export async function readAccessPoints(r: AwsReader, region: string): Promise<void> {
  const account = r.account;
  if (!account) {
    r.warnings.push(`s3control access points in ${region}: the account id is not known (set account_id in the job's aws config); not read`);
    return;
  }
  await r.guard('s3control', region, 'access points', async () => {
    for (const page of await r.all('s3control', region, 'ListAccessPoints', { AccountId: account })) {
      for (const listed of (page.AccessPointList ?? []) as Any[]) {
        const got = await r.one('s3control', region, 'GetAccessPoint', { AccountId: account, Name: listed.Name }, `access point ${listed.Name}`);
        const { $metadata: _m, ...ap } = got ?? listed;
        const { AccessPointArn, CreationDate: _created, Endpoints: _endpoints, ...rest } = ap as Any;
        const configuration = { ...(plain(rest) as Any), Arn: AccessPointArn ?? listed.AccessPointArn };
        const id = r.add(
          awsNode({ configType: 'AWS::S3::AccessPoint', nativeId: listed.Name, name: listed.Name, region, account, arn: configuration.Arn ?? null, configuration }),
          configuration.Arn,
        );
        r.refer(id, listed.Bucket ? `arn:aws:s3:::${listed.Bucket}` : undefined, 'access_point_of');
      }
    }
  });
}

/**
 * The account's Block Public Access settings. S3 answers NoSuchPublicAccessBlockConfiguration when the
 * account has none: then nothing is blocked, which is what the node says (all four settings false).
 * A refused call leaves the account without a node, with a warning.
 */
export async function readAccountPublicAccessBlock(r: AwsReader, home: string): Promise<void> {
  const account = r.account;
  if (!account) {
    r.warnings.push("s3control account public access block: the account id is not known (set account_id in the job's aws config); not read");
    return;
  }
  const c = await r.clientFor('s3control', home);
  r.signal?.throwIfAborted();
  let configuration: Any;
  try {
    const out = await c.client.send(new c.mod.GetPublicAccessBlockCommand({ AccountId: account }), { abortSignal: r.signal });
    configuration = configCase(out.PublicAccessBlockConfiguration ?? {}) as Any;
  } catch (error) {
    const name = errorName(error);
    if (name === 'NoSuchPublicAccessBlockConfiguration')
      configuration = { blockPublicAcls: false, ignorePublicAcls: false, blockPublicPolicy: false, restrictPublicBuckets: false };
    else if (PERMISSION_ERROR.test(name)) {
      r.warnings.push(`s3control account public access block in ${home}: ${name}; not read`);
      return;
    } else throw error;
  }
  r.add(awsNode({ configType: 'AWS::S3::AccountPublicAccessBlock', nativeId: account, name: account, region: 'global', account, configuration }));
}
