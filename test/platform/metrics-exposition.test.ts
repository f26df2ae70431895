import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';

let t: TestApp;
beforeAll(async () => {
  // As `serve` runs: prom-client's process and Node.js metrics are collected too.
  t = await createTestApp({ defaultMetrics: true });
});
afterAll(() => t.close());

/**
 * The naming rules of the Prometheus exposition format that `promtool check metrics` enforces and
 * that a metric can break by its type: every family has HELP and TYPE, a counter's name ends in
 * `_total` and nothing else's does, and only histograms and summaries have `_bucket`, `_sum` or
 * `_count` series.
 */
function expositionProblems(text: string): string[] {
  const problems: string[] = [];
  const types = new Map<string, string>();
  const helps = new Set<string>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) types.set(type[1]!, type[2]!);
    const help = /^# HELP (\S+) /.exec(line);
    if (help) helps.add(help[1]!);
  }
  for (const [name, type] of types) {
    if (!helps.has(name)) problems.push(`${name}: no HELP`);
    if (type === 'counter' && !name.endsWith('_total')) problems.push(`${name}: a counter's name must end in _total`);
    if (type !== 'counter' && name.endsWith('_total')) problems.push(`${name}: a ${type} must not end in _total`);
    if (!['histogram', 'summary'].includes(type) && /_(bucket|sum|count)$/.test(name)) problems.push(`${name}: a ${type} must not end in _bucket, _sum or _count`);
  }
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const series = /^([a-zA-Z_:][a-zA-Z0-9_:]*)/.exec(line)?.[1] ?? line;
    const family = types.has(series) ? series : series.replace(/_(bucket|sum|count|created)$/, '');
    if (!types.has(family)) problems.push(`${series}: a sample without TYPE`);
  }
  return problems;
}

const hasPromtool = spawnSync('promtool', ['--version']).status === 0;

describe('/metrics exposition', () => {
  it('names every family by its type (no *_total gauge among the default process metrics)', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toMatch(/^# TYPE controlgraph_process_cpu_seconds_total counter$/m);
    expect(res.body).toMatch(/^# TYPE controlgraph_nodejs_active_handles gauge$/m);
    expect(expositionProblems(res.body)).toEqual([]);
  });

  // promtool comes with Debian's `prometheus` package; where it is installed it has the last word.
  it.skipIf(!hasPromtool)('passes promtool check metrics', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/metrics' });
    const run = spawnSync('promtool', ['check', 'metrics'], { input: res.body, encoding: 'utf8' });
    expect(`${run.stdout}${run.stderr}`.trim()).toBe('');
    expect(run.status).toBe(0);
  });
});
