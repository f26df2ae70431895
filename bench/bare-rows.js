// The driver-only way to put an estate into a migrated scratch database: the baseline of the ingest
// benchmark and the setup of the audit floor. No service code runs here, only SQL.
import { randomUUID } from 'node:crypto';

/** An account, tenant and workspace for the rows; returns their ids. */
export async function bareWorkspace(pool) {
  const tenant = randomUUID();
  const ws = randomUUID();
  await pool.query(`INSERT INTO accounts VALUES ($1, 'b', now())`, [tenant]);
  await pool.query(`INSERT INTO tenants (id, account_id, name, slug, plan, created_at, updated_at) VALUES ($1, $1, 'b', 'b', 'pro', now(), now())`, [tenant]);
  await pool.query(`INSERT INTO workspaces (id, tenant_id, name, is_default, created_at, updated_at) VALUES ($1, $2, 'w', true, now(), now())`, [ws, tenant]);
  return { tenant, ws };
}

/** The nodes in multi-row INSERTs of 1,000, with the ids the API would give them. */
export async function bareInsertNodes(pool, { tenant, ws }, nodes) {
  const now = new Date();
  for (let i = 0; i < nodes.length; i += 1000) {
    const values = [];
    const params = [];
    for (const n of nodes.slice(i, i + 1000)) {
      const b = params.length;
      values.push(`($${b + 1},$${b + 2},$${b + 3},$${b + 4},$${b + 5},$${b + 6},$${b + 7},$${b + 8},$${b + 9},$${b + 10},$${b + 11},$${b + 12},$${b + 12})`);
      params.push(
        tenant,
        ws,
        `${n.provider}:${n.region}:${n.type}:${n.native_id}`,
        n.provider,
        n.region,
        n.type,
        n.native_id,
        n.name,
        n.account_id,
        JSON.stringify(n.properties),
        JSON.stringify(n.tags),
        now,
      );
    }
    await pool.query(
      `INSERT INTO nodes (tenant_id, workspace_id, id, provider, region, type, native_id, name, account_id, properties, tags, created_at, updated_at) VALUES ${values.join(',')}`,
      params,
    );
  }
}
