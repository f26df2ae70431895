/**
 * An audit on PGlite shares the service's only database connection, run on the service's own thread,
 * with every API request: a request waits for whatever the audit has queued before it. So on PGlite
 * an audit writes smaller batches, one at a time, and before each read or write lets the requests
 * already waiting for the connection go first (at most MAX_YIELD_MS, so it always progresses).
 * Measured at 20,000 nodes (with PGlite yielding between statements, database.ts): another tenant's
 * GET /nodes during the audit went from p50 150 ms / p99 615 ms to p50 35 ms / p99 104 ms, the audit
 * from 5.2 s to 6.4 s. PostgreSQL has a pool and needs none of it.
 */

export const EMBEDDED_BATCH_SIZE = 250;
export const EMBEDDED_WRITES_IN_FLIGHT = 1;
/**
 * Long enough for the requests waiting at that moment to get the connection (a few ms each), short
 * enough that steady request traffic does not starve the audit: with 250 ms an audit of 20,000 nodes
 * under 40 requests/s took up to 30 s instead of 18 s, for no better latency.
 */
const MAX_YIELD_MS = 25;

/** Waits while other clients wait for the pool's connection. */
export async function othersFirst(pool: { waitingCount: number }): Promise<void> {
  const until = Date.now() + MAX_YIELD_MS;
  while (pool.waitingCount > 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 1));
}
