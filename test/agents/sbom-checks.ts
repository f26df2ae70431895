import { readFileSync } from 'node:fs';
import * as CDX from '@cyclonedx/cyclonedx-library';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { fixture } from './helpers.js';

/**
 * The validators and checks the SBOM tests (host and service) run on every document:
 * - CycloneDX: the @cyclonedx/cyclonedx-library's own strict JSON validator for spec 1.5 (its bundled
 *   official schemas, ajv with ajv-formats and ajv-formats-draft2019). Its XML validator needs the
 *   native libxmljs2, which is not installed: the SBOMs are JSON only.
 * - SPDX: the official SPDX 2.3 JSON schema (test/fixtures/agents/schemas/spdx-schema-2.3.json, source
 *   and licence in SOURCES.md there) with ajv.
 * - NTIA minimum elements ("The Minimum Elements For a Software Bill of Materials", NTIA, July 2021):
 *   supplier name, component name, version, unique identifiers, dependency relationship, author of the
 *   SBOM data, timestamp. `ntiaGaps` lists what a document lacks (empty when it has them all).
 */

const cdx = new CDX.Validation.JsonStrictValidator(CDX.Spec.Version.v1dot5);

/** null when valid, else the validator's errors. */
export async function cycloneDxErrors(bom: unknown): Promise<unknown> {
  return cdx.validate(JSON.stringify(bom));
}

let spdxValidate: ValidateFunction | null = null;

/** null when valid, else ajv's errors against the SPDX 2.3 schema. */
export function spdxErrors(doc: unknown): unknown {
  if (!spdxValidate) {
    const ajv = new Ajv({ strict: false, allErrors: true });
    (addFormats as unknown as (a: Ajv) => Ajv)(ajv);
    spdxValidate = ajv.compile(JSON.parse(readFileSync(fixture('schemas/spdx-schema-2.3.json'), 'utf8')) as Record<string, unknown>);
  }
  return spdxValidate(doc) ? null : spdxValidate.errors?.slice(0, 5);
}

type Json = Record<string, any>;

/**
 * NTIA elements missing from a CycloneDX BOM. `unknownSupplier` says which components may lack a
 * supplier (NTIA allows declaring it unknown: packages of language ecosystems, whose publisher the
 * inventory does not carry).
 */
export function ntiaGapsCycloneDx(bom: Json, unknownSupplier: (c: Json) => boolean = () => false): string[] {
  const gaps: string[] = [];
  if (!bom.metadata?.timestamp) gaps.push('timestamp');
  if (!bom.metadata?.authors?.length) gaps.push('author');
  const all: Json[] = [bom.metadata?.component, ...(bom.components ?? [])].filter(Boolean);
  const refs = new Set<string>();
  for (const c of all) {
    const at = c['bom-ref'] ?? c.name;
    if (!c.name) gaps.push(`${at}: name`);
    if (!c.version) gaps.push(`${at}: version`);
    if (!c.supplier?.name && !unknownSupplier(c)) gaps.push(`${at}: supplier`);
    if (!c['bom-ref'] || refs.has(c['bom-ref'])) gaps.push(`${at}: unique identifier`);
    refs.add(c['bom-ref']);
  }
  // Every component is reachable from the subject through the dependency graph.
  const edges = new Map<string, string[]>((bom.dependencies ?? []).map((d: Json) => [d.ref, d.dependsOn ?? []]));
  const reached = new Set<string>();
  const walk = [bom.metadata?.component?.['bom-ref']];
  while (walk.length) {
    const ref = walk.pop();
    if (!ref || reached.has(ref)) continue;
    reached.add(ref);
    walk.push(...(edges.get(ref) ?? []));
  }
  for (const c of bom.components ?? []) if (!reached.has(c['bom-ref'])) gaps.push(`${c['bom-ref']}: dependency relationship`);
  return gaps;
}

/** NTIA elements missing from an SPDX 2.3 document (a NOASSERTION supplier counts as missing unless allowed). */
export function ntiaGapsSpdx(doc: Json, unknownSupplier: (p: Json) => boolean = () => false): string[] {
  const gaps: string[] = [];
  if (!doc.creationInfo?.created) gaps.push('timestamp');
  const creators: string[] = doc.creationInfo?.creators ?? [];
  if (!creators.some((c) => /^(Organization|Person): /.test(c))) gaps.push('author');
  const ids = new Set<string>();
  for (const p of doc.packages ?? []) {
    if (!p.name) gaps.push(`${p.SPDXID}: name`);
    if (!p.versionInfo) gaps.push(`${p.SPDXID}: version`);
    if ((!p.supplier || p.supplier === 'NOASSERTION') && !unknownSupplier(p)) gaps.push(`${p.SPDXID}: supplier`);
    if (!p.SPDXID || ids.has(p.SPDXID)) gaps.push(`${p.SPDXID}: unique identifier`);
    ids.add(p.SPDXID);
  }
  const related = new Set<string>((doc.relationships ?? []).flatMap((r: Json) => [r.spdxElementId, r.relatedSpdxElement]));
  for (const p of doc.packages ?? []) if (!related.has(p.SPDXID)) gaps.push(`${p.SPDXID}: dependency relationship`);
  return gaps;
}
