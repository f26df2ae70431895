import type { Module } from './module.js';
import { systemModule } from './system/index.js';
import { tenancyModule } from './tenancy/index.js';
import { graphModule } from './graph/index.js';
import { createComplianceModule } from './compliance/index.js';
import { riskModule } from './risk/index.js';
import { discoveryModule } from './discovery/index.js';
import { exportsModule } from './exports/index.js';
import { integrationsModule } from './integrations/index.js';
import { questionnairesModule } from './questionnaires/index.js';
import { poamModule } from './poam/index.js';
import { applicationsModule, resourceCriticality } from './applications/index.js';
import { ssoModule } from './sso/index.js';
import { vulndbModule } from './vulndb/index.js';
import { agentsModule } from './agents/index.js';
import { consoleModule } from './console/index.js';

/** Every domain module of the service, in start-up order. */
export const modules: Module[] = [
  systemModule,
  tenancyModule,
  graphModule,
  // The risk score weighs the business-service criticality the applications module keeps.
  createComplianceModule({ resourceCriticality }),
  riskModule,
  discoveryModule,
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
