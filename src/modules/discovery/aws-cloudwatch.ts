import type { Any, AwsReader } from './aws.js';
import { arnParts, awsNode, configCase } from './inventory.js';

/**
 * CloudWatch for the aws plugin: the metric alarms of a region (AWS::CloudWatch::Alarm), from
 * DescribeAlarms, camelCased as AWS Config records them (AWS Config spells the OK actions `okactions`).
 * Composite alarms have no AWS Config type and are not read.
 */
export async function readCloudWatch(r: AwsReader, region: string): Promise<void> {
  await r.guard('cloudwatch', region, 'alarms', async () => {
    for (const page of await r.all('cloudwatch', region, 'DescribeAlarms', { AlarmTypes: ['MetricAlarm'] })) {
      for (const a of (page.MetricAlarms ?? []) as Any[]) {
        const { oKActions: _ok, ...camel } = configCase(a) as Any;
        const configuration = { ...camel, okactions: a.OKActions };
        r.add(
          awsNode({
            configType: 'AWS::CloudWatch::Alarm',
            nativeId: a.AlarmName,
            name: a.AlarmName,
            region,
            account: arnParts(a.AlarmArn).account ?? r.account,
            arn: a.AlarmArn ?? null,
            configuration,
          }),
          a.AlarmArn,
        );
      }
    }
  });
}
