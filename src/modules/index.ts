import type { Module } from './module.js';
import { systemModule } from './system/module.js';
import { tenancyModule } from './tenancy/module.js';
import { graphModule } from './graph/module.js';
import { createComplianceModule } from './compliance/module.js';
import { riskModule } from './risk/module.js';
import { discoveryModule } from './discovery/module.js';
import { schedulesModule } from './schedules/module.js';
import { exportsModule } from './exports/module.js';
import { integrationsModule } from './integrations/module.js';
import { questionnairesModule } from './questionnaires/module.js';
import { poamModule } from './poam/module.js';
import { applicationsModule } from './applications/module.js';
import { resourceCriticality } from './applications/index.js';
import { cveRiskFacts } from './vulndb/index.js';
import { ssoModule } from './sso/module.js';
import { vulndbModule } from './vulndb/module.js';
import { agentsModule } from './agents/module.js';
import { consoleModule } from './console/module.js';

/** Every domain module of the service, in start-up order. */
export const modules: Module[] = [
  systemModule,
  tenancyModule,
  graphModule,
  // The risk score weighs the business-service criticality the applications module keeps, and the
  // KEV and EPSS facts of the vulndb module's store.
  createComplianceModule({ resourceCriticality, cveRiskFacts }),
  riskModule,
  discoveryModule,
  // Schedules repeat discovery jobs and audits: after both.
  schedulesModule,
  exportsModule,
  integrationsModule,
  questionnairesModule,
  poamModule,
  applicationsModule,
  ssoModule,
  vulndbModule,
  agentsModule,
  // Last: its catch-all route answers the console's page for paths no other module serves.
  consoleModule,
];
