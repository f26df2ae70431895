import { Environment, type ASTNode, type ParseResult } from '@marcbachmann/cel-js';
import { beginBudget, endBudget, instrument, patternProblems } from './cel-budget.js';
import { registerIamFunctions } from './cel-iam.js';

/**
 * Rule conditions are CEL over one variable, `resource` (`id, type, name, region, account_id,
 * properties, tags`), and are true when the resource violates the rule.
 *
 * Conditions are parsed and type-checked once (`compileCondition`) and the compiled function is
 * reused for every resource, because the audit engine evaluates every rule against every node of a
 * tenant. `resource` is declared as a `map`, so the checker types every property access as `dyn`:
 * a condition that cannot compile is caught at load time, a missing property only at evaluation.
 *
 * `matches()` is RE2 (CEL's regex dialect, linear time) and an evaluation may be given a time budget:
 * see cel-budget.ts. The IAM policy functions (`iamPolicy`, `iamAdministrative`, …) are registered
 * from cel-iam.ts.
 */

export class ConditionCompileError extends Error {
  override name = 'ConditionCompileError';
  constructor(
    message: string,
    /** The library's one-line summary, without the source excerpt. */
    readonly summary: string,
    /** Character offsets in the expression, when the library knows them. */
    readonly range: { start: number; end: number } | null,
  ) {
    super(message);
  }
}

export interface CompiledCondition {
  readonly expression: string;
  readonly ast: ASTNode;
  /** @internal the library's compiled evaluator. */
  readonly run: ParseResult;
}

/** `budget` marks an evaluation stopped at its time budget (its partial result is discarded). */
export type ConditionResult = { violated: boolean } | { error: string; budget?: true };

/** The evaluation context a condition sees. */
export interface ConditionResource {
  id: string;
  type: string;
  name: string | null;
  region: string | null;
  account_id: string | null;
  properties: Record<string, unknown>;
  tags: Record<string, unknown>;
}

let environment: Environment | undefined;

/** Built on first use: building an Environment is the expensive part and most imports never compile. */
function env(): Environment {
  environment ??= registerIamFunctions(new Environment().registerVariable('resource', 'map'));
  return environment;
}

interface LibraryError {
  message: string;
  summary?: string;
  range?: { start: number; end: number };
}

function compileError(err: LibraryError): ConditionCompileError {
  const summary = err.summary ?? err.message.split('\n')[0] ?? err.message;
  return new ConditionCompileError(err.message, summary, err.range ?? null);
}

/** Parses and type-checks `expression`; throws ConditionCompileError with the library's message. */
export function compileCondition(expression: string): CompiledCondition {
  let run: ParseResult;
  try {
    run = env().parse(expression);
  } catch (err) {
    throw compileError(err as LibraryError);
  }
  const checked = run.check();
  if (!checked.valid) throw compileError(checked.error ?? { message: 'condition does not type-check' });
  // `dyn` is accepted: a property read is dyn until evaluation, and a non-boolean then is an error.
  if (checked.type !== 'bool' && checked.type !== 'dyn') {
    throw new ConditionCompileError(`condition must evaluate to bool, not ${checked.type}`, `condition must evaluate to bool, not ${checked.type}`, null);
  }
  const [problem] = patternProblems(run.ast);
  if (problem) throw new ConditionCompileError(problem.message, problem.message, problem.range);
  instrument(run.ast);
  return { expression, ast: run.ast, run };
}

/**
 * Evaluates a compiled condition against one resource. Never throws: a missing property, a type
 * mismatch or a non-boolean result is returned as `{error}` (the engine records an evaluation error,
 * not a violation), and so is an evaluation that runs past `budgetMs` (`{error, budget: true}`).
 */
export function evaluateCondition(compiled: CompiledCondition, resource: ConditionResource, budgetMs = Infinity): ConditionResult {
  let value: unknown;
  let failure: unknown = null;
  beginBudget(budgetMs);
  try {
    value = compiled.run({ resource });
  } catch (err) {
    failure = err;
  }
  if (endBudget()) return { error: budgetMessage(budgetMs), budget: true };
  if (failure !== null) return { error: evaluationMessage(failure) };
  if (value === true) return VIOLATED;
  if (value === false) return COMPLIANT;
  return { error: `condition returned ${describe(value)}, not a bool` };
}

// Shared results keep the hot path allocation-free for the common outcomes.
const VIOLATED: ConditionResult = Object.freeze({ violated: true });
const COMPLIANT: ConditionResult = Object.freeze({ violated: false });

export function budgetMessage(budgetMs: number): string {
  return `exceeded the evaluation budget of ${budgetMs} ms`;
}

function evaluationMessage(err: unknown): string {
  if (err && typeof err === 'object' && 'summary' in err && typeof err.summary === 'string') {
    const range = (err as LibraryError).range;
    return range ? `${err.summary} (at ${range.start})` : err.summary;
  }
  return err instanceof Error ? err.message : String(err);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'bigint') return 'an int';
  if (typeof value === 'number') return 'a double';
  return typeof value === 'object' ? 'a map' : `a ${typeof value}`;
}
