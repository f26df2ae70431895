import { controlTitle, frameworks, PROWLER_FRAMEWORKS, type FrameworkId, type FrameworkMapping } from '../../compliance/index.js';
import type { ImportProvider, ImportedFinding } from './import-record.js';

/**
 * The requirements a scanner states for its check (Prowler's `unmapped.compliance`, ASFF
 * `Compliance.RelatedRequirements`), named the scanner's way, onto our catalogs. Only a requirement
 * whose control exists in content/frameworks/<id>.json counts; CIS and PCI only in the version our
 * catalog is (CIS AWS 7.0, PCI DSS 4.0): another version numbers its requirements differently, so a
 * CIS-1.4 "1.20" is not our "1.20". The frameworks carried as Prowler ships them (HIPAA, ISO 27001,
 * NIST CSF, FedRAMP, ...) are named by the compliance key of their catalog (`HIPAA`, `ISO27001-2022`)
 * and their requirements by Prowler's id (`164_308_a_1_ii_a`) or ours (`164.308(a)(1)(ii)(A)`).
 * Everything else stays on the finding's details.
 */

type Normaliser = (requirement: string) => string[];

interface Rule {
  name: RegExp;
  framework: FrameworkId;
  /** CIS benchmarks are per provider: Prowler's CIS-2.0 of an Azure finding is the Azure benchmark. */
  providers?: ImportProvider[];
  /** The candidate control ids for the source's requirement id, best first. */
  ids: Normaliser;
}

/** Prowler's NIST ids are `ac_2_1` (AC-2(1)), `ac_2_3_a`; ASFF's are `NIST.800-53.r5 AC-2(1)`. */
const nistIds: Normaliser = (requirement) => {
  const asff = /^NIST\.800-53\.r5\s+(.+)$/i.exec(requirement);
  if (asff) return [asff[1]!.toUpperCase()];
  const parts = requirement.toLowerCase().split('_');
  if (parts.length < 2 || !/^[a-z]{2}$/.test(parts[0]!) || !/^\d+$/.test(parts[1]!)) return [requirement.toUpperCase()];
  const base = `${parts[0]!.toUpperCase()}-${parts[1]}`;
  return parts[2] && /^\d+$/.test(parts[2]) ? [`${base}(${parts[2]})`, base] : [base];
};

/** Prowler's SOC 2 ids are `cc_6_1` (CC6.1). */
const soc2Ids: Normaliser = (requirement) => {
  const match = /^([a-z]+)_(\d+)_(\d+)$/i.exec(requirement);
  return match ? [`${match[1]!.toUpperCase()}${match[2]}.${match[3]}`] : [requirement.toUpperCase()];
};

/** Prowler's PCI 4.0 items (`1.2.5.1`) are the "prowlerItems" of our controls (`1.2.5`). */
const pciIds: Normaliser = (requirement) => {
  const ids = [requirement];
  const parent = pciParents().get(requirement);
  if (parent) ids.push(parent);
  return ids;
};

let pciParentIndex: Map<string, string> | null = null;
function pciParents(): Map<string, string> {
  if (!pciParentIndex) {
    pciParentIndex = new Map();
    for (const control of frameworks().get('pci-dss')?.controls.values() ?? []) {
      const items = (control as { prowlerItems?: Array<{ id: string }> }).prowlerItems ?? [];
      for (const item of items) pciParentIndex.set(item.id, control.id);
    }
  }
  return pciParentIndex;
}

/** A Prowler-carried catalog's rule: its compliance key, and Prowler's requirement ids onto ours. */
function prowlerRule(framework: (typeof PROWLER_FRAMEWORKS)[number]): Rule {
  const catalog = frameworks().get(framework)!;
  const ours = new Map<string, string>();
  for (const control of catalog.controls.values()) if (control.prowler_id) ours.set(control.prowler_id, control.id);
  const key = (catalog.prowlerKey ?? framework).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return { name: new RegExp(`^${key}$`, 'i'), framework, ids: (r) => [ours.get(r) ?? r] };
}

let rules: Rule[] | null = null;
function allRules(): Rule[] {
  rules ??= [
    { name: /^(NIST-800-53-Revision-5|NIST\.800-53\.r5)$/i, framework: 'nist-800-53', ids: nistIds },
    { name: /^CIS-7\.0$/i, framework: 'cis-aws', providers: ['aws'], ids: (r) => [r] },
    { name: /^PCI-4\.0$/i, framework: 'pci-dss', ids: pciIds },
    { name: /^SOC2$/i, framework: 'soc2', ids: soc2Ids },
    ...PROWLER_FRAMEWORKS.map(prowlerRule),
  ];
  return rules;
}

export interface MappedRequirements {
  mappings: FrameworkMapping[];
  /** Requirements of frameworks or versions we do not carry: kept on the finding's details. */
  unmapped: ImportedFinding['requirements'];
}

function mapOne(requirement: { framework: string; requirement: string }, provider: ImportProvider): FrameworkMapping | null {
  for (const rule of allRules()) {
    if (!rule.name.test(requirement.framework)) continue;
    if (rule.providers && !rule.providers.includes(provider)) return null;
    const id = rule.ids(requirement.requirement).find((candidate) => controlTitle(rule.framework, candidate) !== null);
    return id ? { framework: rule.framework, control_id: id } : null;
  }
  return null;
}

export function mapRequirements(requirements: ImportedFinding['requirements'], provider: ImportProvider): MappedRequirements {
  const mappings: FrameworkMapping[] = [];
  const seen = new Set<string>();
  const unmapped: ImportedFinding['requirements'] = [];
  for (const requirement of requirements) {
    const mapped = mapOne(requirement, provider);
    if (!mapped) {
      unmapped.push(requirement);
      continue;
    }
    const key = `${mapped.framework}\u0000${mapped.control_id}`;
    if (!seen.has(key)) mappings.push(mapped);
    seen.add(key);
  }
  return { mappings, unmapped };
}
