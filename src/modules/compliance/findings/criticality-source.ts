import type { Kysely } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import type { Scope } from '../../../platform/db/scope.js';

/**
 * The business-service criticality of resources (a resource absent from the map is in no service),
 * read on the caller's connection or transaction: the stored risk scores are written in the writer's.
 * The applications module owns services; compliance does not import it (applications calls
 * rescoreFindings, so the import would go both ways). The composition root (modules/index.ts, and the
 * CLI's vulndb import) hands the applications module's function to createComplianceModule.
 */
export type ResourceCriticality = (db: Kysely<Database>, scope: Scope, resourceIds: string[]) => Promise<Map<string, string>>;

let source: ResourceCriticality | null = null;

/** Called once by createComplianceModule (the same function every time: a process has one applications module). */
export function provideResourceCriticality(criticality: ResourceCriticality): void {
  source = criticality;
}

/** The provided criticality; a process that rescores findings without providing it fails loudly instead of scoring without criticality. */
export function resourceCriticality(db: Kysely<Database>, scope: Scope, resourceIds: string[]): Promise<Map<string, string>> {
  if (!source) throw new Error('compliance: no resource criticality provided (createComplianceModule was not called)');
  return source(db, scope, resourceIds);
}
