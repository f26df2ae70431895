import { lookupTable } from '../../platform/lookup-table.js';
/**
 * CVSS v3.0 / v3.1 base scores from vector strings (FIRST's specification, section 7), used when a
 * CVE has no NVD record but an OSV advisory carries a CVSS_V3 vector.
 */
const WEIGHTS: Record<string, Record<string, number>> = lookupTable({
  AV: lookupTable({ N: 0.85, A: 0.62, L: 0.55, P: 0.2 }),
  AC: lookupTable({ L: 0.77, H: 0.44 }),
  UI: lookupTable({ N: 0.85, R: 0.62 }),
  C: lookupTable({ H: 0.56, L: 0.22, N: 0 }),
  I: lookupTable({ H: 0.56, L: 0.22, N: 0 }),
  A: lookupTable({ H: 0.56, L: 0.22, N: 0 }),
});

/** Round up to one decimal, avoiding floating-point artefacts (CVSS 3.1 Appendix A). */
function roundUp31(value: number): number {
  const scaled = Math.round(value * 100_000);
  return scaled % 10_000 === 0 ? scaled / 100_000 : (Math.floor(scaled / 10_000) + 1) / 10;
}

export function cvss3BaseScore(vector: string): number | null {
  const match = /^CVSS:3\.([01])\/(.+)$/.exec(vector.trim());
  if (!match) return null;
  const metrics = Object.fromEntries(match[2]!.split('/').map((part) => part.split(':') as [string, string]));
  const scope = metrics.S;
  if (scope !== 'U' && scope !== 'C') return null;
  const pr = lookupTable({ N: 0.85, L: scope === 'C' ? 0.68 : 0.62, H: scope === 'C' ? 0.5 : 0.27 })[metrics.PR ?? ''];
  const w = (name: string) => WEIGHTS[name]![metrics[name] ?? ''];
  const [av, ac, ui, c, i, a] = ['AV', 'AC', 'UI', 'C', 'I', 'A'].map(w);
  if ([pr, av, ac, ui, c, i, a].some((v) => v === undefined)) return null;
  const iss = 1 - (1 - c!) * (1 - i!) * (1 - a!);
  const impact = scope === 'U' ? 6.42 * iss : 7.52 * (iss - 0.029) - 3.25 * (iss - 0.02) ** 15;
  const exploitability = 8.22 * av! * ac! * pr! * ui!;
  if (impact <= 0) return 0;
  const raw = scope === 'U' ? Math.min(impact + exploitability, 10) : Math.min(1.08 * (impact + exploitability), 10);
  return match[1] === '1' ? roundUp31(raw) : Math.ceil(raw * 10) / 10;
}

export function cvssSeverity(score: number): string {
  if (score === 0) return 'NONE';
  if (score < 4) return 'LOW';
  if (score < 7) return 'MEDIUM';
  if (score < 9) return 'HIGH';
  return 'CRITICAL';
}
