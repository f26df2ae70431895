import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { projectPath } from '../../src/platform/paths.js';
import { awsConfigParser } from '../../src/modules/discovery/imports/aws-config.js';
import { MalformedImportError, type ImportItem, type ImportedNode } from '../../src/modules/discovery/imports/import-record.js';

/**
 * The AWS Config importer's parser on the real samples (test/fixtures/imports/aws-config/SOURCES.md):
 * RDK example configuration items, and Cloud Custodian's recordings of GetResourceConfigHistory and
 * SelectResourceConfig (responses under `data`), each also in the other form (a recording's
 * response alone, an item wrapped as a recording), as a bare array and as an S3 snapshot file.
 */

const DIR = projectPath('test', 'fixtures', 'imports', 'aws-config');
const read = (file: string) => readFileSync(`${DIR}/${file}`, 'utf8');

/** Chunks of 7 bytes, so records and strings are split across chunks as in a real upload. */
function stream(text: string): Readable {
  const bytes = Buffer.from(text);
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += 7) chunks.push(bytes.subarray(i, i + 7));
  return Readable.from(chunks);
}

async function parse(text: string): Promise<ImportItem[]> {
  const out: ImportItem[] = [];
  for await (const item of awsConfigParser.parse(stream(text))) out.push(item);
  return out;
}

const nodes = (items: ImportItem[]) => items.filter((i): i is ImportedNode => i.kind === 'node');
const summary = (items: ImportItem[]) => nodes(items).map((n) => ({ id: n.node.id, type: n.node.type, edges: n.edges }));

const SAMPLES: Record<string, Array<{ id: string; type: string; edges: Array<{ target: string; type: string }> }>> = {
  'rdk-example_ci-AWS_Cloudtrail_Trail.json': [{ id: 'aws:ap-southeast-1:aws.cloudtrail.trail:APJCCloudTrail', type: 'aws.cloudtrail.trail', edges: [] }],
  'rdk-example_ci-AWS_EC2_Instance.json': [
    {
      id: 'aws:us-east-1:aws.ec2.instance:i-03402838daac1d611',
      type: 'aws.ec2.instance',
      edges: [
        { target: 'aws:us-east-1:aws.ec2.network_interface:eni-d055cfc4', type: 'contains' },
        { target: 'aws:us-east-1:aws.ec2.security_group:sg-fd215482', type: 'uses_security_group' },
        { target: 'aws:us-east-1:aws.ec2.subnet:subnet-1aaccc7f', type: 'in_subnet' },
        { target: 'aws:us-east-1:aws.ec2.volume:vol-0c24aa343c564eda8', type: 'attached_to' },
        { target: 'aws:us-east-1:aws.ec2.vpc:vpc-79b3ea1e', type: 'in_vpc' },
      ],
    },
  ],
  'rdk-example_ci-AWS_EC2_SecurityGroup.json': [
    { id: 'aws:us-east-1:aws.ec2.security_group:sg-1d56fc66', type: 'aws.ec2.security_group', edges: [{ target: 'aws:us-east-1:aws.ec2.vpc:vpc-0990dc6d', type: 'in_vpc' }] },
  ],
  'rdk-example_ci-AWS_IAM_User.json': [
    {
      id: 'aws:global:aws.iam.user:AIDAILEDWOGIPJFAKOJKW',
      type: 'aws.iam.user',
      edges: [
        { target: 'aws:global:aws.iam.group:AGPAJNIBGFRSRIKL7VAD6', type: 'member_of' },
        { target: 'aws:global:aws.iam.policy:ANPAIJWML3NX3NT6UAGO4', type: 'has_policy' },
        { target: 'aws:global:aws.iam.policy:ANPAJCD3LXS23FNRP2AJY', type: 'has_policy' },
      ],
    },
  ],
  'rdk-example_ci-AWS_RDS_DBInstance.json': [
    {
      id: 'aws:us-east-1:aws.rds.db_instance:db-HHTTSRD6HXUIKXPFPI6WFVZ4PA',
      type: 'aws.rds.db_instance',
      edges: [
        { target: 'aws:us-east-1:aws.rds.db_subnet_group:default', type: 'associated_with' },
        { target: 'aws:us-east-1:aws.ec2.security_group:sg-e627199e', type: 'uses_security_group' },
      ],
    },
  ],
  'rdk-example_ci-AWS_S3_Bucket.json': [{ id: 'aws:us-east-1:aws.s3.bucket:mborch-test-bucket-config-item', type: 'aws.s3.bucket', edges: [] }],
  'c7n-test_sg_config_diff.GetResourceConfigHistory.json': [
    { id: 'aws:us-east-1:aws.ec2.security_group:sg-a38ed1de', type: 'aws.ec2.security_group', edges: [{ target: 'aws:us-east-1:aws.ec2.vpc:vpc-72885e14', type: 'in_vpc' }] },
  ],
  'c7n-test_eks_config.GetResourceConfigHistory.json': [{ id: 'aws:us-east-2:aws.eks.cluster:kapil-dev', type: 'aws.eks.cluster', edges: [] }],
  'c7n-test_ecs_task_def_config.GetResourceConfigHistory.json': [{ id: 'aws:us-east-1:aws.ecs.task_definition:TEST:1', type: 'aws.ecs.task_definition', edges: [] }],
  'c7n-test_ecr_cross_account_filter_config.SelectResourceConfig.json': [
    'cdk-hnb659fds-container-assets-644160558196-us-east-1',
    'demodev',
    'docker-on-aws/nodejs',
    'omnissm-register',
    'repository-name-wubwub',
    'test-ecr-modify-policy',
    'testing',
    'testrepo',
  ].map((name) => ({ id: `aws:us-east-1:aws.ecr.repository:${name}`, type: 'aws.ecr.repository', edges: [] })),
  'c7n-test_rdscluster_kms_alias.SelectResourceConfig.json': ['cluster-H6LU56TOHIKJLGS5GVL52DBOOE', 'cluster-MPL6FOB4KMWTPPCZB3YS7RUSYM'].map((id) => ({
    id: `aws:us-east-2:aws.rds.db_cluster:${id}`,
    type: 'aws.rds.db_cluster',
    edges: [],
  })),
  'c7n-test_sns_config.SelectResourceConfig.json': ['sandbox-relay', 'sns-test-has-statement'].map((name) => ({
    id: `aws:ap-northeast-2:aws.sns.topic:arn:aws:sns:ap-northeast-2:644160558196:${name}`,
    type: 'aws.sns.topic',
    edges: [],
  })),
};

const RDK = Object.keys(SAMPLES).filter((f) => f.startsWith('rdk-'));
const RECORDED = Object.keys(SAMPLES).filter((f) => f.startsWith('c7n-'));

describe('awsConfigParser', () => {
  it.each(Object.keys(SAMPLES))('parses %s into its nodes and edges', async (file) => {
    const items = await parse(read(file));
    expect(items.filter((i) => i.kind === 'error')).toEqual([]);
    expect(summary(items)).toEqual(SAMPLES[file]);
    expect(awsConfigParser.detect(read(file))).toBe(true);
  });

  it.each(RECORDED)('reads %s the same as the recorded response alone', async (file) => {
    const response = JSON.stringify((JSON.parse(read(file)) as { data: unknown }).data);
    expect(await parse(response)).toEqual(await parse(read(file)));
  });

  it.each(RDK)('reads %s the same wrapped as a recorded call', async (file) => {
    const wrapped = `{"status_code": 200, "data": ${read(file)}}`;
    expect(await parse(wrapped)).toEqual(await parse(read(file)));
  });

  it('reads the items as a bare array, a snapshot file and batch-get-resource-config output alike', async () => {
    const one = (await Promise.all(RDK.map(async (f) => nodes(await parse(read(f)))))).flat();
    const list = `[${RDK.map(read).join(',')}]`;
    expect(nodes(await parse(list))).toEqual(one);
    const snapshot = `{"fileVersion": "1.0", "configSnapshotId": "a2b3c4d5-0000-0000-0000-000000000000", "configurationItems": ${list}}`;
    expect(awsConfigParser.detect(snapshot)).toBe(true);
    expect(nodes(await parse(snapshot))).toEqual(one);
    const batch = `{"baseConfigurationItems": ${list}, "unprocessedResourceKeys": []}`;
    expect(nodes(await parse(batch))).toEqual(one);
    expect(nodes(await parse(`{"status_code": 200, "data": ${list}}`))).toEqual(one);
  });

  it('keeps the AWS Config property model: configuration parsed from text, recorded datetimes as ISO strings', async () => {
    const [eks] = nodes(await parse(read('c7n-test_eks_config.GetResourceConfigHistory.json')));
    const p = eks!.node.properties as Record<string, any>;
    expect(p).toMatchObject({
      resourceType: 'AWS::EKS::Cluster',
      resourceId: 'kapil-dev',
      awsRegion: 'us-east-2',
      accountId: '644160558196',
      arn: 'arn:aws:eks:us-east-2:644160558196:cluster/kapil-dev',
    });
    expect(typeof p.configuration).toBe('object');
    expect(p.configuration.Name).toBe('kapil-dev');
    // The history page lists the newest item first: the newer one (captured at 06:04:03) is kept.
    const history = JSON.parse(read('c7n-test_sg_config_diff.GetResourceConfigHistory.json')).data.configurationItems;
    const [sg] = nodes(await parse(read('c7n-test_sg_config_diff.GetResourceConfigHistory.json')));
    expect(sg!.node.properties.configuration).toMatchObject(JSON.parse(history[0].configuration));
    const reversed = nodes(await parse(JSON.stringify({ configurationItems: [...history].reverse() })));
    expect(reversed.at(-1)!.node.properties.configuration).toMatchObject(JSON.parse(history[0].configuration));
    const dated = nodes(
      await parse(
        JSON.stringify({
          ...history[0],
          configuration: { createdAt: { __class__: 'datetime', year: 2016, month: 12, day: 11, hour: 6, minute: 4, second: 3, microsecond: 800000 } },
        }),
      ),
    );
    expect(dated[0]!.node.properties.configuration).toEqual({ createdAt: '2016-12-11T06:04:03.800Z' });
    const [bucket] = nodes(await parse(read('rdk-example_ci-AWS_S3_Bucket.json')));
    expect(bucket!.node).toMatchObject({
      name: 'mborch-test-bucket-config-item',
      account_id: '934654633380',
      region: 'us-east-1',
      provider: 'aws',
      native_id: 'mborch-test-bucket-config-item',
    });
    expect((bucket!.node.properties.supplementaryConfiguration as Record<string, any>).BucketVersioningConfiguration).toEqual({ status: 'Enabled', isMfaDeleteEnabled: null });
  });

  it('reports a select-resource-config result without resource type and id as a record error', async () => {
    expect(await parse(read('c7n-test_security_group_config_source.SelectResourceConfig.json'))).toEqual([
      { kind: 'error', record: 0, message: expect.stringMatching(/no resourceType and no resourceId/) },
    ]);
  });

  it('refuses a truncated file with the byte offset where it ends', async () => {
    for (const file of ['rdk-example_ci-AWS_EC2_Instance.json', 'c7n-test_ecr_cross_account_filter_config.SelectResourceConfig.json']) {
      const text = read(file);
      const cut = text.slice(0, Math.floor(text.length / 2));
      const error = await parse(cut).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MalformedImportError);
      expect((error as MalformedImportError).offset).toBe(Buffer.byteLength(cut));
      expect((error as Error).message).toContain(`at byte ${Buffer.byteLength(cut)}`);
    }
  });

  it('refuses a document that is not AWS Config output, and not JSON', async () => {
    await expect(parse('{"Findings": []}')).rejects.toThrow(MalformedImportError);
    await expect(parse('{"Findings": []}')).rejects.toThrow(/not an AWS Config document/);
    const error = await parse('resourceType,resourceId\n').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MalformedImportError);
    expect((error as MalformedImportError).offset).toBe(0);
  });

  it('lists a broken record and goes on with the others', async () => {
    const recorded = JSON.parse(read('c7n-test_ecr_cross_account_filter_config.SelectResourceConfig.json'));
    recorded.data.Results.splice(2, 0, '{"resourceId": "cut-off", "configur');
    const items = await parse(JSON.stringify(recorded));
    expect(items.filter((i) => i.kind === 'error')).toEqual([{ kind: 'error', record: 2, message: expect.stringMatching(/string that is not JSON/) }]);
    expect(nodes(items)).toHaveLength(8);

    const list = JSON.parse(`[${RDK.map(read).join(',')}]`);
    list.splice(1, 0, 'AWS::EC2::Instance i-0123');
    list.push({ ...list[0], configuration: '{"name": ' });
    const mixed = await parse(JSON.stringify({ configurationItems: list }));
    expect(mixed.filter((i) => i.kind === 'error')).toEqual([
      { kind: 'error', record: 1, message: expect.stringMatching(/not JSON/) },
      { kind: 'error', record: RDK.length + 1, message: expect.stringMatching(/configuration is a string that is not JSON/) },
    ]);
    expect(nodes(mixed)).toHaveLength(RDK.length);
  });

  it('does not import a deleted resource', async () => {
    const item = { ...JSON.parse(read('rdk-example_ci-AWS_Cloudtrail_Trail.json')), configurationItemStatus: 'ResourceDeleted' };
    expect(await parse(JSON.stringify([item]))).toEqual([{ kind: 'error', record: 0, message: expect.stringMatching(/ResourceDeleted/) }]);
  });

  it("detects AWS Config documents and not other scanners' outputs", () => {
    expect(awsConfigParser.detect('{"Results": [{"Target": "main.tf", "Misconfigurations": []}]}')).toBe(false);
    expect(awsConfigParser.detect('{"Findings": [{"SchemaVersion": "2018-10-08", "Resources": [{"Type": "AwsS3Bucket"}]}]}')).toBe(false);
    expect(awsConfigParser.detect('{"version": "2.1.0", "runs": []}')).toBe(false);
    expect(awsConfigParser.detect('{"Results": [], "QueryInfo": {"SelectFields": []}}')).toBe(true);
  });
});

describe('security groups of configuration item version 1.2', () => {
  it('get the ipv4Ranges of later versions from their ipRanges, which rules read', async () => {
    const [sg] = nodes(await parse(read('rdk-example_ci-AWS_EC2_SecurityGroup.json')));
    const configuration = sg!.node.properties.configuration as Record<string, any>;
    expect(configuration.ipPermissions[0]).toMatchObject({ fromPort: 22, ipRanges: ['0.0.0.0/0'], ipv4Ranges: [{ cidrIp: '0.0.0.0/0' }] });
    expect(configuration.ipPermissionsEgress[0].ipv4Ranges).toEqual([{ cidrIp: '0.0.0.0/0' }]);
  });
});

describe('supplementary configuration as the configuration API returns it (text)', () => {
  it('becomes the values of the property model, as in snapshots', async () => {
    const bucket = JSON.parse(read('rdk-example_ci-AWS_S3_Bucket.json'));
    const asText = Object.fromEntries(Object.entries(bucket.supplementaryConfiguration).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
    const [fromText] = nodes(
      await parse(JSON.stringify({ baseConfigurationItems: [{ ...bucket, supplementaryConfiguration: asText, configuration: JSON.stringify(bucket.configuration) }] })),
    );
    const [fromObjects] = nodes(await parse(read('rdk-example_ci-AWS_S3_Bucket.json')));
    expect(fromText).toEqual(fromObjects);
    const key = {
      resourceType: 'AWS::KMS::Key',
      resourceId: 'k-1',
      awsRegion: 'eu-west-1',
      configuration: '{"keyManager":"CUSTOMER"}',
      supplementaryConfiguration: { KeyRotationStatus: 'true' },
    };
    const [kms] = nodes(await parse(JSON.stringify(key)));
    expect(kms!.node.properties.supplementaryConfiguration).toEqual({ KeyRotationStatus: true });
  });
});
