import type { Module } from '../module.js';
import { hostRules } from './host-rules.js';
import { agentRoutes } from './routes.js';
import { PRUNE_JOB, pruneJob } from './prune-job.js';
import './tables.js';

/**
 * Host agent reports (issue 9): `POST /api/v1/agents/{agentID}/report` (gzip JSON, API key with
 * agents:write), the host node, CVE / host-rule / config-drift findings, and the host SBOM
 * (`GET /tenants/{tenantID}/nodes/{id}/sbom`). See README.md in this folder.
 *
 * Service API for other modules: `hostPackages(db, scope, nodeIds)` and `hostInventoryDates(db, scope, nodeIds)`
 * in host-software.ts; the SBOM builders `cycloneDx`, `spdx`, `sbomFacts`, `sbomFormat` in sbom.ts (the
 * applications module's service SBOM uses them).
 */
export const agentsModule: Module = {
  name: 'agents',
  routes: agentRoutes(),
  jobs: () => [pruneJob()],
  schedules: () => [{ name: 'agents-prune-reports', kind: PRUNE_JOB, intervalMs: 24 * 3600_000 }],
  onStart: async () => {
    // A broken host rule file stops the start with the reason, not the first report.
    hostRules();
  },
};
