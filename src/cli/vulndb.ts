import { loadConfig } from '../config.js';
import { openDatabase } from '../platform/db/database.js';
import { migrate } from '../platform/db/migrator.js';
import { systemClock } from '../platform/clock.js';
import { createStderrLogger } from '../platform/logger.js';
import { isSource } from '../modules/vulndb/import/detect.js';
import { importLocation, type ImportResult } from '../modules/vulndb/import/importer.js';
import { runSync } from '../modules/vulndb/sync.js';
import { createVulnService } from '../modules/vulndb/service.js';
import type { VulnSource } from '../modules/vulndb/tables.js';
import { parseOptions } from './args.js';

export const vulndbHelp = `Usage: controlgraph vulndb import <file-or-dir-or-url> [--source kev|epss|nvd|osv] | sync [--source ...] | stats

Imports and syncs the vulnerability store (CISA KEV, FIRST EPSS, NVD, OSV) in DATABASE_URL.

  vulndb import <file-or-dir-or-url> [--source kev|epss|nvd|osv]
      Imports one file, a directory of NVD or OSV files, or an https URL: the KEV catalog (JSON or
      CSV), an EPSS score file (CSV, with or without its #model_version line), NVD CVE API 2.0 JSON
      (a yearly feed or an API page) or OSV JSON (one advisory, an array, a directory). The format is
      detected from the content unless --source is given; gzip is read transparently. KEV and EPSS
      files replace their data, NVD and OSV files are merged. A broken file changes nothing and the
      command says where it broke (exit status 1).
  vulndb sync [--source kev|epss|nvd|osv]
      Imports every location of CONTROLGRAPH_VULNDB_SOURCES now (or those of one source).
  vulndb stats
      Prints the records per source and the last import of each, as JSON.`;

function summary(result: ImportResult): string {
  if (result.status === 'failed') {
    const where = [
      result.error_offset !== null ? `byte ${result.error_offset}` : null,
      result.error_record !== null ? `after ${result.error_record} records` : null,
      result.error_context,
    ].filter(Boolean);
    return `${result.source ?? 'import'} ${result.location}: FAILED: ${result.error}${where.length ? ` (${where.join(', ')})` : ''}; the previous data is unchanged`;
  }
  if (result.status === 'unchanged') return `${result.source} ${result.location}: unchanged (${result.records} records)`;
  const findings = result.findings_escalated || result.findings_restored ? `; findings escalated ${result.findings_escalated}, restored ${result.findings_restored}` : '';
  return (
    `${result.source} ${result.location}: ${result.records} records read; ${result.inserted} inserted, ${result.updated} updated, ` +
    `${result.deleted} deleted, ${result.unchanged} unchanged${findings}`
  );
}

async function withDatabase<T>(run: (deps: { db: Awaited<ReturnType<typeof openDatabase>>; config: ReturnType<typeof loadConfig> }) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const database = await openDatabase(config.databaseUrl);
  try {
    await migrate(database.db);
    return await run({ db: database, config });
  } finally {
    await database.close();
  }
}

export async function vulndbCommand(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  const { values, positional } = parseOptions(rest, { values: ['source'] });
  const source = values.source;
  if (source !== undefined && !isSource(source)) throw new Error(`--source must be one of kev, epss, nvd, osv (got "${source}")`);
  switch (sub) {
    case 'import': {
      const location = positional[0];
      if (!location || positional.length > 1) throw new Error(`vulndb import takes one file, directory or URL\n\n${vulndbHelp}`);
      const result = await withDatabase(({ db, config }) =>
        importLocation({ db: db.db, clock: systemClock, log: createStderrLogger(config.logLevel) }, location, { source: source as VulnSource | undefined, trigger: 'cli' }),
      );
      if (result.status === 'failed') throw new Error(summary(result));
      console.log(summary(result));
      return;
    }
    case 'sync': {
      if (positional.length) throw new Error(`vulndb sync takes no arguments\n\n${vulndbHelp}`);
      const outcome = await withDatabase(({ db, config }) =>
        runSync({ config, database: db, clock: systemClock, log: createStderrLogger(config.logLevel) }, { trigger: 'cli', sources: source ? [source as VulnSource] : undefined }),
      );
      if (outcome.skipped) {
        console.log(outcome.skipped);
        return;
      }
      for (const run of outcome.runs) console.log(summary(run));
      const failed = outcome.runs.filter((r) => r.status === 'failed');
      if (failed.length) throw new Error(`${failed.length} of ${outcome.runs.length} sources failed`);
      return;
    }
    case 'stats': {
      const stats = await withDatabase(({ db, config }) => createVulnService({ database: db, clock: systemClock, config }).stats());
      console.log(JSON.stringify(stats, null, 2));
      return;
    }
    default:
      throw new Error(`unknown vulndb command "${sub ?? ''}"\n\n${vulndbHelp}`);
  }
}
