import type { Severity } from '../rules/rule-types.js';
import { lookupTable } from '../../../platform/lookup-table.js';

/**
 * The 0-100 risk score of a finding, documented in the README:
 *   severity  CRITICAL 60, HIGH 45, MEDIUM 30, LOW 15, INFO 5
 *   kev       +15 when a referenced CVE is in the known-exploited catalog
 *   epss      +round(10 x highest EPSS probability of its CVEs)
 *   exposure  +10 when the resource is reachable from the Internet (see exposure.ts)
 *   criticality +10 / +6 / +3 / 0 for a resource in a critical / high / medium / low business service
 * capped at 100. Each factor is returned so the ranking can be explained.
 */
export const SEVERITY_POINTS: Record<Severity, number> = { CRITICAL: 60, HIGH: 45, MEDIUM: 30, LOW: 15, INFO: 5 };
export const CRITICALITY_POINTS: Record<string, number> = lookupTable({ critical: 10, high: 6, medium: 3, low: 0 });

export interface RiskInputs {
  severity: Severity;
  kev: boolean;
  epss: number | null;
  exposed: boolean;
  criticality: string | null;
}

export interface RiskFactors {
  severity: number;
  kev: number;
  epss: number;
  exposure: number;
  criticality: number;
}

export function riskScore(input: RiskInputs): { score: number; factors: RiskFactors } {
  const factors: RiskFactors = {
    severity: SEVERITY_POINTS[input.severity],
    kev: input.kev ? 15 : 0,
    epss: input.epss === null ? 0 : Math.round(10 * Math.min(1, Math.max(0, input.epss))),
    exposure: input.exposed ? 10 : 0,
    criticality: input.criticality ? (CRITICALITY_POINTS[input.criticality] ?? 0) : 0,
  };
  const score = Math.min(100, factors.severity + factors.kev + factors.epss + factors.exposure + factors.criticality);
  return { score, factors };
}
