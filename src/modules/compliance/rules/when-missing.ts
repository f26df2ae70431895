import { isScalar, isSeq, type Node, type YAMLMap } from 'yaml';

/**
 * What a rule concludes for a resource that lacks a property it reads (issue 22, "fail closed"):
 * `violation` or `pass` when AWS documents what happens while that setting is absent and that state
 * fails or satisfies the rule; `unknown` otherwise. Declared per rule in its content with the AWS
 * documentation it rests on (`when_missing_source`); see content/rules/README.md, "When a property
 * is missing".
 */
export const WHEN_MISSING = ['violation', 'pass', 'unknown'] as const;
export type WhenMissing = (typeof WHEN_MISSING)[number];

export interface WhenMissingDeclaration {
  when_missing: WhenMissing;
  /** An https URL of the AWS documentation the outcome rests on, optionally followed by a note; or a note alone for `unknown`. */
  when_missing_source: string;
  /**
   * Paths of `reads` whose absence the condition judges itself: it tests them with has() (an RDS
   * instance outside any cluster has no dBClusterIdentifier), or reads them only on the resources
   * that must have them. They never make a resource "lack" configuration; a condition that still
   * fails on one gives an evaluation error, which is unknown too, never a pass.
   */
  optional_reads?: string[];
}

/** The part of rule-validation.ts's reader this needs (kept structural so the reader stays private there). */
interface FieldReader {
  field(map: YAMLMap, key: string, required: boolean): Node | undefined;
  fail(node: Node | null | undefined, message: string, fallback?: Node): undefined;
  string(map: YAMLMap, key: string, required?: boolean): string | undefined;
  oneOf<T extends string>(map: YAMLMap, key: string, allowed: readonly T[]): T | undefined;
  stringList(map: YAMLMap, key: string, pattern: RegExp, required: boolean): string[] | undefined;
}

const URL = /https:\/\/[^\s)]+/;
const PATH = /^[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*$/;

/**
 * Reads `when_missing`, `when_missing_source` and `optional_reads`. Every built-in rule declares the
 * first two (a rule without them does not load: fail closed); a `violation` or `pass` must cite an
 * https URL, since it states what AWS does.
 */
export function readWhenMissing(r: FieldReader, map: YAMLMap, reads: string[] | undefined): Partial<WhenMissingDeclaration> | undefined {
  const declared = r.field(map, 'when_missing', true) !== undefined;
  const outcome = declared ? r.oneOf<WhenMissing>(map, 'when_missing', WHEN_MISSING) : undefined;
  const source = r.string(map, 'when_missing_source', false);
  const sourceNode = r.field(map, 'when_missing_source', false);
  if (declared && source === undefined && sourceNode === undefined) {
    return r.fail(r.field(map, 'when_missing', false), 'when_missing needs when_missing_source: the AWS documentation (an https URL) or, for unknown, a note saying why');
  }
  if ((outcome === 'violation' || outcome === 'pass') && source !== undefined && !URL.test(source)) {
    return r.fail(sourceNode, `when_missing: ${outcome} states what AWS does, so when_missing_source must cite its documentation (an https URL)`);
  }
  const optionalNode = r.field(map, 'optional_reads', false);
  let optional: string[] | undefined;
  if (optionalNode !== undefined) {
    if (!isSeq(optionalNode)) return r.fail(optionalNode, 'optional_reads must be a list of paths from reads');
    optional = r.stringList(map, 'optional_reads', PATH, true);
    for (const item of optionalNode.items as Node[]) {
      if (isScalar(item) && typeof item.value === 'string' && reads && !reads.includes(item.value)) {
        r.fail(item, `optional_reads: "${item.value}" is not in reads`);
      }
    }
    if (reads && optional && optional.length >= reads.length) r.fail(optionalNode, 'optional_reads must leave at least one path of reads required');
  }
  if (outcome === undefined) return optional === undefined ? undefined : { optional_reads: optional };
  return { when_missing: outcome, when_missing_source: source!, ...(optional === undefined ? {} : { optional_reads: optional }) };
}
