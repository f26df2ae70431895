import { parentPort, workerData } from 'node:worker_threads';
import { renderGraph, type RenderFormat } from './render.js';
import type { RenderGraph } from './model.js';

/**
 * Worker-thread entry: lays out and renders one graph off the caller's event loop. The file goes
 * back in chunks under credit-based flow control: a chunk is sent only against a credit, and the
 * caller grants one each time its reader asks for more, so at most a chunk or two wait in memory.
 */
interface Task {
  graph: RenderGraph;
  format: RenderFormat;
  generatedAt?: string;
}

const port = parentPort!;
let credits = 0;
let waiting: (() => void) | null = null;
port.on('message', (message: { type: string; n?: number }) => {
  if (message.type === 'credit') {
    credits += message.n ?? 1;
    waiting?.();
    waiting = null;
  }
});

async function send(chunk: Buffer): Promise<void> {
  while (credits <= 0) await new Promise<void>((resolve) => (waiting = resolve));
  credits--;
  // A copy the size of the chunk, transferred (not cloned) to the caller.
  const copy = new Uint8Array(chunk.length);
  copy.set(chunk);
  port.postMessage({ type: 'chunk', data: copy }, [copy.buffer]);
}

const task = workerData as Task;
renderGraph(task.graph, task.format, send, { generatedAt: task.generatedAt }).then(
  ({ stats }) => port.postMessage({ type: 'done', stats }),
  (error: unknown) => port.postMessage({ type: 'error', message: error instanceof Error ? error.message : String(error) }),
);
