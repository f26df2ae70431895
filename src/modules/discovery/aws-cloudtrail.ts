import type { Any, AwsReader } from './aws.js';
import { arnParts, awsNode, configCase } from './inventory.js';

/**
 * CloudTrail for the aws plugin: the trails of a region (AWS::CloudTrail::Trail), each read in its
 * home region (`includeShadowTrails: false`: a multi-region trail is listed in every region but
 * recorded once, as AWS Config does).
 *
 * The configuration is DescribeTrails' trail, camelCased as AWS Config writes it. Two more calls
 * tell what the trail does: GetTrailStatus (is it logging, its last delivery errors) and
 * GetEventSelectors (which events it records). AWS Config has no property for either, so they go
 * into the supplementary configuration (`TrailStatus`, `EventSelectors`, `AdvancedEventSelectors`),
 * and only when answered: a status CloudTrail did not give stays absent, never "logging".
 */
export async function readCloudTrail(r: AwsReader, region: string): Promise<void> {
  await r.guard('cloudtrail', region, 'trails', async () => {
    for (const page of await r.all('cloudtrail', region, 'DescribeTrails', { includeShadowTrails: false })) {
      for (const t of page.trailList ?? []) await readTrail(r, region, t);
    }
  });
}

async function readTrail(r: AwsReader, region: string, t: Any): Promise<void> {
  const home = t.HomeRegion ?? region;
  // A trail of another region (an organization trail seen from a member account) is read where it lives.
  if (home !== region) return;
  const configuration = configCase(t) as Any;
  // AWS Config's names where camelCasing the API's differs.
  configuration.trailARN = t.TrailARN;
  configuration.snsTopicARN = t.SnsTopicARN;
  const supplementaryConfiguration: Any = {};
  const status = await r.one('cloudtrail', region, 'GetTrailStatus', { Name: t.TrailARN ?? t.Name }, `trail ${t.Name}`);
  if (status) {
    const { $metadata: _status, ...rest } = status;
    supplementaryConfiguration.TrailStatus = configCase(rest);
  }
  const selectors = await r.one('cloudtrail', region, 'GetEventSelectors', { TrailName: t.TrailARN ?? t.Name }, `trail ${t.Name}`);
  if (selectors?.EventSelectors) supplementaryConfiguration.EventSelectors = configCase(selectors.EventSelectors);
  if (selectors?.AdvancedEventSelectors) supplementaryConfiguration.AdvancedEventSelectors = configCase(selectors.AdvancedEventSelectors);
  const id = r.add(
    awsNode({
      configType: 'AWS::CloudTrail::Trail',
      nativeId: t.Name,
      name: t.Name,
      region,
      account: arnParts(t.TrailARN).account ?? r.account,
      arn: t.TrailARN ?? null,
      configuration,
      supplementaryConfiguration,
    }),
    t.TrailARN,
  );
  r.refer(id, t.KmsKeyId, 'encrypted_by');
  r.refer(id, t.S3BucketName ? `arn:aws:s3:::${t.S3BucketName}` : undefined, 'writes_to');
}
