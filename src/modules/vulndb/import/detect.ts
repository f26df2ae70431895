import type { VulnSource } from '../tables.js';

export type InputFormat = 'kev-json' | 'kev-csv' | 'epss-csv' | 'nvd-json' | 'osv-json';

export const SOURCES: readonly VulnSource[] = ['kev', 'epss', 'nvd', 'osv'];

export function isSource(value: unknown): value is VulnSource {
  return typeof value === 'string' && (SOURCES as readonly string[]).includes(value);
}

export function sourceOf(format: InputFormat): VulnSource {
  return format.slice(0, format.indexOf('-')) as VulnSource;
}

/**
 * Recognises a file from its first bytes (decompressed):
 * - `#model_version:…` or a `cve,epss,percentile` header: EPSS CSV;
 * - a `cveID,vendorProject,…` header: KEV CSV;
 * - a JSON object naming `catalogVersion` or CISA's catalog title: KEV JSON;
 * - a JSON object with `vulnerabilities` and `"cve":` records or `"format": "NVD_CVE"`: NVD CVE API 2.0;
 * - a JSON array, or an object with `schema_version`/`affected`/`modified` (an advisory) or `vulns`: OSV.
 * With a forced source, only the source's own formats are considered. Null when nothing fits.
 */
export function detectFormat(head: string, forced?: VulnSource): InputFormat | null {
  const text = head.replace(/^\s+/, '');
  const firstLine = text.slice(0, Math.max(0, text.indexOf('\n')) || text.length).replace(/\r$/, '');
  const csvHeader = firstLine.toLowerCase().replace(/"/g, '');
  const candidates: InputFormat[] = [];
  if (text.startsWith('#model_version') || /^cve,epss(,percentile)?\b/.test(csvHeader)) candidates.push('epss-csv');
  if (csvHeader.startsWith('cveid,vendorproject,')) candidates.push('kev-csv');
  if (text.startsWith('{')) {
    if (/"catalogVersion"\s*:/.test(text) || /"title"\s*:\s*"CISA Catalog of Known Exploited/.test(text)) candidates.push('kev-json');
    if (/"format"\s*:\s*"NVD_CVE"/.test(text) || (/"vulnerabilities"\s*:/.test(text) && /"cve"\s*:\s*\{/.test(text))) candidates.push('nvd-json');
    if (/"schema_version"\s*:/.test(text) || /"affected"\s*:/.test(text) || /"vulns"\s*:/.test(text) || (/"id"\s*:/.test(text) && /"modified"\s*:/.test(text)))
      candidates.push('osv-json');
  }
  if (text.startsWith('[')) candidates.push('osv-json');
  const fitting = forced ? candidates.filter((c) => sourceOf(c) === forced) : candidates;
  if (fitting.length) return fitting[0]!;
  // A forced source whose file the sniffing could not place: trust the operator on the container shape.
  if (forced === 'kev') return text.startsWith('{') ? 'kev-json' : text ? 'kev-csv' : null;
  if (forced === 'epss') return text && !text.startsWith('{') && !text.startsWith('[') ? 'epss-csv' : null;
  if (forced === 'nvd') return text.startsWith('{') ? 'nvd-json' : null;
  if (forced === 'osv') return text.startsWith('{') || text.startsWith('[') ? 'osv-json' : null;
  return null;
}
