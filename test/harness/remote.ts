/**
 * Talking to service processes over real HTTP (process-level tests): JSON calls, polling, and a small
 * Server-Sent-Events reader.
 */
export async function api(base: string, token: string | null, method: string, path: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}

/** Polls `probe` until it returns a value. */
export async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export interface SseClient {
  /** Parsed `data:` payloads with their `id:`, in arrival order. */
  messages: Array<{ id: string | undefined; data: any }>;
  close(): void;
}

/** Opens an SSE stream; resolves once the response headers arrived (the subscription is live). */
export async function openSse(url: string, token: string): Promise<SseClient> {
  const controller = new AbortController();
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' }, signal: controller.signal });
  if (res.status !== 200 || !res.body) throw new Error(`SSE ${url}: ${res.status} ${await res.text()}`);
  const client: SseClient = { messages: [], close: () => controller.abort() };
  const decoder = new TextDecoder();
  let buffer = '';
  void (async () => {
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const id = /^id: ?(.*)$/m.exec(frame)?.[1];
          const data = /^data: ?(.*)$/m.exec(frame)?.[1];
          if (data !== undefined) client.messages.push({ id, data: JSON.parse(data) });
        }
      }
    } catch {
      // aborted by close()
    }
  })();
  return client;
}
