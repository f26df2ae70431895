import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { RenderGraph } from './model.js';
import type { RenderFormat, RenderStats } from './render.js';

/**
 * The worker script and how to start it. Compiled, it sits beside this file. Run from its TypeScript
 * source (the tests), the worker loads the source too, through a small transpiling loader, so it never
 * runs a stale build.
 */
function workerScript(): { url: URL; execArgv: string[] } {
  const here = fileURLToPath(import.meta.url);
  if (here.endsWith('.js')) return { url: new URL('./render-worker.js', import.meta.url), execArgv: [] };
  return { url: new URL('./render-worker.ts', import.meta.url), execArgv: ['--import', new URL('./ts-source-register.mjs', import.meta.url).href] };
}

export interface RenderRun {
  /** The file, as it is produced. */
  stream: Readable;
  /** Resolves when the worker finished (after the last chunk), rejects on its failure. */
  done: Promise<RenderStats>;
  /** Stops the worker (cancel, lost lease): the stream fails. */
  abort(reason?: string): void;
}

/** Worker heap ceiling: a runaway render fails the export instead of the process. */
const WORKER_HEAP_MB = 4096;

/** Renders a graph in a worker thread, so layout and rasterising never block the event loop. */
export function renderInWorker(graph: RenderGraph, format: RenderFormat, options: { signal?: AbortSignal; generatedAt?: string } = {}): RenderRun {
  const script = workerScript();
  const worker = new Worker(script.url, {
    execArgv: script.execArgv,
    workerData: { graph, format, generatedAt: options.generatedAt },
    resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
  });
  let finished = false;
  let settle!: { resolve: (s: RenderStats) => void; reject: (e: Error) => void };
  const done = new Promise<RenderStats>((resolve, reject) => (settle = { resolve, reject }));
  // The caller may never await `done` when the stream already failed.
  done.catch(() => undefined);
  const stream = new Readable({
    read() {
      worker.postMessage({ type: 'credit', n: 1 });
    },
    destroy(error, callback) {
      if (!finished) void worker.terminate();
      callback(error);
    },
  });
  const fail = (error: Error) => {
    if (finished) return;
    finished = true;
    settle.reject(error);
    stream.destroy(error);
    void worker.terminate();
  };
  worker.on('message', (message: { type: string; data?: Uint8Array; stats?: RenderStats; message?: string }) => {
    if (message.type === 'chunk') stream.push(Buffer.from(message.data!.buffer, message.data!.byteOffset, message.data!.byteLength));
    else if (message.type === 'done') {
      finished = true;
      stream.push(null);
      settle.resolve(message.stats!);
      void worker.terminate();
    } else if (message.type === 'error') fail(new Error(`render failed: ${message.message}`));
  });
  worker.on('error', (error) => fail(error));
  worker.on('exit', (code) => fail(new Error(`render worker exited (${code})`)));
  const abort = (reason = 'render aborted') => fail(new Error(reason));
  options.signal?.addEventListener('abort', () => abort(String(options.signal?.reason ?? 'aborted')), { once: true });
  return { stream, done, abort };
}
