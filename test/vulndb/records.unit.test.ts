import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { detectFormat } from '../../src/modules/vulndb/import/detect.js';
import { epssRow, kevRow, nvdRows, osvRows, parseEpssComment, RecordError } from '../../src/modules/vulndb/import/records.js';
import { displayLocation } from '../../src/modules/vulndb/sync-job.js';
import { EPSS_KEV, KEV_CSV, KEV_JSON, NVD_FEED, OSV_NPM, readJson } from './helpers.js';

const head = (path: string) => readFileSync(path).subarray(0, 65536).toString('utf8');

describe('format detection', () => {
  it('recognises each published format from its first bytes', () => {
    expect(detectFormat(head(KEV_JSON))).toBe('kev-json');
    expect(detectFormat(head(KEV_CSV))).toBe('kev-csv');
    expect(detectFormat(head(EPSS_KEV))).toBe('epss-csv');
    expect(detectFormat('#model_version:v2025.03.14,score_date:2025-05-18T00:00:00+0000\ncve,epss,percentile\n')).toBe('epss-csv');
    expect(detectFormat(head(NVD_FEED))).toBe('nvd-json');
    expect(detectFormat(head(OSV_NPM))).toBe('osv-json');
    expect(detectFormat('{\n "schema_version": "1.6.0",\n "id": "GHSA-x", "modified": "2024-01-01T00:00:00Z"')).toBe('osv-json');
    expect(detectFormat('{"vulns": [{"id": "GO-2023-2102"')).toBe('osv-json');
    expect(detectFormat('{"hello": 1}')).toBeNull();
    expect(detectFormat('name,version\n')).toBeNull();
  });

  it('with a forced source, only that source is considered', () => {
    expect(detectFormat(head(KEV_JSON), 'epss')).toBeNull();
    expect(detectFormat('{"resultsPerPage": 0, "vulnerabilities": []}', 'nvd')).toBe('nvd-json');
    expect(detectFormat('[]', 'osv')).toBe('osv-json');
    expect(detectFormat('CVE-2021-44228,0.9,0.99\n', 'epss')).toBe('epss-csv');
  });
});

describe('record normalisation', () => {
  it('KEV: the JSON and CSV forms of an entry give the same row and digest', () => {
    const json = readJson(KEV_JSON).vulnerabilities[0];
    const csv = { ...json, cwes: json.cwes.join(', ') };
    expect(kevRow(json)).toEqual(kevRow(csv));
    expect(kevRow(json)).toMatchObject({ cve_id: 'CVE-2025-48384', cwes: ['CWE-59', 'CWE-436'], due_date: '2025-09-15' });
    expect(() => kevRow({ ...json, dateAdded: '25/08/2025' })).toThrow(RecordError);
  });

  it('EPSS: scores in [0, 1]; the header comment line', () => {
    expect(epssRow({ cve: 'CVE-2021-44228', epss: '0.943580000', percentile: '0.999570000' })).toEqual({ cve_id: 'CVE-2021-44228', epss: 0.94358, percentile: 0.99957 });
    expect(() => epssRow({ cve: 'CVE-2021-44228', epss: '', percentile: '0.5' })).toThrow(/invalid epss/);
    expect(() => epssRow({ cve: 'cve2021', epss: '0.1', percentile: '0.5' })).toThrow(/invalid cve/);
    expect(parseEpssComment('#model_version:v2023.03.01,score_date:2023-04-10T00:00:00+0000')).toEqual({
      model_version: 'v2023.03.01',
      score_date: '2023-04-10T00:00:00.000Z',
    });
  });

  it('NVD: the primary CVSS metric, English description, CWEs and CPE matches', () => {
    const feed = readJson(NVD_FEED);
    const { cve, cpes } = nvdRows(feed.vulnerabilities.find((v: any) => v.cve.id === 'CVE-2021-44228').cve);
    expect(cve).toMatchObject({ cvss_v3_score: 10, cvss_v3_vector: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H', cvss_v2_score: 9.3, last_modified: '2026-06-17T04:12:05.460Z' });
    expect(cve.cwes).not.toContain('NVD-CWE-Other');
    expect(cpes.find((c) => c.product === 'log4j' && c.version_start_including === '2.13.0')).toMatchObject({ vendor: 'apache', version: '*', vulnerable: true });
    expect(cpes.filter((c) => !c.vulnerable).length).toBeGreaterThan(0);
  });

  it('OSV: CVE ids from the id, the aliases, else the related ids; GIT-only entries dropped', () => {
    expect(osvRows({ id: 'GHSA-a', aliases: ['CVE-2024-1001'], related: ['CVE-2024-1002'] }).advisory.cve_ids).toEqual(['CVE-2024-1001']);
    expect(osvRows({ id: 'DSA-1-1', related: ['CVE-2024-1002', 'CVE-2024-1003'] }).advisory.cve_ids).toEqual(['CVE-2024-1002', 'CVE-2024-1003']);
    expect(osvRows({ id: 'CVE-2024-1009', related: ['DSA-1'] }).advisory.cve_ids).toEqual(['CVE-2024-1009']);
    const { affected } = osvRows({
      id: 'CVE-2024-1009',
      affected: [
        { package: {}, ranges: [{ type: 'GIT', repo: 'https://x', events: [{ introduced: '0' }] }] },
        { package: { ecosystem: 'PyPI', name: 'Django_Rest' }, ranges: [{ type: 'ECOSYSTEM', events: [{ introduced: '0' }, { fixed: '1.2' }] }] },
        { package: { ecosystem: 'npm', name: 'x' }, ranges: [{ type: 'GIT', repo: 'https://x', events: [{ introduced: '0' }] }] },
      ],
    });
    expect(affected).toEqual([
      expect.objectContaining({
        idx: 1,
        ecosystem: 'PyPI',
        ecosystem_key: 'pypi',
        name_key: 'django-rest',
        ranges: [{ type: 'ECOSYSTEM', events: [{ introduced: '0' }, { fixed: '1.2' }] }],
      }),
    ]);
    expect(() => osvRows({ summary: 'no id' })).toThrow(RecordError);
  });

  it('locations shown to clients drop URL credentials and query strings', () => {
    expect(displayLocation('https://user:secret@mirror.example.org/kev.json?token=abc')).toBe('https://mirror.example.org/kev.json');
    expect(displayLocation('/srv/mirror/kev.json')).toBe('/srv/mirror/kev.json');
  });
});
