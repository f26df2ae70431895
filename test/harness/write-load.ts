import { fixtureNode, fixtures, nodeIdOf } from './compliance.js';
import { until } from './remote.js';

/**
 * The load the database fault tests keep up through a fault: batches of 20 violating nodes written
 * one after another, and an audit asked for every 10 batches, until stopped. Failed requests
 * (refused connections count as status 0) are counted, never thrown: the test decides which
 * answers were acceptable while the fault lasted.
 */
export interface WriteLoad {
  /** Ids of the nodes the service acknowledged (2xx) writing. */
  acknowledged: string[];
  /** Job ids of the audits the service acknowledged. */
  audits: Set<string>;
  /** How often each status answered a node write. */
  writeStatuses: Map<number, number>;
  /** How often each status answered an audit request. */
  auditStatuses: Map<number, number>;
  stop(): Promise<void>;
}

export function startWriteLoad(base: string, session: { token: string; tenant_id: string }, prefix: string): WriteLoad {
  const tenant = `${base}/api/v1/tenants/${session.tenant_id}`;
  const headers = { authorization: `Bearer ${session.token}`, 'content-type': 'application/json' };
  const ruleIds = [...fixtures.keys()];
  const load: WriteLoad = { acknowledged: [], audits: new Set(), writeStatuses: new Map(), auditStatuses: new Map(), stop: async () => undefined };
  const count = (statuses: Map<number, number>, status: number) => statuses.set(status, (statuses.get(status) ?? 0) + 1);
  let running = true;
  const loop = (async () => {
    for (let batch = 0; running;) {
      const nodes = Array.from({ length: 20 }, (_, i) => fixtureNode(ruleIds[(batch + i) % ruleIds.length]!, 'violating', `${prefix}-${batch}-${i}`));
      batch++;
      const res = await fetch(`${tenant}/nodes`, { method: 'POST', headers, body: JSON.stringify({ nodes }) }).catch(() => null);
      count(load.writeStatuses, res?.status ?? 0);
      if (res?.ok) load.acknowledged.push(...nodes.map(nodeIdOf));
      await res?.text();
      if (batch % 10 === 0) {
        const run = await fetch(`${tenant}/findings/run`, { method: 'POST', headers, body: '{}' }).catch(() => null);
        count(load.auditStatuses, run?.status ?? 0);
        const body = (await run?.json().catch(() => null)) as { job_id?: string } | null;
        if (run?.ok && body?.job_id) load.audits.add(body.job_id);
      }
    }
  })();
  load.stop = async () => {
    running = false;
    await loop;
  };
  return load;
}

/** Waits until no audit is queued or running: what the load asked for, and any follow-up run, has finished. */
export async function untilAuditsDrain(db: { query(text: string): Promise<{ rows: any[] }> }, timeoutMs: number, pollMs: number): Promise<void> {
  await until(
    'the audit queue to drain',
    async () => {
      const { rows } = await db.query("SELECT count(*)::int AS n FROM jobs WHERE kind LIKE 'compliance%' AND status IN ('queued', 'running')");
      return rows[0].n === 0 ? true : undefined;
    },
    timeoutMs,
    pollMs,
  );
}
