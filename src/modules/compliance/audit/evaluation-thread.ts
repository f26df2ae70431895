import { parentPort, workerData } from 'node:worker_threads';
import { compileRuleSet, evaluateBudgeted, type BudgetRule, type BudgetSettings, type CompiledRuleSet, type RuleRunState, type UnknownOutcome } from './budgeted-batch.js';
import type { AuditNode } from './evaluate.js';

/**
 * Worker-thread entry: evaluates an audit's batches off the service's event loop (rule-evaluator.ts
 * is the other side). One request at a time: `rules` (compile the run's rules), then `batch`es.
 * Before each evaluation it writes which one and when into the shared progress buffer, so the caller
 * can end an evaluation that does not return (watchdog).
 */

export type ThreadRequest = { type: 'rules'; rules: BudgetRule[]; settings: BudgetSettings } | { type: 'batch'; nodes: AuditNode[]; state: RuleRunState[]; skip: number[] };

export type ThreadReply =
  | { type: 'ready' }
  | { type: 'result'; violations: Int32Array; passes: Int32Array; unknowns: UnknownOutcome[]; reports: ReturnType<typeof evaluateBudgeted>['reports']; state: RuleRunState[] }
  | { type: 'error'; message: string };

const port = parentPort!;
// The shared progress buffer (evaluation-threads.ts): start time (epoch ms, 0 between evaluations), node, rule.
const shared = (workerData as { progress: SharedArrayBuffer }).progress;
const startedAt = new Float64Array(shared, 0, 1);
const position = new Int32Array(shared, 8, 2);
const progress = {
  begin(node: number, rule: number) {
    position[0] = node;
    position[1] = rule;
    startedAt[0] = performance.timeOrigin + performance.now();
  },
  end() {
    startedAt[0] = 0;
  },
};

let ruleSet: CompiledRuleSet | null = null;
let settings: BudgetSettings | null = null;

port.on('message', (request: ThreadRequest) => {
  try {
    if (request.type === 'rules') {
      ruleSet = compileRuleSet(request.rules);
      settings = request.settings;
      port.postMessage({ type: 'ready' } satisfies ThreadReply);
      return;
    }
    if (!ruleSet || !settings) throw new Error('batch before rules');
    const batch = evaluateBudgeted(ruleSet, request.nodes, request.state, settings, progress, new Set(request.skip));
    port.postMessage({ type: 'result', ...batch, state: request.state } satisfies ThreadReply, [batch.violations.buffer as ArrayBuffer, batch.passes.buffer as ArrayBuffer]);
  } catch (error) {
    port.postMessage({ type: 'error', message: error instanceof Error ? error.message : String(error) } satisfies ThreadReply);
  }
});
