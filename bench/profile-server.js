// Not a bench: loads the console bench's estate (BENCH_NODES nodes, audited) into a scratch database,
// then keeps the service running and prints its address and a token, so the console's requests can
// be profiled by hand (curl, EXPLAIN). Ctrl-C drops the database. `node bench/profile-server.js`.
import { postGraph, scratchDatabase, serviceEnv, signIn, startServer } from './lib.js';
import { estate } from './graph-data.js';
import { auditRun } from './incremental-audit.js';

const count = Number(process.env.BENCH_NODES ?? 100_000);
const kind = process.env.BENCH_KINDS ?? 'postgres';
const { nodes, edges } = estate(count, Math.round(count * 1.5));
const database = await scratchDatabase(kind);
const server = await startServer(serviceEnv(database.url, { CONTROLGRAPH_WORKER_POLL_MS: '100', CONTROLGRAPH_BODY_LIMIT_BYTES: String(64 * 1024 * 1024) }));
const stop = async () => {
  await server.stop();
  await database.drop();
  process.exit(0);
};
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
const login = await signIn(server.base);
const t = `/api/v1/tenants/${login.tenant_id}`;
await postGraph(server.base, login.token, t, { nodes, edges });
const audit = await auditRun(server.base, login.token, t);
console.log(JSON.stringify({ base: server.base, tenant: t, token: login.token, database: database.url, findings: audit.stats.findings_created }));
