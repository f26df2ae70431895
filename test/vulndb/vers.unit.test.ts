import { describe, expect, it } from 'vitest';
import { purlType, versRange } from '../../src/modules/vulndb/vers.js';
import { databaseOf, methodOf, urgencySeverity } from '../../src/modules/vulndb/vulnerability-facts.js';

/** OSV ranges as vers ranges (package-url's vers specification), CVSS methods, advisory databases and urgencies. */
describe('vers ranges of OSV ranges', () => {
  it('writes introduced/fixed/last_affected intervals, "every version" and several intervals', () => {
    expect(versRange('deb', { type: 'ECOSYSTEM', events: [{ introduced: '0' }, { fixed: '1.52.0-1+deb12u1' }] })).toBe('vers:deb/<1.52.0-1+deb12u1');
    expect(versRange('deb', { type: 'ECOSYSTEM', events: [{ introduced: '0' }] })).toBe('vers:deb/*');
    expect(versRange('npm', { type: 'SEMVER', events: [{ introduced: '1.0.0' }, { fixed: '1.2.5' }, { introduced: '2.0.0' }, { last_affected: '2.1.0' }] })).toBe(
      'vers:npm/>=1.0.0|<1.2.5|>=2.0.0|<=2.1.0',
    );
    expect(versRange('pypi', { type: 'ECOSYSTEM', events: [{ introduced: '3.1' }] })).toBe('vers:pypi/>=3.1');
    // `limit` only bounds a git walk; `|` and `%` in a version are escaped.
    expect(versRange('generic', { type: 'ECOSYSTEM', events: [{ introduced: '0' }, { limit: '9' }, { fixed: 'a|b%' }] })).toBe('vers:generic/<a%7Cb%25');
    expect(versRange('deb', { type: 'ECOSYSTEM', events: [] })).toBeNull();
  });

  it('takes the scheme from the purl type', () => {
    expect(purlType('pkg:deb/debian/bash@5.2?arch=amd64')).toBe('deb');
    expect(purlType('pkg:npm/%40scope/name@1.0.0')).toBe('npm');
    expect(purlType('not a purl')).toBeNull();
  });
});

describe('ratings and sources', () => {
  it('names the CVSS method of a vector as CycloneDX does', () => {
    expect(methodOf('CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:H')).toBe('CVSSv31');
    expect(methodOf('CVSS:3.0/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:H')).toBe('CVSSv3');
    expect(methodOf('CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N')).toBe('CVSSv4');
    expect(methodOf('AV:N/AC:M/Au:N/C:N/I:N/A:P')).toBe('CVSSv2');
    expect(methodOf('high')).toBeNull();
  });

  it("names each advisory's own database and page", () => {
    expect(databaseOf('CVE-2025-1180', 'Debian:12')).toEqual({ name: 'Debian Security Tracker', url: 'https://security-tracker.debian.org/tracker/CVE-2025-1180' });
    expect(databaseOf('DEBIAN-CVE-2025-1180', null)).toEqual({ name: 'Debian Security Tracker', url: 'https://security-tracker.debian.org/tracker/CVE-2025-1180' });
    expect(databaseOf('USN-6543-1', 'Ubuntu:22.04:LTS')).toEqual({ name: 'Ubuntu CVE Tracker', url: 'https://ubuntu.com/security/notices/USN-6543-1' });
    expect(databaseOf('GHSA-p6mc-m468-83gw', 'npm')).toEqual({ name: 'GitHub Advisory Database', url: 'https://github.com/advisories/GHSA-p6mc-m468-83gw' });
    expect(databaseOf('PYSEC-2023-1', 'PyPI')).toEqual({ name: 'PyPI Advisory Database', url: 'https://osv.dev/vulnerability/PYSEC-2023-1' });
  });

  it("maps distributions' urgencies to severities; 'not yet assigned' is none", () => {
    expect(['high', 'medium', 'low', 'unimportant', 'low**', 'negligible', 'critical', 'not yet assigned', null].map(urgencySeverity)).toEqual([
      'HIGH',
      'MEDIUM',
      'LOW',
      'LOW',
      'LOW',
      'LOW',
      'CRITICAL',
      null,
      null,
    ]);
  });
});
