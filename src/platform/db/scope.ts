import type { ExpressionBuilder } from 'kysely';

/**
 * The data scope of every request: the tenant from the path, the workspace from the token.
 * Repositories take it first and apply it with `inScope`, so another tenant's row reads as "not found".
 */
export interface Scope {
  tenantId: string;
  workspaceId: string;
}

/** Filters a table with tenant_id and workspace_id columns to the scope. */
export function inScope(scope: Scope) {
  // The ExpressionBuilder is typed loosely on purpose: every scoped table has these two columns.
  return (eb: ExpressionBuilder<any, any>) =>
    eb.and([eb('tenant_id', '=', scope.tenantId), eb('workspace_id', '=', scope.workspaceId)]);
}

/** Filters a tenant-wide table (no workspace column) to the tenant. */
export function inTenant(tenantId: string) {
  return (eb: ExpressionBuilder<any, any>) => eb('tenant_id', '=', tenantId);
}
