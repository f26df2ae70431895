import type { RuleDefinition } from './rule-types.js';
import type { WhenMissing } from './when-missing.js';

/**
 * Which of a rule's property paths a resource lacks (issue 22, "fail closed").
 *
 * A path (schema form, `supplementaryConfiguration.BucketVersioningConfiguration.status`) is walked
 * from the node's properties, key by key:
 * - a key that is not there, or a null or scalar value before the path ends, means the path is
 *   absent: the block that would hold it is unset;
 * - a value at the end of the path is present, null included (AWS Config records unset fields as
 *   null, and the condition tests them: content/rules/README.md, "Null is a value");
 * - a list on the way is present, whatever its elements hold: the rest of the path reads the
 *   elements (lists are not marked in the schema), and judging them is the condition's job. An
 *   empty list of security group rules is a recorded state, not a missing one.
 */
export function missingPaths(properties: Record<string, unknown>, paths: readonly string[]): string[] {
  let missing: string[] | null = null;
  for (const path of paths) {
    if (!present(properties, segmentsOf(path))) (missing ??= []).push(path);
  }
  return missing ?? NONE;
}

const NONE: string[] = [];
const segments = new Map<string, string[]>();

function segmentsOf(path: string): string[] {
  let parts = segments.get(path);
  if (!parts) {
    parts = path.split('.');
    if (segments.size > 10_000) segments.clear();
    segments.set(path, parts);
  }
  return parts;
}

function present(root: unknown, parts: string[]): boolean {
  let current = root;
  for (const key of parts) {
    if (Array.isArray(current)) return true;
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, key)) return false;
    current = (current as Record<string, unknown>)[key];
  }
  return true;
}

/** What a rule concludes for a resource lacking one of `paths`: null for a rule that declares none (custom rules). */
export interface MissingJudgement {
  paths: string[];
  outcome: WhenMissing;
}

/** The required reads of a built-in rule (its `reads` without `optional_reads`) and its `when_missing`. */
export function missingJudgementOf(definition: Pick<RuleDefinition, 'reads' | 'when_missing' | 'optional_reads'> | null | undefined): MissingJudgement | null {
  if (!definition?.when_missing) return null;
  const optional = new Set(definition.optional_reads ?? []);
  const paths = definition.reads.filter((p) => !optional.has(p));
  return paths.length ? { paths, outcome: definition.when_missing } : null;
}
