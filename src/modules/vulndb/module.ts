import type { Module } from '../module.js';
import { vulndbRoutes } from './routes.js';
import { enqueueSeedIfEmpty, parseSourceSpecs, SYNC_JOB, SYNC_SCHEDULE, seedJob, syncJob } from './sync-job.js';
import { importJob } from './import-job.js';
import { outboundPolicyOf } from '../../platform/outbound/index.js';

/**
 * Vulnerability intelligence: a global store of the CISA KEV catalog, FIRST EPSS scores, NVD CVE
 * records and OSV advisories; the /api/v1/vulndb endpoints; the scheduled sync; package matching for
 * the host agent; and the KEV escalation of findings. See README.md in this folder.
 *
 * Service API for other modules:
 * - `createVulnMatcher(db)`: `matchPackage`, `matchPackages` (batch), `matchCpe` (matching/matcher.ts)
 * - `packageCoverage(db, ecosystems)`: whether package advisories are loaded (for those ecosystems)
 * - `createKevLookup(db).isKnownExploited(cveIds)` and `reconcileKevSeverities(trx, clock)` (escalation.ts)
 * - `cveIntelRecords(db, cveIds)` (KEV, EPSS and NVD facts of many CVEs) and `createCveIntel(db)` (KEV + EPSS
 *   per CVE, the shape of the compliance module's `ScoringSources.cveIntel`) (cve-intel.ts)
 * - `vulnerabilityFacts(db, {advisoryIds, cveIds})`, `ratingsOf`, `databaseOf`, `affectedEntries`, `urgencySeverity`
 *   (vulnerability-facts.ts: what SBOMs and CVE findings say of a matched vulnerability) and `versRange` (vers.ts)
 * - `importLocation(...)`, `runSync(...)` for the CLI
 */
export const vulndbModule: Module = {
  name: 'vulndb',
  routes: vulndbRoutes,
  jobs: (deps) => [syncJob(deps), seedJob(deps), importJob(deps)],
  schedules: (deps) => [{ name: SYNC_SCHEDULE, kind: SYNC_JOB, intervalMs: deps.config.vulndbIntervalMs, payload: { trigger: 'schedule' }, maxAttempts: 3 }],
  onStart: async (deps) => {
    // A wrong CONTROLGRAPH_VULNDB_SOURCES stops the start with the reason, not the first sync 6 h later.
    parseSourceSpecs(deps.config.vulndbSources, outboundPolicyOf(deps.config));
    if (deps.config.vulndbSeed && (await enqueueSeedIfEmpty(deps))) deps.log.info('vulndb: empty store, seed import of the shipped KEV and EPSS snapshot queued');
  },
};
