import type { Any, AwsReader } from './aws.js';
import { arnParts, awsNode, configCase, tagObject } from './inventory.js';

/**
 * RDS for the aws plugin: DB instances, Aurora/Multi-AZ DB clusters, and the manual and automated
 * snapshots of both, in the AWS Config property model (AWS::RDS::DBInstance, DBCluster, DBSnapshot,
 * DBClusterSnapshot). A snapshot's sharing (who may restore it) comes from a second call, its
 * attributes, recorded as AWS Config's supplementary configuration; without an answer it stays
 * absent and the rules that read it report the snapshot as not evaluated.
 */
export async function readRds(r: AwsReader, region: string): Promise<void> {
  await r.guard('rds', region, 'DB instances', () => readInstances(r, region));
  await r.guard('rds', region, 'DB clusters', () => readClusters(r, region));
  await r.guard('rds', region, 'DB snapshots', () => readSnapshotsOf(r, region, 'DB'));
  await r.guard('rds', region, 'DB cluster snapshots', () => readSnapshotsOf(r, region, 'DBCluster'));
}

async function readInstances(r: AwsReader, region: string): Promise<void> {
  for (const page of await r.all('rds', region, 'DescribeDBInstances')) {
    for (const db of page.DBInstances ?? []) {
      const nativeId = db.DbiResourceId ?? db.DBInstanceIdentifier;
      const id = r.add(
        awsNode({
          configType: 'AWS::RDS::DBInstance',
          nativeId,
          name: db.DBInstanceIdentifier,
          region,
          account: arnParts(db.DBInstanceArn).account ?? r.account,
          arn: db.DBInstanceArn ?? null,
          configuration: configCase(db) as Any,
        }),
        nativeId,
        db.DBInstanceArn,
      );
      r.refer(
        id,
        (db.VpcSecurityGroups ?? []).map((g: Any) => g.VpcSecurityGroupId),
        'uses_security_group',
      );
      r.refer(id, db.KmsKeyId, 'encrypted_by');
    }
  }
}

async function readClusters(r: AwsReader, region: string): Promise<void> {
  for (const page of await r.all('rds', region, 'DescribeDBClusters')) {
    for (const c of page.DBClusters ?? []) {
      const nativeId = c.DbClusterResourceId ?? c.DBClusterIdentifier;
      // AWS Config spells the IAM flag of a cluster `iamdatabaseAuthenticationEnabled` (of an instance `iAM…`).
      const configuration = { ...(configCase(c) as Any), iamdatabaseAuthenticationEnabled: c.IAMDatabaseAuthenticationEnabled };
      const id = r.add(
        awsNode({
          configType: 'AWS::RDS::DBCluster',
          nativeId,
          name: c.DBClusterIdentifier,
          region,
          account: arnParts(c.DBClusterArn).account ?? r.account,
          arn: c.DBClusterArn ?? null,
          configuration,
          tags: tagObject(c.TagList),
        }),
        nativeId,
        c.DBClusterArn,
      );
      r.refer(
        id,
        (c.VpcSecurityGroups ?? []).map((g: Any) => g.VpcSecurityGroupId),
        'uses_security_group',
      );
      r.refer(id, c.KmsKeyId, 'encrypted_by');
    }
  }
}

/** The restore attribute and the others of a snapshot, as `[{attributeName, attributeValues}]`; null when not answered. */
async function attributes(r: AwsReader, region: string, command: string, input: Any, key: string, what: string): Promise<Any[] | null> {
  const out = await r.one('rds', region, command, input, what);
  // `{DBSnapshotAttributesResult: {DBSnapshotAttributes: [...]}}`, the same for cluster snapshots.
  const list = out?.[key]?.[key.replace(/Result$/, '')];
  return Array.isArray(list) ? (configCase(list) as Any[]) : null;
}

/** Written out (not built from the kind) so that rule-coverage.ts finds the types this file writes. */
const SNAPSHOT_TYPES = { DB: { configType: 'AWS::RDS::DBSnapshot' }, DBCluster: { configType: 'AWS::RDS::DBClusterSnapshot' } } as const;

/**
 * DB snapshots (`kind` DB) and DB cluster snapshots (DBCluster): the same calls and members, each
 * named after its kind (DescribeDBSnapshots / DescribeDBClusterSnapshots, DBSnapshotIdentifier / …).
 */
async function readSnapshotsOf(r: AwsReader, region: string, kind: keyof typeof SNAPSHOT_TYPES): Promise<void> {
  const name = `${kind}Snapshot`;
  for (const page of await r.all('rds', region, `Describe${name}s`)) {
    for (const s of page[`${name}s`] ?? []) {
      const identifier = s[`${name}Identifier`];
      const arn = s[`${name}Arn`];
      const attrs = await attributes(r, region, `Describe${name}Attributes`, { [`${name}Identifier`]: identifier }, `${name}AttributesResult`, identifier);
      const id = r.add(
        awsNode({
          configType: SNAPSHOT_TYPES[kind].configType,
          nativeId: identifier,
          name: identifier,
          region,
          account: arnParts(arn).account ?? r.account,
          arn: arn ?? null,
          configuration: configCase(s) as Any,
          supplementaryConfiguration: attrs ? { [`${name}Attributes`]: attrs } : {},
          tags: tagObject(s.TagList),
        }),
        arn,
      );
      r.refer(id, s.KmsKeyId, 'encrypted_by');
    }
  }
}
