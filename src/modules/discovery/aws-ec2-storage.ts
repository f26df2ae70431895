import type { Any, AwsReader } from './aws.js';
import { awsNode, configCase, plain, regionOfZone, tagObject } from './inventory.js';

/**
 * The EC2 launch configuration and storage of the aws plugin: EBS volumes (AWS::EC2::Volume, the
 * DescribeVolumes output camelCased as AWS Config records it) and launch templates
 * (AWS::EC2::LaunchTemplate, which AWS Config records in CloudFormation's PascalCase: the template
 * from DescribeLaunchTemplates with the data of its default version from
 * DescribeLaunchTemplateVersions; without that answer `LaunchTemplateData` stays absent).
 */
export async function readEc2Storage(r: AwsReader, region: string): Promise<void> {
  await r.guard('ec2', region, 'EBS volumes', () => readVolumes(r, region));
  await r.guard('ec2', region, 'launch templates', () => readLaunchTemplates(r, region));
}

async function readVolumes(r: AwsReader, region: string): Promise<void> {
  for (const page of await r.all('ec2', region, 'DescribeVolumes')) {
    for (const v of (page.Volumes ?? []) as Any[]) {
      const tags = tagObject(v.Tags);
      const id = r.add(
        awsNode({
          configType: 'AWS::EC2::Volume',
          nativeId: v.VolumeId,
          name: tags.Name || v.VolumeId,
          region: regionOfZone(v.AvailabilityZone) ?? region,
          account: r.account,
          configuration: configCase(v) as Any,
          tags,
        }),
        v.VolumeId,
      );
      r.refer(
        id,
        ((v.Attachments ?? []) as Any[]).map((a) => a.InstanceId),
        'attached_to',
      );
      r.refer(id, v.KmsKeyId, 'encrypted_by');
    }
  }
}

async function readLaunchTemplates(r: AwsReader, region: string): Promise<void> {
  for (const page of await r.all('ec2', region, 'DescribeLaunchTemplates')) {
    for (const t of (page.LaunchTemplates ?? []) as Any[]) {
      const tags = tagObject(t.Tags);
      const versions = await r.one(
        'ec2',
        region,
        'DescribeLaunchTemplateVersions',
        { LaunchTemplateId: t.LaunchTemplateId, Versions: ['$Default'] },
        `launch template ${t.LaunchTemplateId}`,
      );
      const data = (versions?.LaunchTemplateVersions as Any[] | undefined)?.[0]?.LaunchTemplateData;
      const configuration: Any = {
        Id: t.LaunchTemplateId,
        LaunchTemplateName: t.LaunchTemplateName,
        DefaultVersionNumber: t.DefaultVersionNumber,
        LatestVersionNumber: t.LatestVersionNumber,
        ...(data ? { LaunchTemplateData: plain(data) } : {}),
      };
      r.add(
        awsNode({
          configType: 'AWS::EC2::LaunchTemplate',
          nativeId: t.LaunchTemplateId,
          name: t.LaunchTemplateName ?? t.LaunchTemplateId,
          region,
          account: r.account,
          configuration,
          tags,
        }),
        t.LaunchTemplateId,
      );
    }
  }
}
