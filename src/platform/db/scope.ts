import { sql, type ExpressionBuilder, type RawBuilder } from 'kysely';

/**
 * The data scope of every request: the tenant from the path, the workspace from the token.
 * Repositories take it first and apply it with `inScope`, so another tenant's row reads as "not found".
 *
 * One dialect (issue 26): every query of a scoped table filters through these helpers (`inScope`,
 * `inWorkspace`, `inTenant` in Kysely, `workspaceIs`, `tenantIs` in raw SQL), never a hand-written
 * `where('workspace_id', …)` or `workspace_id = ${…}`; the lint rule `controlgraph/scoped-queries`
 * (eslint/scoped-queries.js) finds one that does not.
 */
export interface Scope {
  tenantId: string;
  workspaceId: string;
}

/** Filters a table with tenant_id and workspace_id columns to the scope. */
export function inScope(scope: Scope) {
  // The ExpressionBuilder is typed loosely on purpose: every scoped table has these two columns.
  return (eb: ExpressionBuilder<any, any>) => eb.and([eb('tenant_id', '=', scope.tenantId), eb('workspace_id', '=', scope.workspaceId)]);
}

/**
 * Filters a scoped table to the scope's workspace alone, for lookups by the table's own key
 * (workspace_id, id). Workspace ids are unique across tenants and the authenticator checked that the
 * workspace belongs to the tenant, so this selects the same rows as `inScope`. Why it exists: with
 * the tenant predicate, a planner without fresh statistics (PGlite never gathers them itself, nor
 * PostgreSQL with autovacuum off or before it runs) ANDs the key lookup with a scan of the tenant
 * index, every row of the tenant: checking the 10,000 ends of a batch of edges took 5 s at 850,000
 * nodes instead of milliseconds.
 */
export function inWorkspace(scope: Pick<Scope, 'workspaceId'>, alias?: string) {
  return (eb: ExpressionBuilder<any, any>) => eb(column(alias, 'workspace_id'), '=', scope.workspaceId);
}

/** Filters a tenant-wide table (no workspace column) to the tenant. */
export function inTenant(tenantId: string, alias?: string) {
  return (eb: ExpressionBuilder<any, any>) => eb(column(alias, 'tenant_id'), '=', tenantId);
}

/** `inWorkspace` for raw SQL: `<alias>.workspace_id = <the workspace>`, with the id as a parameter. */
export function workspaceIs(scope: Pick<Scope, 'workspaceId'>, alias?: string): RawBuilder<boolean> {
  return sql<boolean>`${sql.ref(column(alias, 'workspace_id'))} = ${scope.workspaceId}`;
}

/** `inTenant` for raw SQL: `<alias>.tenant_id = <the tenant>`, with the id as a parameter. */
export function tenantIs(tenantId: string, alias?: string): RawBuilder<boolean> {
  return sql<boolean>`${sql.ref(column(alias, 'tenant_id'))} = ${tenantId}`;
}

const column = (alias: string | undefined, name: string) => (alias ? `${alias}.${name}` : name);
