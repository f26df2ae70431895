import type { ASTNode } from '@marcbachmann/cel-js';
import { re2, re2Matches } from './re2-matches.js';

/**
 * What the CEL library (`@marcbachmann/cel-js`) does not offer and rule conditions need: `matches()`
 * in RE2 (the library uses JavaScript's backtracking RegExp and cannot replace a built-in function:
 * registering `string.matches` again is refused as an overlapping overload), and a time budget per
 * evaluation (the library has parse-time limits only; nested comprehensions over a 300-item list ran
 * for 3.9 s).
 *
 * Both are installed on a checked condition's syntax tree through the library's node hook
 * (`setMeta('evaluate', ...)`, what the library itself uses to specialise nodes after checking):
 * - every `x.matches(p)` node evaluates with re2js; a literal pattern RE2 cannot express is reported
 *   at compile time (`patternProblems`);
 * - every comprehension step (one iteration of `all`, `exists`, `exists_one`, `map`, `filter`) and
 *   every `+` checks the deadline of the running evaluation. A comprehension is the only construct
 *   whose time is not linear in the size of the expression and its input, and `+` the only one whose
 *   result can outgrow its operands (`cel.bind(a, l + l, cel.bind(b, a + a, ...))` doubles a list
 *   at each level: 24 levels over a 300-item list ended the process, out of memory, in a second; a
 *   worker thread's heap limit does not prevent that). Everything else, RE2 included, is linear.
 *
 * Once the deadline has passed, every later step throws again, so the evaluation unwinds quickly
 * whatever absorbs errors on the way (`exists` and `||` are true past an error when another operand
 * is true), and the result is discarded (`endBudget()`): an evaluation past its budget is an
 * error, never a verdict. cel.unit.test.ts holds these properties, so a library upgrade that changes
 * the hook fails there.
 */

/** The library's node, with the members the hook uses (not in its public type). */
interface Node {
  op: string;
  args: unknown;
  start: number;
  end: number;
  meta: { evaluate: Evaluate; alternate?: Node };
  setMeta(key: 'evaluate', value: Evaluate): Node;
}
type Evaluate = (this: Node, ev: { run(node: unknown, ctx: unknown): unknown }, ast: Node, ctx: unknown) => unknown;

/** The running evaluation's deadline (performance.now() ms); Infinity outside a budgeted evaluation. */
let deadline = Infinity;
let exceeded = false;

/** Thrown at a step past the deadline; one instance, so unwinding allocates nothing. */
const BUDGET_EXCEEDED = new Error('evaluation budget exceeded');

function spend(): void {
  if (exceeded) throw BUDGET_EXCEEDED;
  if (deadline !== Infinity && performance.now() > deadline) {
    exceeded = true;
    throw BUDGET_EXCEEDED;
  }
}

/** Starts one evaluation under a budget (ms; Infinity for none). */
export function beginBudget(budgetMs: number): void {
  deadline = budgetMs === Infinity ? Infinity : performance.now() + budgetMs;
  exceeded = false;
}

/** Ends it: true when it ran past its deadline (its result, or error, is then meaningless). */
export function endBudget(): boolean {
  deadline = Infinity;
  return exceeded;
}

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && typeof (value as Node).op === 'string' && typeof (value as Node).setMeta === 'function';
}

/** Every node of the tree once, with the comprehensions that macros expanded to. */
function walk(root: ASTNode, visit: (node: Node) => void): void {
  const seen = new Set<Node>();
  const stack: unknown[] = [root];
  while (stack.length) {
    const value = stack.pop();
    if (Array.isArray(value)) {
      stack.push(...(value as unknown[]));
    } else if (isNode(value) && !seen.has(value)) {
      seen.add(value);
      visit(value);
      if (value.meta.alternate) stack.push(value.meta.alternate);
      if (value.op === 'comprehension') {
        // Its args are an object with the parts of the loop (and, after checking, its scope).
        const loop = value.args as Record<string, unknown>;
        stack.push(loop.iterable, loop.init, loop.step);
      } else if (value.op !== 'value' && value.op !== 'id') {
        stack.push(value.args);
      }
    }
  }
}

function isMatchesCall(node: Node): node is Node & { args: [string, Node, Node[]] } {
  return node.op === 'rcall' && Array.isArray(node.args) && node.args[0] === 'matches' && (node.args[2] as Node[]).length === 1;
}

/** Literal `matches()` patterns RE2 cannot express, with where they are. */
export function patternProblems(ast: ASTNode): Array<{ message: string; range: { start: number; end: number } }> {
  const problems: Array<{ message: string; range: { start: number; end: number } }> = [];
  walk(ast, (node) => {
    if (!isMatchesCall(node)) return;
    const pattern = node.args[2][0]!;
    if (pattern.op !== 'value' || typeof pattern.args !== 'string') return;
    try {
      re2(pattern.args);
    } catch (error) {
      problems.push({ message: (error as Error).message, range: { start: pattern.start, end: pattern.end } });
    }
  });
  return problems;
}

/** The node checks the deadline each time before it is evaluated. */
function checked(node: Node): void {
  const original = node.meta.evaluate;
  node.setMeta('evaluate', function (ev, self, ctx) {
    spend();
    return original.call(this, ev, self, ctx);
  });
}

/** Installs RE2 `matches()` and the deadline checks on a checked tree. */
export function instrument(ast: ASTNode): void {
  walk(ast, (node) => {
    if (isMatchesCall(node)) {
      const original = node.meta.evaluate;
      node.setMeta('evaluate', function (ev, self, ctx) {
        spend();
        const [, receiver, [pattern]] = self.args as [string, Node, Node[]];
        const text = ev.run(receiver, ctx);
        const expression = ev.run(pattern, ctx);
        // Anything but two strings: the library's own overload resolution and its error message.
        if (typeof text !== 'string' || typeof expression !== 'string') return original.call(this, ev, self, ctx);
        return re2Matches(text, expression);
      });
    }
    if (node.op === 'comprehension') checked((node.args as { step: Node }).step);
    if (node.op === '+') checked(node);
  });
}
