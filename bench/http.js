// GET /healthz and a trivial unauthenticated JSON route, served by the real service process.
import { load, pgUrl, printTable, scratchDatabase, startServer } from './lib.js';

export async function benchHttp({ kinds, duration }) {
  const rows = [];
  for (const kind of kinds) {
    const database = await scratchDatabase(kind);
    const server = await startServer({ DATABASE_URL: database.url });
    try {
      // Warm-up so JIT and pools are settled before measuring.
      await load({ url: `${server.base}/healthz`, duration: 2 });
      for (const path of ['/healthz', '/api/v1/version']) {
        const r = await load({ url: `${server.base}${path}`, duration });
        rows.push({ database: kind, route: `GET ${path}`, ...r });
      }
    } finally {
      await server.stop();
      await database.drop();
    }
  }
  printTable('HTTP (autocannon, 10 connections)', rows);
  return rows;
}

// BENCH_KINDS=postgres (or pglite) runs one database only.
export const defaultKinds = () => {
  const all = pgUrl() ? ['pglite', 'postgres'] : ['pglite'];
  const wanted = process.env.BENCH_KINDS?.split(',')
    .map((k) => k.trim())
    .filter(Boolean);
  return wanted?.length ? all.filter((k) => wanted.includes(k)) : all;
};
