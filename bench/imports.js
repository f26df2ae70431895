// Issue 27 item 6, scanner imports at scale: on each database, a Prowler JSON-OCSF file of
// BENCH_IMPORT_RECORDS findings (100,000 by default) and an AWS Config snapshot of as many items,
// each applied by the import pipeline the `discovery.import` job runs (parser streaming the file from
// disk, batches written with their findings, nodes and events), then the same file again (a re-import
// that changes nothing). Reported: records per second and the process's peak RSS after each step.
// The inputs are the repository's real samples (test/fixtures/imports) cloned under new resource and
// finding ids. HTTP upload and the artifact store are left out: they copy the file, the pipeline is
// the work. `npm run build` first; `npm run bench -- imports`.
import { execFileSync } from 'node:child_process';
import { createReadStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDatabase } from '../dist/platform/db/database.js';
import { migrate } from '../dist/platform/db/migrator.js';
import { systemClock } from '../dist/platform/clock.js';
import { applyImport } from '../dist/modules/discovery/imports/apply-import.js';
import { parserFor } from '../dist/modules/discovery/imports/parsers.js';
import { provideCveRiskFacts, provideResourceCriticality } from '../dist/modules/compliance/index.js';
import { cveRiskFacts } from '../dist/modules/vulndb/index.js';
import { resourceCriticality } from '../dist/modules/applications/index.js';
import { bareWorkspace } from './bare-rows.js';
import { printTable, root, scratchDatabase } from './lib.js';

const FIXTURES = join(root, 'test', 'fixtures', 'imports');
const RECORDS = Number(process.env.BENCH_IMPORT_RECORDS ?? 100_000);

/** Prowler's five v5 AWS findings, each cloned onto RECORDS / 5 resources, written as one JSON array. */
function prowlerFile(dir) {
  const samples = JSON.parse(readFileSync(join(FIXTURES, 'prowler5-example_output_aws.ocsf.json'), 'utf8'));
  const path = join(dir, `prowler-${RECORDS}.ocsf.json`);
  const parts = [];
  for (let i = 0; i < RECORDS; i++) {
    const record = structuredClone(samples[i % samples.length]);
    const n = Math.floor(i / samples.length);
    record.finding_info.uid = `${record.finding_info.uid}-${n}`;
    for (const r of record.resources ?? []) r.uid = `${r.uid}-${n}`;
    parts.push(JSON.stringify(record));
  }
  writeFileSync(path, `[${parts.join(',\n')}]`);
  return path;
}

/** The RDK's real configuration items, cloned under new resource ids into one snapshot. */
function configSnapshot(dir) {
  const names = ['AWS_EC2_SecurityGroup', 'AWS_S3_Bucket', 'AWS_EC2_Instance', 'AWS_IAM_User', 'AWS_RDS_DBInstance'];
  const items = names.map((n) => JSON.parse(readFileSync(join(FIXTURES, 'aws-config', `rdk-example_ci-${n}.json`), 'utf8')));
  const path = join(dir, `config-${RECORDS}.json`);
  const parts = [];
  for (let i = 0; i < RECORDS; i++) {
    const item = structuredClone(items[i % items.length]);
    const id = `${item.resourceId}-${Math.floor(i / items.length)}`;
    if (item.arn) item.arn = item.arn.replace(item.resourceId, id);
    item.resourceId = id;
    item.relationships = [];
    parts.push(JSON.stringify(item));
  }
  writeFileSync(path, `{"fileVersion":"1.0","configSnapshotId":"bench","configurationItems":[${parts.join(',\n')}]}`);
  return path;
}

const peakMb = () => Math.round(process.resourceUsage().maxRSS / 1024);

async function timedImport(db, scope, format, path) {
  const started = performance.now();
  const result = await applyImport(db, systemClock, scope, parserFor(format).parse(createReadStream(path)), async () => undefined);
  const seconds = (performance.now() - started) / 1000;
  return { seconds, result };
}

export async function benchImports({ kinds }) {
  // What the composition root (modules/index.ts) hands the compliance module: findings are scored with it.
  provideResourceCriticality(resourceCriticality);
  provideCveRiskFacts(cveRiskFacts);
  const rows = [];
  const dir = mkdtempSync(join(tmpdir(), 'cg-bench-imports-'));
  try {
    // Written by a child process, so the peak RSS below is the imports', not the generator's.
    const files = JSON.parse(execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--generate', dir], { encoding: 'utf8', maxBuffer: 1 << 20 }));
    for (const kind of kinds) {
      for (const [format, path] of Object.entries(files)) {
        const database = await scratchDatabase(kind);
        const handle = await openDatabase(database.url);
        try {
          await migrate(handle.db);
          const { tenant, ws } = await bareWorkspace(handle.pool);
          const scope = { tenantId: tenant, workspaceId: ws };
          const first = await timedImport(handle.db, scope, format, path);
          const firstPeak = peakMb();
          const again = await timedImport(handle.db, scope, format, path);
          const changed = again.result.findings_created + again.result.findings_updated + again.result.findings_resolved + again.result.findings_reopened;
          rows.push({
            database: kind,
            format,
            records: first.result.records,
            'first s': first.seconds.toFixed(1),
            'records/s': Math.round(first.result.records / first.seconds),
            findings: first.result.findings_created,
            nodes: first.result.nodes,
            errors: first.result.errors_count,
            're-import s': again.seconds.toFixed(1),
            're-import changes': changed,
            'peak RSS MB': Math.max(firstPeak, peakMb()),
          });
          console.error(`imports: ${kind} ${format} done`);
        } finally {
          await handle.close();
          await database.drop();
        }
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  printTable('Scanner imports (issue 27 item 6)', rows);
  return rows;
}

if (process.argv[2] === '--generate') {
  process.stdout.write(JSON.stringify({ 'prowler-ocsf': prowlerFile(process.argv[3]), 'aws-config': configSnapshot(process.argv[3]) }));
} else if (import.meta.url === `file://${process.argv[1]}`) {
  await benchImports({ kinds: (await import('./http.js')).defaultKinds() });
}
