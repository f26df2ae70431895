import { describe, expect, it } from 'vitest';
import { missingJudgementOf, missingPaths } from './missing-paths.js';

describe('missingPaths', () => {
  const bucket = { configuration: { name: 'b' } };

  it('names every path a bare resource lacks, in the order given', () => {
    expect(missingPaths(bucket, ['supplementaryConfiguration.BucketVersioningConfiguration.status', 'configuration.name', 'configuration.owner.id'])).toEqual([
      'supplementaryConfiguration.BucketVersioningConfiguration.status',
      'configuration.owner.id',
    ]);
  });

  it('counts a null leaf as present and a null or scalar block on the way as absent', () => {
    const props = { configuration: { kmsKeyId: null, vpcConfig: null, name: 'x' } };
    expect(missingPaths(props, ['configuration.kmsKeyId'])).toEqual([]);
    expect(missingPaths(props, ['configuration.vpcConfig.subnetIds'])).toEqual(['configuration.vpcConfig.subnetIds']);
    expect(missingPaths(props, ['configuration.name.length'])).toEqual(['configuration.name.length']);
  });

  it("stops at a list: its elements are the condition's to judge, and an empty list is a recorded state", () => {
    expect(missingPaths({ configuration: { ipPermissions: [] } }, ['configuration.ipPermissions.ipv4Ranges.cidrIp'])).toEqual([]);
    expect(missingPaths({ configuration: { ipPermissions: [{ ipProtocol: '-1' }] } }, ['configuration.ipPermissions.fromPort'])).toEqual([]);
    expect(missingPaths({ configuration: {} }, ['configuration.ipPermissions.fromPort'])).toEqual(['configuration.ipPermissions.fromPort']);
  });

  it('reads own keys only', () => {
    expect(missingPaths({ configuration: {} }, ['configuration.constructor', 'configuration.__proto__'])).toEqual(['configuration.constructor', 'configuration.__proto__']);
  });
});

describe('missingJudgementOf', () => {
  it('takes reads without optional_reads, and nothing from a rule that declares no when_missing', () => {
    expect(
      missingJudgementOf({
        reads: ['configuration.dBClusterIdentifier', 'configuration.multiAZ'],
        optional_reads: ['configuration.dBClusterIdentifier'],
        when_missing: 'violation',
      }),
    ).toEqual({ paths: ['configuration.multiAZ'], outcome: 'violation' });
    expect(missingJudgementOf({ reads: ['configuration.multiAZ'] })).toBeNull();
    expect(missingJudgementOf(null)).toBeNull();
  });
});
