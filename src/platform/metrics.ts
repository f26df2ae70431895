import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

const SUM_GAUGES_NAMED_LIKE_COUNTERS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

/** One registry per app instance (tests build many apps in one process). */
export interface Metrics {
  registry: Registry;
  httpDuration: Histogram<'method' | 'route' | 'status_code'>;
  jobOutcomes: Counter<'kind' | 'outcome'>;
  queueDepth: Gauge<'status'>;
  readCache: Counter<'outcome'>;
}

export function createMetrics(options: { defaultMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (options.defaultMetrics) {
    collectDefaultMetrics({ register: registry, prefix: 'controlgraph_' });
    // prom-client exports three gauges named *_total (the sums of nodejs_active_handles, _requests
    // and _resources over their `type` label): a `_total` suffix means a counter in the exposition
    // format, so Prometheus tooling refuses them (promtool check metrics). The labelled gauges stay.
    for (const name of SUM_GAUGES_NAMED_LIKE_COUNTERS) registry.removeSingleMetric(`controlgraph_${name}`);
  }
  return {
    registry,
    httpDuration: new Histogram({
      name: 'controlgraph_http_request_duration_seconds',
      help: 'HTTP request latency by route',
      labelNames: ['method', 'route', 'status_code'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    jobOutcomes: new Counter({
      name: 'controlgraph_job_outcomes_total',
      help: 'Finished job attempts by kind and outcome',
      labelNames: ['kind', 'outcome'],
      registers: [registry],
    }),
    queueDepth: new Gauge({
      name: 'controlgraph_queue_depth',
      help: 'Jobs queued or running',
      labelNames: ['status'],
      registers: [registry],
    }),
    readCache: new Counter({
      name: 'controlgraph_read_cache_requests_total',
      help: 'Dashboard requests answered from the read cache (hit) or computed (miss)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
  };
}
