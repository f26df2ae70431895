import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compareDpkg } from '../../src/modules/vulndb/matching/dpkg.js';
import { compareApk, isValidApkVersion } from '../../src/modules/vulndb/matching/apk.js';
import { comparePep440, parsePep440 } from '../../src/modules/vulndb/matching/pep440.js';
import { compareMaven } from '../../src/modules/vulndb/matching/maven.js';
import { compareGeneric } from '../../src/modules/vulndb/matching/generic.js';
import { compareSemver, ecosystemInfo, packageKey } from '../../src/modules/vulndb/matching/ecosystems.js';
import { evaluateAffected, inRange } from '../../src/modules/vulndb/matching/osv-range.js';
import { cpeVersionMatches, parseCpe } from '../../src/modules/vulndb/matching/cpe.js';
import { cvss3BaseScore, cvssSeverity } from '../../src/modules/vulndb/cvss.js';

type Compare = (a: string, b: string) => number;

/** Every adjacent pair ascends, every pair compares consistently in both directions. */
function expectAscending(compare: Compare, versions: string[]): void {
  for (let i = 0; i < versions.length; i++) {
    for (let j = i + 1; j < versions.length; j++) {
      expect(Math.sign(compare(versions[i]!, versions[j]!)), `${versions[i]} < ${versions[j]}`).toBe(-1);
      expect(Math.sign(compare(versions[j]!, versions[i]!)), `${versions[j]} > ${versions[i]}`).toBe(1);
    }
  }
}

function expectEqual(compare: Compare, pairs: Array<[string, string]>): void {
  for (const [a, b] of pairs) expect(compare(a, b), `${a} = ${b}`).toBe(0);
}

describe('dpkg versions (Debian, Ubuntu)', () => {
  it('orders epochs, tildes, revisions and letters as dpkg does', () => {
    expectAscending(compareDpkg, ['1.0~~', '1.0~~a', '1.0~', '1.0~rc1', '1.0', '1.0-1', '1.0-1+deb12u1', '1.0a', '1.0+b1', '1.0.1', '1.1', '1:0.9', '2:0.1']);
    expect(compareDpkg('1:1.0-1', '1.0-1')).toBe(1);
    expect(compareDpkg('1.0~rc1', '1.0')).toBe(-1);
    expect(compareDpkg('2.36-9+deb12u4', '2.36-9+deb12u7')).toBe(-1);
    expect(compareDpkg('3.0.11-1~deb12u2', '3.0.11-1')).toBe(-1);
    expect(compareDpkg('7.88.1-10+deb12u5', '7.88.1-10+deb12u12')).toBe(-1);
    expectEqual(compareDpkg, [
      ['0:1.0', '1.0'],
      ['1.001', '1.1'],
      ['1.0-0', '1.0-00'],
    ]);
  });

  it('agrees with dpkg --compare-versions on 1,500 real version pairs', () => {
    const { cases } = JSON.parse(readFileSync('test/fixtures/vulndb/dpkg-compare-cases.json', 'utf8')) as { cases: Array<[string, string, number]> };
    const wrong = cases.filter(([a, b, expected]) => compareDpkg(a, b) !== expected);
    expect(wrong).toEqual([]);
    expect(cases.length).toBe(1500);
  });

  it('refuses a malformed epoch', () => {
    expect(() => compareDpkg('x:1.0', '1.0')).toThrow(/epoch/);
  });
});

describe('apk versions (Alpine)', () => {
  it('orders suffixes, letters, revisions and leading zeros as apk-tools does', () => {
    expectAscending(compareApk, [
      '1.2_alpha',
      '1.2_alpha1',
      '1.2_beta',
      '1.2_pre2',
      '1.2_rc1',
      '1.2',
      '1.2-r1',
      '1.2-r10',
      '1.2_cvs',
      '1.2_svn',
      '1.2_git20230101',
      '1.2_hg',
      '1.2_p1',
      '1.2a',
      '1.2.1',
      '1.10',
    ]);
    expect(compareApk('1.01', '1.1')).toBe(-1);
    expect(compareApk('3.0.8-r0', '3.0.10-r0')).toBe(-1);
    expect(compareApk('3.1.4-r5', '3.1.4-r5')).toBe(0);
    expect(isValidApkVersion('1.2.3_rc1-r4')).toBe(true);
    expect(isValidApkVersion('1.2-beta')).toBe(false);
  });
});

describe('PEP 440 versions (PyPI)', () => {
  it('follows the ordering example of PEP 440', () => {
    expectAscending(comparePep440, [
      '1.0.dev456',
      '1.0a1',
      '1.0a2.dev456',
      '1.0a12.dev456',
      '1.0a12',
      '1.0b1.dev456',
      '1.0b2',
      '1.0b2.post345.dev456',
      '1.0b2.post345',
      '1.0rc1.dev456',
      '1.0rc1',
      '1.0',
      '1.0+abc.5',
      '1.0+abc.7',
      '1.0+5',
      '1.0.post456.dev34',
      '1.0.post456',
      '1.0.15',
      '1.1.dev1',
      '1!0.1',
    ]);
  });

  it('normalises the alternative spellings', () => {
    expectEqual(comparePep440, [
      ['1.0-1', '1.0.post1'],
      ['v1.0', '1.0.0'],
      ['1.0alpha1', '1.0a1'],
      ['1.0c1', '1.0rc1'],
      ['1.0PREVIEW2', '1.0rc2'],
      ['1.0.0-r1', '1.0.post1'],
      ['1.0-dev', '1.0.dev0'],
    ]);
    expect(parsePep440('not a version')).toBeNull();
    expect(() => comparePep440('1.0', 'banana')).toThrow(/PEP 440/);
  });
});

describe('Maven versions (ComparableVersion)', () => {
  it('orders qualifiers as Maven does', () => {
    expectAscending(compareMaven, [
      '1-alpha2snapshot',
      '1-alpha2',
      '1-alpha-123',
      '1-beta-2',
      '1-beta123',
      '1-m2',
      '1-m11',
      '1-rc',
      '1-cr2',
      '1-rc123',
      '1-SNAPSHOT',
      '1',
      '1-sp',
      '1-sp2',
      '1-sp123',
      '1-abc',
      '1-def',
      '1-pom-1',
      '1-1-snapshot',
      '1-1',
      '1-2',
      '1-123',
    ]);
  });

  it('orders numbers as Maven does', () => {
    expectAscending(compareMaven, [
      '2.0',
      '2.0.a',
      '2-1',
      '2.0.2',
      '2.0.123',
      '2.1.0',
      '2.1-a',
      '2.1b',
      '2.1-c',
      '2.1-1',
      '2.1.0.1',
      '2.2',
      '2.123',
      '11.a2',
      '11.a11',
      '11.b2',
      '11.b11',
      '11.m2',
      '11.m11',
      '11',
      '11.a',
      '11b',
      '11c',
      '11m',
    ]);
  });

  it('treats null items, aliases and case as Maven does', () => {
    expectEqual(compareMaven, [
      ['1', '1.0'],
      ['1', '1.0.0'],
      ['1.0', '1-ga'],
      ['1', '1-final'],
      ['1-release', '1'],
      ['1a1', '1-alpha-1'],
      ['1-cr1', '1-rc1'],
      ['1.0-SNAPSHOT', '1-snapshot'],
      ['2.14.1', '2.14.1.0'],
    ]);
    expect(compareMaven('2.14.1', '2.15.0')).toBe(-1);
    expect(compareMaven('2.0-beta9', '2.0')).toBe(-1);
    expect(compareMaven('12345678901234567890', '12345678901234567891')).toBe(-1);
  });
});

describe('semver and the generic ordering', () => {
  it('semver: pre-releases first, a v prefix ignored, build metadata ignored', () => {
    expectAscending(compareSemver, ['1.0.0-alpha', '1.0.0-alpha.1', '1.0.0-beta.2', '1.0.0-rc.1', '1.0.0', '1.0.1', '1.10.0']);
    expectEqual(compareSemver, [
      ['v1.2.3', '1.2.3'],
      ['1.2.3+build.5', '1.2.3'],
    ]);
    expect(() => compareSemver('1.2', '1.2.0')).toThrow(/semantic/);
  });

  it('generic: numbers numerically, words before numbers, a trailing word is a pre-release', () => {
    expectAscending(compareGeneric, ['1.0rc1', '1.0', '1.0.1', '1.2', '1.10', '2.0-beta', '2.0']);
    expectEqual(compareGeneric, [
      ['1.0', '1_0'],
      ['10.2.0-h3', '10.2.0.h3'],
    ]);
  });

  it('ecosystem keys: releases kept, Alpine normalised, PyPI names per PEP 503', () => {
    expect(ecosystemInfo('Debian:12').key).toBe('debian:12');
    expect(ecosystemInfo('Alpine:3.18').key).toBe('alpine:v3.18');
    expect(ecosystemInfo('Ubuntu:22.04:LTS').key).toBe('ubuntu:22.04:lts');
    expect(ecosystemInfo('PyPI').comparator).toBe(comparePep440);
    expect(ecosystemInfo('Maven').comparator).toBe(compareMaven);
    expect(ecosystemInfo('Debian:12').comparator).toBe(compareDpkg);
    expect(ecosystemInfo('Alpine:v3.20').comparator).toBe(compareApk);
    expect(ecosystemInfo('Go').comparator).toBe(compareSemver);
    expect(packageKey('pypi', 'Django_REST.framework')).toBe('django-rest-framework');
    expect(packageKey('npm', '@Babel/Core')).toBe('@babel/core');
  });
});

describe('OSV ranges', () => {
  const semverRange = (events: Array<Record<string, string>>) => ({ type: 'SEMVER' as const, events });

  it('introduced / fixed, with several intervals', () => {
    const range = semverRange([{ introduced: '0' }, { fixed: '1.2.0' }, { introduced: '2.0.0' }, { fixed: '2.3.1' }]);
    const hit = (v: string) => inRange(v, range, compareSemver);
    expect([hit('0.1.0'), hit('1.1.9'), hit('1.2.0'), hit('1.9.9'), hit('2.0.0'), hit('2.3.0'), hit('2.3.1'), hit('3.0.0')]).toEqual([
      true,
      true,
      false,
      false,
      true,
      true,
      false,
      false,
    ]);
  });

  it('last_affected includes its version; limit excludes from there on; events in any order', () => {
    expect(inRange('1.4.0', semverRange([{ last_affected: '1.4.0' }, { introduced: '1.0.0' }]), compareSemver)).toBe(true);
    expect(inRange('1.4.1', semverRange([{ introduced: '1.0.0' }, { last_affected: '1.4.0' }]), compareSemver)).toBe(false);
    expect(inRange('0.9.0', semverRange([{ introduced: '1.0.0' }]), compareSemver)).toBe(false);
    expect(inRange('5.0.0', semverRange([{ introduced: '1.0.0' }]), compareSemver)).toBe(true);
    expect(inRange('3.0.0', semverRange([{ introduced: '1.0.0' }, { limit: '3.0.0' }]), compareSemver)).toBe(false);
  });

  it('explicit versions match; ranges of another scheme do not; fixed versions above the version are reported', () => {
    const entry = { ranges: [{ type: 'ECOSYSTEM' as const, events: [{ introduced: '0' }, { fixed: '1:2.0-1' }] }], versions: ['weird-version'] };
    const dpkg = () => compareDpkg;
    expect(evaluateAffected('1:1.9-3', entry, dpkg)).toEqual({ affected: true, fixed: ['1:2.0-1'] });
    expect(evaluateAffected('1.9-3', entry, dpkg).affected).toBe(true);
    expect(evaluateAffected('1:2.0-1', entry, dpkg).affected).toBe(false);
    expect(evaluateAffected('weird-version', { ranges: [], versions: ['weird-version'] }, dpkg).affected).toBe(true);
    expect(evaluateAffected('not.semver', { ranges: [semverRange([{ introduced: '0' }, { fixed: '1.0.0' }])], versions: [] }, () => compareSemver).affected).toBe(false);
  });
});

describe('CPE 2.3 and CVSS', () => {
  it('parses CPE names with escapes and matches version bounds', () => {
    const cpe = parseCpe('cpe:2.3:a:apache:log4j:2.0:beta9:*:*:*:*:*:*')!;
    expect(cpe).toMatchObject({ part: 'a', vendor: 'apache', product: 'log4j', version: '2.0', update: 'beta9' });
    expect(parseCpe('cpe:2.3:a:foo\\:bar:baz:1.0:*:*:*:*:*:*:*')).toMatchObject({ vendor: 'foo:bar', product: 'baz' });
    expect(parseCpe('cpe:/a:apache:log4j:2.0')).toBeNull();
    const bounds = { version: '*', cpe_update: '*', version_start_including: '2.0.1', version_start_excluding: null, version_end_including: null, version_end_excluding: '2.12.2' };
    expect(cpeVersionMatches(bounds, '2.0.1')).toBe(true);
    expect(cpeVersionMatches(bounds, '2.12.1')).toBe(true);
    expect(cpeVersionMatches(bounds, '2.12.2')).toBe(false);
    expect(cpeVersionMatches(bounds, '2.0')).toBe(false);
    const exact = { version: '2.0', cpe_update: 'beta9', version_start_including: null, version_start_excluding: null, version_end_including: null, version_end_excluding: null };
    expect(cpeVersionMatches(exact, '2.0', 'beta9')).toBe(true);
    expect(cpeVersionMatches(exact, '2.0', 'rc1')).toBe(false);
    expect(cpeVersionMatches({ ...bounds, version_start_including: null, version_start_excluding: '1.0', version_end_excluding: null, version_end_including: '1.5' }, '1.5')).toBe(
      true,
    );
  });

  it('computes CVSS 3.x base scores', () => {
    expect(cvss3BaseScore('CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H')).toBe(10);
    expect(cvss3BaseScore('CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H')).toBe(9.8);
    expect(cvss3BaseScore('CVSS:3.1/AV:N/AC:L/PR:L/UI:N/S:U/C:H/I:N/A:N')).toBe(6.5);
    expect(cvss3BaseScore('CVSS:3.1/AV:L/AC:L/PR:L/UI:N/S:U/C:H/I:H/A:H')).toBe(7.8);
    expect(cvss3BaseScore('CVSS:3.1/AV:N/AC:L/PR:N/UI:R/S:C/C:L/I:L/A:N')).toBe(6.1);
    expect(cvss3BaseScore('CVSS:3.0/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:N')).toBe(0);
    expect(cvss3BaseScore('CVSS:2.0/AV:N')).toBeNull();
    expect([cvssSeverity(0), cvssSeverity(3.9), cvssSeverity(4), cvssSeverity(7), cvssSeverity(9)]).toEqual(['NONE', 'LOW', 'MEDIUM', 'HIGH', 'CRITICAL']);
  });
});
