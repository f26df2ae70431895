import type { Any, AwsReader } from './aws.js';
import { arnParts, awsNode, configCase } from './inventory.js';

/**
 * KMS for the aws plugin: the keys of a region (AWS::KMS::Key). ListKeys names them; DescribeKey
 * gives the key's metadata, which is AWS Config's configuration (camelCased; AWS Config spells the
 * account `awsaccountId`); GetKeyRotationStatus gives `supplementaryConfiguration.KeyRotationStatus`
 * as AWS Config records it.
 *
 * Fail closed: a key DescribeKey does not answer for is not added (nothing would be known of it), and
 * a rotation status KMS does not give (refused, a key whose kind has no rotation, a key pending
 * deletion) leaves KeyRotationStatus absent, for the rotation rule to judge as its when_missing says.
 */
export async function readKms(r: AwsReader, region: string): Promise<void> {
  await r.guard('kms', region, 'keys', async () => {
    for (const page of await r.all('kms', region, 'ListKeys')) {
      for (const k of page.Keys ?? []) await readKey(r, region, k);
    }
  });
}

async function readKey(r: AwsReader, region: string, k: Any): Promise<void> {
  const described = await r.one('kms', region, 'DescribeKey', { KeyId: k.KeyArn ?? k.KeyId }, `key ${k.KeyId}`);
  const meta = described?.KeyMetadata as Any | undefined;
  if (!meta) return;
  const { aWSAccountId: _account, ...camel } = configCase(meta) as Any;
  const configuration = { ...camel, awsaccountId: meta.AWSAccountId };
  const supplementaryConfiguration: Any = {};
  const rotation = await rotationStatus(r, region, meta);
  if (rotation !== null) supplementaryConfiguration.KeyRotationStatus = rotation;
  r.add(
    awsNode({
      configType: 'AWS::KMS::Key',
      nativeId: meta.KeyId,
      name: meta.KeyId,
      region,
      account: meta.AWSAccountId ?? arnParts(meta.Arn).account ?? r.account,
      arn: meta.Arn ?? null,
      configuration,
      supplementaryConfiguration,
    }),
    meta.Arn,
    meta.KeyId,
  );
}

/** Whether automatic rotation is on; null when KMS did not say. */
async function rotationStatus(r: AwsReader, region: string, meta: Any): Promise<boolean | null> {
  try {
    const out = await r.one('kms', region, 'GetKeyRotationStatus', { KeyId: meta.Arn ?? meta.KeyId }, `key ${meta.KeyId}`);
    return typeof out?.KeyRotationEnabled === 'boolean' ? out.KeyRotationEnabled : null;
  } catch (error) {
    // A disabled or pending-deletion key (KMSInvalidStateException), a key the caller may describe but not ask this of.
    const name = String((error as { name?: string }).name ?? '');
    if (/InvalidState|InvalidArn|DependencyTimeout/.test(name)) {
      r.warnings.push(`kms GetKeyRotationStatus key ${meta.KeyId}: ${name}`);
      return null;
    }
    throw error;
  }
}
