import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { ThreadReply, ThreadRequest } from './evaluation-thread.js';
import { THREAD_HEAP_MB } from './evaluation-limits.js';

/**
 * The worker threads audits evaluate rules in (evaluation-thread.ts), so a costly rule never holds the
 * event loop that serves the API. An audit takes a thread for its run and gives it back; a few idle
 * threads are kept for a short while, since starting one (loading the CEL library) costs more than
 * a small audit.
 */

/** Compiled, the script sits beside this file; run from source (tests), it is loaded through the transpiling hooks. */
function threadScript(): { url: URL; execArgv: string[] } {
  if (fileURLToPath(import.meta.url).endsWith('.js')) return { url: new URL('./evaluation-thread.js', import.meta.url), execArgv: [] };
  return {
    url: new URL('./evaluation-thread.ts', import.meta.url),
    execArgv: ['--import', new URL('../../exports/render/ts-source-register.mjs', import.meta.url).href],
  };
}

export class ThreadFailure extends Error {
  override name = 'ThreadFailure';
}

export class EvaluationThread {
  private readonly worker: Worker;
  private readonly startedAt: Float64Array;
  private readonly position: Int32Array;
  private pending: { resolve: (reply: ThreadReply) => void; reject: (error: Error) => void } | null = null;
  private failure: ThreadFailure | null = null;

  constructor() {
    const progress = new SharedArrayBuffer(16);
    this.startedAt = new Float64Array(progress, 0, 1);
    this.position = new Int32Array(progress, 8, 2);
    const script = threadScript();
    this.worker = new Worker(script.url, { execArgv: script.execArgv, workerData: { progress }, resourceLimits: { maxOldGenerationSizeMb: THREAD_HEAP_MB } });
    this.worker.on('message', (reply: ThreadReply) => {
      const pending = this.pending;
      this.pending = null;
      pending?.resolve(reply);
    });
    // Out of its heap (ERR_WORKER_OUT_OF_MEMORY) or any other end: the evaluation running, if any, is charged.
    this.worker.on('error', (error) => this.fail(new ThreadFailure(`the evaluation thread failed: ${error.message}`)));
    this.worker.on('exit', (code) => this.fail(new ThreadFailure(`the evaluation thread exited (code ${code})`)));
  }

  get usable(): boolean {
    return this.failure === null;
  }

  private fail(failure: ThreadFailure): void {
    this.failure ??= failure;
    const pending = this.pending;
    this.pending = null;
    pending?.reject(this.failure);
  }

  request(request: ThreadRequest): Promise<ThreadReply> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.pending) return Promise.reject(new Error('an evaluation thread takes one request at a time'));
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      this.worker.postMessage(request);
    });
  }

  /** The evaluation running now (node and rule index in the batch) and for how long, or null between evaluations. */
  running(): { node: number; rule: number; ms: number } | null {
    const started = this.startedAt[0]!;
    if (started === 0) return null;
    return { node: this.position[0]!, rule: this.position[1]!, ms: performance.timeOrigin + performance.now() - started };
  }

  /** Ends the thread, also in the middle of an evaluation. */
  async stop(reason: string): Promise<void> {
    this.fail(new ThreadFailure(reason));
    await this.worker.terminate();
  }

  /** Idle threads do not keep the process alive. */
  hold(held: boolean): void {
    if (held) this.worker.ref();
    else this.worker.unref();
  }
}

const IDLE_MS = 10_000;
const MAX_IDLE = 2;
const idle: Array<{ thread: EvaluationThread; timer: NodeJS.Timeout }> = [];

export function acquireThread(): EvaluationThread {
  for (let entry = idle.pop(); entry; entry = idle.pop()) {
    clearTimeout(entry.timer);
    if (!entry.thread.usable) continue;
    entry.thread.hold(true);
    return entry.thread;
  }
  return new EvaluationThread();
}

/** Gives a thread back after a run; a thread that failed or was stopped is dropped. */
export function releaseThread(thread: EvaluationThread): void {
  if (!thread.usable || idle.length >= MAX_IDLE) {
    void thread.stop('released');
    return;
  }
  thread.hold(false);
  const entry = {
    thread,
    timer: setTimeout(() => {
      idle.splice(idle.indexOf(entry), 1);
      void thread.stop('idle');
    }, IDLE_MS).unref(),
  };
  idle.push(entry);
}
