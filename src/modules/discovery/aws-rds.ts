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
  await r.guard('rds', region, 'DB snapshots', () => readSnapshots(r, region));
  await r.guard('rds', region, 'DB cluster snapshots', () => readClusterSnapshots(r, region));
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

async function readSnapshots(r: AwsReader, region: string): Promise<void> {
  for (const page of await r.all('rds', region, 'DescribeDBSnapshots')) {
    for (const s of page.DBSnapshots ?? []) {
      const attrs = await attributes(
        r,
        region,
        'DescribeDBSnapshotAttributes',
        { DBSnapshotIdentifier: s.DBSnapshotIdentifier },
        'DBSnapshotAttributesResult',
        s.DBSnapshotIdentifier,
      );
      const id = r.add(
        awsNode({
          configType: 'AWS::RDS::DBSnapshot',
          nativeId: s.DBSnapshotIdentifier,
          name: s.DBSnapshotIdentifier,
          region,
          account: arnParts(s.DBSnapshotArn).account ?? r.account,
          arn: s.DBSnapshotArn ?? null,
          configuration: configCase(s) as Any,
          supplementaryConfiguration: attrs ? { DBSnapshotAttributes: attrs } : {},
          tags: tagObject(s.TagList),
        }),
        s.DBSnapshotArn,
      );
      r.refer(id, s.KmsKeyId, 'encrypted_by');
    }
  }
}

async function readClusterSnapshots(r: AwsReader, region: string): Promise<void> {
  for (const page of await r.all('rds', region, 'DescribeDBClusterSnapshots')) {
    for (const s of page.DBClusterSnapshots ?? []) {
      const attrs = await attributes(
        r,
        region,
        'DescribeDBClusterSnapshotAttributes',
        { DBClusterSnapshotIdentifier: s.DBClusterSnapshotIdentifier },
        'DBClusterSnapshotAttributesResult',
        s.DBClusterSnapshotIdentifier,
      );
      const id = r.add(
        awsNode({
          configType: 'AWS::RDS::DBClusterSnapshot',
          nativeId: s.DBClusterSnapshotIdentifier,
          name: s.DBClusterSnapshotIdentifier,
          region,
          account: arnParts(s.DBClusterSnapshotArn).account ?? r.account,
          arn: s.DBClusterSnapshotArn ?? null,
          configuration: configCase(s) as Any,
          supplementaryConfiguration: attrs ? { DBClusterSnapshotAttributes: attrs } : {},
          tags: tagObject(s.TagList),
        }),
        s.DBClusterSnapshotArn,
      );
      r.refer(id, s.KmsKeyId, 'encrypted_by');
    }
  }
}
