// GET /api/v1/auth/me with a JWT and with an API key, against GET /healthz in the same run: the cost of
// authentication as a share of throughput (target: auth/me keeps >= 70% of /healthz's rate).
import { api, load, printTable, scratchDatabase, serviceEnv, signIn, startServer } from './lib.js';

export async function benchAuth({ kinds, duration }) {
  const rows = [];
  for (const kind of kinds) {
    const database = await scratchDatabase(kind);
    const server = await startServer(serviceEnv(database.url));
    try {
      const login = await signIn(server.base);
      const { key } = await api(server.base, login.token, 'POST', `/api/v1/tenants/${login.tenant_id}/api-keys`, { name: 'bench', permissions: ['nodes:read'] });
      await load({ url: `${server.base}/api/v1/auth/me`, headers: { authorization: `Bearer ${login.token}` }, duration: 2 });
      const health = await load({ url: `${server.base}/healthz`, duration });
      const jwt = await load({ url: `${server.base}/api/v1/auth/me`, headers: { authorization: `Bearer ${login.token}` }, duration });
      const apiKey = await load({ url: `${server.base}/api/v1/auth/me`, headers: { authorization: `Bearer ${key}` }, duration });
      rows.push({ database: kind, route: 'GET /healthz', ...health, ratio_to_healthz: 1 });
      rows.push({ database: kind, route: 'GET /auth/me (JWT)', ...jwt, ratio_to_healthz: +(jwt.rps / health.rps).toFixed(2) });
      rows.push({ database: kind, route: 'GET /auth/me (API key)', ...apiKey, ratio_to_healthz: +(apiKey.rps / health.rps).toFixed(2) });
    } finally {
      await server.stop();
      await database.drop();
    }
  }
  printTable('Authentication cost (autocannon, 10 connections)', rows);
  return rows;
}
