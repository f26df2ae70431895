// Issue 6 benchmarks: draw.io and PNG topology exports of 500, 2,000 and 10,000 nodes
// (BENCH_EXPORT_SIZES=500,2000,10000 to change).
// 1. The renderer alone: layout and file, in a worker thread as the service runs it, each export in a
//    process of its own so that its peak memory (max RSS) is the export's: time, file size, peak RSS.
// 2. Through the service, on each database: the graph loaded through the API, POST /exports, polled
//    until succeeded, downloaded: time to the finished file, size; /healthz latency while the largest
//    PNG renders (the API's event loop must stay free); the service process's peak RSS.
import { execFile } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { api, postGraph, printTable, scratchDatabase, serviceEnv, signIn, startServer } from './lib.js';

const SELF = fileURLToPath(import.meta.url);
const run = promisify(execFile);

function prng(seed) {
  let s = seed >>> 0;
  return () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32;
}

const WORKLOAD = ['aws.ec2.instance', 'aws.rds.db_instance', 'aws.lambda.function', 'aws.elasticloadbalancingv2.load_balancer', 'aws.ec2.network_interface'];
const GLOBAL = ['aws.s3.bucket', 'aws.iam.role', 'aws.sqs.queue', 'aws.kms.key'];
const SEVERITIES = ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'INFO'];

/**
 * A synthetic AWS estate of exactly `count` nodes shaped like AWS Config items (the shape of the
 * export tests' estate): per account and region a VPC with three subnets, 45 workloads in them,
 * four security groups, six regional or global services; edges between nearby workloads.
 */
export function exportEstate(count, seed = 11) {
  const random = prng(seed);
  const nodes = [];
  const edges = [];
  const workloads = [];
  const add = (type, nativeId, region, account, configuration = {}, name = nativeId) => {
    nodes.push({
      provider: 'aws',
      region,
      type,
      native_id: nativeId,
      name,
      account_id: account,
      properties: { configuration, supplementaryConfiguration: {}, relationships: [] },
      tags: {},
    });
    return `aws:${region}:${type}:${nativeId}`;
  };
  for (let block = 0; nodes.length < count; block++) {
    const account = ['111111111111', '222222222222'][block % 2];
    const region = ['us-east-1', 'eu-west-1', 'ap-south-1'][Math.floor(block / 2) % 3];
    const vpc = `vpc-${block}`;
    add('aws.ec2.vpc', vpc, region, account, { vpcId: vpc }, `vpc-${region}-${block}`);
    const subnets = [0, 1, 2].map((s) => `subnet-${block}-${s}`);
    for (const [s, subnet] of subnets.entries())
      if (nodes.length < count) add('aws.ec2.subnet', subnet, region, account, { subnetId: subnet, vpcId: vpc }, s === 0 ? `public-${block}` : `private-${block}-${s}`);
    for (let k = 0; k < 45 && nodes.length < count; k++) {
      const type = WORKLOAD[Math.floor(random() * WORKLOAD.length)];
      const short = type.split('.')[2];
      workloads.push(
        add(type, `${short}-${block}-${k}`, region, account, { vpcId: vpc, subnetId: subnets[Math.floor(random() * 3)] }, `${short.replace(/_/g, '-')}-${block}-${k}`),
      );
    }
    for (let k = 0; k < 4 && nodes.length < count; k++) add('aws.ec2.security_group', `sg-${block}-${k}`, region, account, { groupId: `sg-${block}-${k}`, vpcId: vpc });
    for (let k = 0; k < 6 && nodes.length < count; k++) {
      const type = GLOBAL[Math.floor(random() * GLOBAL.length)];
      add(type, `${type.split('.')[2]}-${block}-${k}`, type === 'aws.iam.role' ? 'global' : region, account);
    }
  }
  const seen = new Set();
  for (let i = 0; i < workloads.length * 0.7; i++) {
    const a = Math.floor(random() * workloads.length);
    const b = Math.min(workloads.length - 1, a + 1 + Math.floor(random() * 6));
    const type = random() < 0.5 ? 'connects_to' : 'routes_to';
    const key = `${a}|${b}|${type}`;
    if (a === b || seen.has(key)) continue;
    seen.add(key);
    edges.push({ source: workloads[a], target: workloads[b], type });
  }
  return { nodes: nodes.slice(0, count), edges };
}

/** The estate as the renderer takes it (what the service reads from the database), with some findings. */
function renderGraph(count) {
  const random = prng(7);
  const { nodes, edges } = exportEstate(count);
  return {
    nodes: nodes.map((n) => {
      const flagged = random() < 0.3;
      return {
        id: `aws:${n.region}:${n.type}:${n.native_id}`,
        name: n.name,
        type: n.type,
        provider: n.provider,
        region: n.region,
        account: n.account_id,
        nativeId: n.native_id,
        vpc: n.type === 'aws.ec2.vpc' ? null : (n.properties.configuration.vpcId ?? null),
        subnet: n.type === 'aws.ec2.subnet' || n.type === 'aws.ec2.vpc' ? null : (n.properties.configuration.subnetId ?? null),
        severity: flagged ? SEVERITIES[Math.floor(random() * 5)] : null,
        findings: flagged ? 1 + Math.floor(random() * 5) : 0,
      };
    }),
    edges,
  };
}

/** Child mode: one export in this process; prints {ms, bytes, peak_rss_mb, stats}. */
async function renderChild(format, count) {
  const { renderInWorker } = await import('../dist/modules/exports/render/runner.js');
  const graph = renderGraph(count);
  const t0 = performance.now();
  const job = renderInWorker(graph, format, { generatedAt: new Date().toISOString() });
  // BENCH_EXPORT_OUT=<dir> keeps the files, to look at them.
  const keep = process.env.BENCH_EXPORT_OUT ? createWriteStream(join(process.env.BENCH_EXPORT_OUT, `export-${count}.${format}`)) : null;
  let bytes = 0;
  for await (const chunk of job.stream) {
    bytes += chunk.length;
    keep?.write(chunk);
  }
  keep?.end();
  const stats = await job.done;
  const ms = performance.now() - t0;
  // maxRSS covers the worker thread too: it is this process's peak.
  console.log(JSON.stringify({ ms: Math.round(ms), bytes, peak_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024), stats }));
}

/** Peak resident memory of a process (Linux), in MiB; null elsewhere. */
function peakRssMb(pid) {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Math.round(Number(match[1]) / 1024) : null;
  } catch {
    return null;
  }
}

/** Polls /healthz until `stop()` is called; returns the latencies seen (ms). */
function probeHealth(base) {
  const latencies = [];
  let active = true;
  const loop = (async () => {
    while (active) {
      const t = performance.now();
      await fetch(`${base}/healthz`).then((r) => r.arrayBuffer());
      latencies.push(performance.now() - t);
      await new Promise((r) => setTimeout(r, 25));
    }
  })();
  return async () => {
    active = false;
    await loop;
    latencies.sort((a, b) => a - b);
    return {
      samples: latencies.length,
      p50: latencies[Math.floor(latencies.length / 2)] ?? 0,
      p99: latencies[Math.floor(latencies.length * 0.99)] ?? 0,
      max: latencies[latencies.length - 1] ?? 0,
    };
  };
}

async function serviceRuns(kind, sizes, rows) {
  const database = await scratchDatabase(kind);
  const server = await startServer(
    serviceEnv(database.url, { CONTROLGRAPH_WORKER_POLL_MS: '100', CONTROLGRAPH_VULNDB_SEED: 'off', CONTROLGRAPH_BODY_LIMIT_BYTES: String(64 * 1024 * 1024) }),
  );
  try {
    const login = await signIn(server.base);
    for (const size of sizes) {
      // A workspace per size, so each export sees exactly `size` nodes.
      const ws = await api(server.base, login.token, 'POST', '/api/v1/workspaces', { name: `bench-${size}-${Date.now()}` });
      const session = await api(server.base, login.token, 'POST', '/api/v1/auth/switch-workspace', { workspace_id: ws.id });
      const t = `/api/v1/tenants/${login.tenant_id}`;
      const { nodes, edges } = exportEstate(size);
      await postGraph(server.base, session.token, t, { nodes, edges });
      for (const [kindName, body] of [
        ['drawio', { kind: 'drawio' }],
        ['png', { kind: 'architecture_diagram', params: { format: 'png' } }],
      ]) {
        const probe = size === sizes[sizes.length - 1] && kindName === 'png' ? probeHealth(server.base) : null;
        const t0 = performance.now();
        const job = await api(server.base, session.token, 'POST', `${t}/exports`, body);
        let status;
        for (;;) {
          status = await api(server.base, session.token, 'GET', job.status_url);
          if (status.status === 'succeeded' || status.status === 'failed') break;
          await new Promise((r) => setTimeout(r, 100));
        }
        const ms = performance.now() - t0;
        const health = probe ? await probe() : null;
        if (status.status !== 'succeeded') throw new Error(`export failed: ${status.error}`);
        const file = await fetch(`${server.base}${job.status_url}/download`, { headers: { authorization: `Bearer ${session.token}` } });
        const bytes = (await file.arrayBuffer()).byteLength;
        rows.push({
          where: `service (${kind})`,
          export: `${kindName} ${size} nodes`,
          seconds: +(ms / 1000).toFixed(2),
          size_kb: Math.round(bytes / 1024),
          peak_rss_mb: null,
          note: health
            ? `/healthz meanwhile: ${health.samples} probes, p50 ${health.p50.toFixed(1)} ms, p99 ${health.p99.toFixed(1)} ms, max ${health.max.toFixed(1)} ms`
            : 'POST /exports to succeeded (includes queue poll)',
        });
      }
      if (size <= 500) {
        const t0 = performance.now();
        const res = await fetch(`${server.base}${t}/topology/export/drawio`, { headers: { authorization: `Bearer ${session.token}` } });
        const bytes = (await res.arrayBuffer()).byteLength;
        rows.push({
          where: `service (${kind})`,
          export: `GET /topology/export/drawio ${size} nodes`,
          seconds: +((performance.now() - t0) / 1000).toFixed(2),
          size_kb: Math.round(bytes / 1024),
          peak_rss_mb: null,
          note: `synchronous (HTTP ${res.status})`,
        });
      }
    }
    rows.push({
      where: `service (${kind})`,
      export: 'whole run',
      seconds: null,
      size_kb: null,
      peak_rss_mb: peakRssMb(server.pid),
      note: 'peak RSS of the service process (API, worker and render threads)',
    });
  } finally {
    await server.stop();
    await database.drop();
  }
}

export async function benchExports({ kinds }) {
  const sizes = (process.env.BENCH_EXPORT_SIZES ?? '500,2000,10000')
    .split(',')
    .map(Number)
    .filter((n) => n > 0);
  const rows = [];
  for (const size of sizes) {
    for (const format of ['drawio', 'png']) {
      const { stdout } = await run(process.execPath, [SELF, '--render', format, String(size)], { maxBuffer: 1024 * 1024 });
      const r = JSON.parse(stdout.trim().split('\n').pop());
      rows.push({
        where: 'renderer',
        export: `${format} ${size} nodes`,
        seconds: +(r.ms / 1000).toFixed(2),
        size_kb: Math.round(r.bytes / 1024),
        peak_rss_mb: r.peak_rss_mb,
        note: `layout ${r.stats.layout_ms} ms (${r.stats.elk_containers} containers by elkjs, ${r.stats.grid_containers} as grids); ${r.stats.width}x${r.stats.height} px${format === 'png' ? ` at scale ${r.stats.scale}` : ''}`,
      });
    }
  }
  for (const kind of kinds) await serviceRuns(kind, sizes, rows);
  printTable('Topology exports (draw.io and PNG)', rows);
  return rows;
}

if (process.argv[1] === SELF && process.argv[2] === '--render') await renderChild(process.argv[3], Number(process.argv[4]));
