import { workspaceIs } from '../../../platform/db/scope.js';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import './tables.js';

/**
 * The consistency check of the findings read model (migration 0032): every rollup recomputed from
 * finding_rows and evaluation_unknowns and compared with what the triggers kept. Run by
 * `controlgraph check`, by POST /api/v1/system/read-model/check, and by the tests after each kind of
 * write, so a write path that skipped the read model is caught.
 */

/** A rollup's stored rows and the same rows recomputed (both without zero counts), by key. */
const ROLLUPS = {
  finding_rollup: {
    keys: ['rule_id', 'framework', 'control_id', 'text_id', 'severity_rank', 'state'],
    stored: sql`SELECT workspace_id, rule_id, framework, control_id, text_id, severity_rank, state, n FROM finding_rollup WHERE n <> 0`,
    expected: sql`SELECT workspace_id, rule_id, framework, control_id, text_id, severity_rank,
      CASE WHEN status = 'resolved' THEN 'resolved' WHEN accepted_until IS NOT NULL THEN 'accepted' ELSE 'open' END AS state, count(*) AS n
      FROM finding_rows GROUP BY 1, 2, 3, 4, 5, 6, 7`,
  },
  finding_group_rollup: {
    keys: ['group_id', 'severity_rank', 'state'],
    stored: sql`SELECT workspace_id, group_id, severity_rank, state, n FROM finding_group_rollup WHERE n <> 0`,
    expected: sql`SELECT workspace_id, group_id, severity_rank,
      CASE WHEN status = 'resolved' THEN 'resolved' WHEN accepted_until IS NOT NULL THEN 'accepted' ELSE 'open' END AS state, count(*) AS n
      FROM finding_rows GROUP BY 1, 2, 3, 4`,
  },
  // The ranking: findings per (group, state) as n, and the top severity as part of the key (a wrong
  // top shows as the stored row missing and the expected one absent).
  finding_group_rank: {
    keys: ['state', 'group_id', 'top'],
    stored: sql`SELECT workspace_id, state, group_id, top, findings AS n FROM finding_group_rank WHERE findings <> 0`,
    expected: sql`SELECT workspace_id,
      CASE WHEN status = 'resolved' THEN 'resolved' WHEN accepted_until IS NOT NULL THEN 'accepted' ELSE 'open' END AS state,
      group_id, max(severity_rank) AS top, count(*) AS n
      FROM finding_rows GROUP BY 1, 2, 3`,
  },
  finding_group_totals: {
    keys: ['state'],
    stored: sql`SELECT workspace_id, state, groups AS n FROM finding_group_totals WHERE groups <> 0`,
    expected: sql`SELECT workspace_id, state, count(DISTINCT group_id) AS n FROM (
      SELECT workspace_id, group_id, CASE WHEN status = 'resolved' THEN 'resolved' WHEN accepted_until IS NOT NULL THEN 'accepted' ELSE 'open' END AS state
      FROM finding_rows) r GROUP BY 1, 2`,
  },
  unknown_rollup: {
    keys: ['rule_id', 'framework', 'control_id', 'text_id'],
    stored: sql`SELECT workspace_id, rule_id, framework, control_id, text_id, n FROM unknown_rollup WHERE n <> 0`,
    expected: sql`SELECT workspace_id, rule_id, framework, control_id, text_id, count(*) AS n FROM evaluation_unknowns GROUP BY 1, 2, 3, 4, 5`,
  },
  unknown_resource_rollup: {
    keys: ['resource_id'],
    stored: sql`SELECT workspace_id, resource_id, n FROM unknown_resource_rollup WHERE n <> 0`,
    expected: sql`SELECT workspace_id, resource_id, count(*) AS n FROM evaluation_unknowns GROUP BY 1, 2`,
  },
  unknown_workspace_rollup: {
    keys: [],
    stored: sql`SELECT workspace_id, resources AS n FROM unknown_workspace_rollup WHERE resources <> 0`,
    expected: sql`SELECT workspace_id, count(DISTINCT resource_id) AS n FROM evaluation_unknowns GROUP BY 1`,
  },
} as const;

export type RollupName = keyof typeof ROLLUPS;

export interface RollupDifference {
  rollup: RollupName;
  workspace_id: string;
  /** The rollup row's key (without the workspace). */
  key: Record<string, string | number>;
  stored: number;
  expected: number;
}

export interface ConsistencyReport {
  consistent: boolean;
  /** Workspaces whose rows were compared. */
  workspaces: number;
  /** The first 100 differences. */
  differences: RollupDifference[];
  /** All of them. */
  difference_count: number;
  /** Workspaces rebuilt from their rows (with repair). */
  repaired: number;
}

const LIMIT = 100;

async function compare(db: Kysely<Database>, workspaceId: string | null): Promise<{ differences: RollupDifference[]; count: number }> {
  const differences: RollupDifference[] = [];
  let count = 0;
  for (const [name, rollup] of Object.entries(ROLLUPS) as Array<[RollupName, (typeof ROLLUPS)[RollupName]]>) {
    const keys = ['workspace_id', ...rollup.keys];
    const on = sql.join(
      keys.map((k) => sql`s.${sql.ref(k)} = e.${sql.ref(k)}`),
      sql` AND `,
    );
    const pick = sql.join(
      keys.map((k) => sql`coalesce(s.${sql.ref(k)}, e.${sql.ref(k)}) AS ${sql.ref(k)}`),
      sql`, `,
    );
    const scope = workspaceId ? sql`WHERE coalesce(s.workspace_id, e.workspace_id) = ${workspaceId}` : sql``;
    const { rows } = await sql<Record<string, string | number>>`
      SELECT ${pick}, coalesce(s.n, 0)::bigint::text AS stored, coalesce(e.n, 0)::bigint::text AS expected, count(*) OVER () AS total
      FROM (${rollup.stored}) s
      FULL OUTER JOIN (${rollup.expected}) e ON ${on}
      ${scope}
      ${workspaceId ? sql`AND` : sql`WHERE`} coalesce(s.n, 0) <> coalesce(e.n, 0)
      LIMIT ${LIMIT}`.execute(db);
    count += Number(rows[0]?.total ?? 0);
    for (const row of rows.slice(0, LIMIT - differences.length)) {
      differences.push({
        rollup: name,
        workspace_id: String(row.workspace_id),
        key: Object.fromEntries(rollup.keys.map((k) => [k, row[k]!])),
        stored: Number(row.stored),
        expected: Number(row.expected),
      });
    }
  }
  return { differences, count };
}

/** Rebuilds a workspace's rollups from its rows, in one transaction. */
async function rebuild(trx: Transaction<Database>, workspaceId: string): Promise<void> {
  for (const name of Object.keys(ROLLUPS) as RollupName[]) {
    await sql`DELETE FROM ${sql.table(name)} WHERE ${workspaceIs({ workspaceId })}`.execute(trx);
  }
  for (const [name, rollup] of Object.entries(ROLLUPS) as Array<[RollupName, (typeof ROLLUPS)[RollupName]]>) {
    const value = { unknown_workspace_rollup: 'resources', finding_group_rank: 'findings', finding_group_totals: 'groups' }[name as string] ?? 'n';
    const columns = ['workspace_id', ...rollup.keys, value];
    await sql`INSERT INTO ${sql.table(name)} (${sql.join(columns.map((c) => sql.ref(c)))})
      SELECT * FROM (${rollup.expected}) e WHERE ${workspaceIs({ workspaceId }, 'e')}`.execute(trx);
  }
}

/**
 * Compares every rollup (of one workspace, or of all) with its rows; with `repair`, rebuilds the
 * workspaces that differ, each in a transaction that locks its findings against writers meanwhile.
 */
export async function checkReadModel(db: Kysely<Database>, options: { workspaceId?: string; repair?: boolean } = {}): Promise<ConsistencyReport> {
  const workspaceId = options.workspaceId ?? null;
  const { differences, count } = await compare(db, workspaceId);
  const workspaces = workspaceId
    ? 1
    : Number(
        (
          await db
            .selectFrom('workspaces')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
  let repaired = 0;
  if (options.repair && count > 0) {
    const broken = workspaceId ? [workspaceId] : await differingWorkspaces(db);
    for (const id of broken) {
      await db.transaction().execute(async (trx) => {
        await sql`SELECT 1 FROM finding_rows WHERE ${workspaceIs({ workspaceId: id })} FOR UPDATE`.execute(trx);
        await rebuild(trx, id);
      });
      repaired++;
    }
  }
  return { consistent: count === 0, workspaces, differences, difference_count: count, repaired };
}

async function differingWorkspaces(db: Kysely<Database>): Promise<string[]> {
  const ids = new Set<string>();
  // Up to the first 100 differences name their workspaces; repeat until none differ.
  for (;;) {
    const { differences } = await compare(db, null);
    const fresh = differences.map((d) => d.workspace_id).filter((id) => !ids.has(id));
    if (fresh.length === 0) return [...ids];
    for (const id of fresh) ids.add(id);
    if (differences.length < LIMIT) return [...ids];
  }
}
