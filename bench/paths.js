// Issue 12 benchmarks: path tracing and blast radius on the 100,000-node graph of bench/graph-data.js
// (the compliance suite's estate: real AWS Config items, 1.5 edges per node of the traversable types
// connects_to and protects), against the service in its own process, on each database.
// 1. POST /pathtracer/trace between pairs of nodes that are connected (shortest path 3 to 8 hops,
//    found beforehand by a breadth-first search in memory), max_depth 12: p50/p99;
// 2. POST /pathtracer/blast-radius from nodes with outgoing edges, with the default bounds (depth 10,
//    10,000 nodes) and with the widest ones (depth 32, 100,000 nodes: the whole reachable part of the
//    graph, more than half of it): p50/p99, and how much of the graph the answers covered.
// Latencies are of one client (see measure); `truncated` counts answers a time or size bound cut short.
// Run `npm run build` first (npm run bench does). BENCH_NODES changes the graph size.
import { api, postGraph, printTable, scratchDatabase, serviceEnv, signIn, startServer } from './lib.js';
import { estate } from './graph-data.js';

const PAIRS = 200;
const SOURCES = 200;

function prng(seed) {
  let s = seed >>> 0;
  return () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32;
}

/** Out-neighbours of each node index (both edge types of the estate are followed source to target). */
function adjacency(ids, edges) {
  const index = new Map(ids.map((id, i) => [id, i]));
  const out = Array.from({ length: ids.length }, () => []);
  for (const e of edges) out[index.get(e.source)].push(index.get(e.target));
  return out;
}

/** Pairs (source, target) whose shortest path is 3 to 8 hops, the target drawn from those distances. */
function connectedPairs(ids, out, count, random) {
  const pairs = [];
  let attempts = 0;
  while (pairs.length < count && attempts++ < count * 20) {
    const source = Math.floor(random() * ids.length);
    const dist = new Map([[source, 0]]);
    let frontier = [source];
    const candidates = [];
    for (let d = 1; d <= 8 && frontier.length; d++) {
      const next = [];
      for (const n of frontier) {
        for (const m of out[n]) {
          if (dist.has(m)) continue;
          dist.set(m, d);
          next.push(m);
          if (d >= 3) candidates.push(m);
        }
      }
      frontier = next;
    }
    if (candidates.length === 0) continue;
    const target = candidates[Math.floor(random() * candidates.length)];
    pairs.push({ source: ids[source], target: ids[target], hops: dist.get(target) });
  }
  return pairs;
}

/**
 * Latency of one endpoint, one request at a time (a different body each, cycling through `bodies`)
 * for `duration` seconds and at least 10 requests: these are analytical calls of seconds at worst,
 * and one client shows their own latency rather than queueing behind each other.
 */
async function measure(base, token, path, bodies, duration) {
  const latencies = [];
  const outcomes = { truncated: 0, errors: 0 };
  const deadline = performance.now() + duration * 1000;
  while (latencies.length < 10 || performance.now() < deadline) {
    const body = bodies[latencies.length % bodies.length];
    const t0 = performance.now();
    const res = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    });
    const answer = await res.json();
    latencies.push(performance.now() - t0);
    if (!res.ok) outcomes.errors++;
    else if (answer.truncated) outcomes.truncated++;
  }
  latencies.sort((a, b) => a - b);
  const at = (q) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * q))]);
  return { requests: latencies.length, p50_ms: at(0.5), p99_ms: at(0.99), max_ms: at(1), ...outcomes };
}

export async function benchPaths({ kinds, duration, nodes: count = Number(process.env.BENCH_NODES ?? 100_000) }) {
  const rows = [];
  const { nodes, ids, edges } = estate(count, Math.round(count * 1.5));
  const out = adjacency(ids, edges);
  const random = prng(7);
  const pairs = connectedPairs(ids, out, PAIRS, random);
  const sources = [];
  while (sources.length < SOURCES) {
    const i = Math.floor(random() * ids.length);
    if (out[i].length) sources.push(ids[i]);
  }
  for (const kind of kinds) {
    const database = await scratchDatabase(kind);
    const server = await startServer(serviceEnv(database.url, { CONTROLGRAPH_BODY_LIMIT_BYTES: String(64 * 1024 * 1024) }));
    try {
      const login = await signIn(server.base);
      const t = `/api/v1/tenants/${login.tenant_id}`;
      await postGraph(server.base, login.token, t, { nodes, edges });
      const graph = `${nodes.length} nodes, ${edges.length} edges`;

      // The service agrees with the in-memory search (not timed).
      for (const p of pairs.slice(0, 5)) {
        const answer = await api(server.base, login.token, 'POST', `${t}/pathtracer/trace`, { source: p.source, target: p.target, max_depth: 12 });
        if (answer.shortest_length !== p.hops) throw new Error(`trace ${p.source} -> ${p.target}: ${answer.shortest_length} hops, expected ${p.hops}`);
      }
      const traceBodies = pairs.map((p) => ({ source: p.source, target: p.target, max_depth: 12 }));
      const trace = await measure(server.base, login.token, `${t}/pathtracer/trace`, traceBodies, duration);
      rows.push({ database: kind, measure: `trace, shortest path 3-8 hops, max_depth 12 (${graph})`, ...trace, note: '' });

      for (const [label, bounds] of [
        ['blast radius, default bounds (depth 10, 10,000 nodes)', {}],
        ['blast radius, widest bounds (depth 32, 100,000 nodes)', { max_depth: 32, max_nodes: 100_000 }],
      ]) {
        const bodies = sources.map((source) => ({ source, limit: 100, ...bounds }));
        const reached = [];
        for (const body of bodies.slice(0, 5)) reached.push((await api(server.base, login.token, 'POST', `${t}/pathtracer/blast-radius`, body)).total_reached);
        reached.sort((a, b) => a - b);
        const blast = await measure(server.base, login.token, `${t}/pathtracer/blast-radius`, bodies, duration);
        rows.push({ database: kind, measure: `${label} (${graph})`, ...blast, note: `median reached ${reached[2]} nodes` });
      }
    } finally {
      await server.stop();
      await database.drop();
    }
  }
  printTable('Path tracing and blast radius', rows);
  return rows;
}
