import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import type { Scope } from '../../platform/db/scope.js';
import { activeFindingsTable } from '../compliance/index.js';
import { nodePageMatching, nodesInScope } from '../graph/index.js';

export const SEVERITY_KEYS = ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'INFO'] as const;
export type SeverityKey = (typeof SEVERITY_KEYS)[number];
export type SeverityCounts = Record<SeverityKey, number>;

export const HEALTH_VALUES = ['Critical', 'Warning', 'Healthy'] as const;
export type Health = (typeof HEALTH_VALUES)[number];

export interface Rollup {
  resource_count: number;
  findings_by_severity: SeverityCounts;
  health: Health;
}

export function emptyCounts(): SeverityCounts {
  return { CRITICAL: 0, HIGH: 0, MEDIUM: 0, LOW: 0, INFO: 0 };
}

/**
 * The spec's health roll-up: Critical when any critical finding exists; Warning when high findings
 * exist and no critical; Healthy when neither. Counted findings are the active ones (open and not
 * covered by a live risk acceptance), as every other count of the service.
 */
export function healthOf(counts: SeverityCounts): Health {
  if (counts.CRITICAL > 0) return 'Critical';
  if (counts.HIGH > 0) return 'Warning';
  return 'Healthy';
}

export interface Group {
  key: string;
  /** A predicate over `nodes AS n`. */
  predicate: RawBuilder<boolean>;
}

// A statement evaluates every group's predicate on each node: keep the statement a readable size.
const GROUPS_PER_QUERY = 100;

/** The members of each group as a CTE body: rows (g, id) with g the group's index in `groups`. */
function membersSql(scope: Scope, groups: Group[]) {
  const rows = groups.map((g, i) => sql`(${i}::int, ${g.predicate})`);
  return sql`SELECT k.g, n.id FROM ${nodesInScope(scope)} n CROSS JOIN LATERAL (VALUES ${sql.join(rows)}) AS k(g, hit)
    WHERE k.hit`;
}

/**
 * Resource counts and active findings by severity of each group, in one pass over the nodes per 100
 * groups: findings roll up from resources to whatever the group is (an application, a service).
 */
export async function rollups(db: Kysely<Database>, scope: Scope, now: Date, groups: Group[]): Promise<Map<string, Rollup>> {
  const result = new Map<string, Rollup>();
  for (const g of groups) result.set(g.key, { resource_count: 0, findings_by_severity: emptyCounts(), health: 'Healthy' });
  if (groups.length === 0) return result;
  const active = await activeFindingsTable(db, scope, now);
  for (let start = 0; start < groups.length; start += GROUPS_PER_QUERY) {
    const chunk = groups.slice(start, start + GROUPS_PER_QUERY);
    const rows = await sql<{ g: number; resources: number; severity: string | null; n: number | null }>`
      WITH m AS MATERIALIZED (${membersSql(scope, chunk)}),
      c AS (SELECT g, count(*)::int AS resources FROM m GROUP BY g),
      s AS (
        SELECT m.g, f.severity, count(*)::int AS n FROM m
        JOIN ${active} f ON f.resource_id = m.id
        GROUP BY m.g, f.severity
      )
      SELECT c.g, c.resources, s.severity, s.n FROM c LEFT JOIN s ON s.g = c.g`.execute(db);
    for (const row of rows.rows) {
      const entry = result.get(chunk[row.g]!.key)!;
      entry.resource_count = row.resources;
      if (row.severity && row.n) entry.findings_by_severity[row.severity as SeverityKey] = row.n;
    }
  }
  for (const entry of result.values()) entry.health = healthOf(entry.findings_by_severity);
  return result;
}

export interface MemberResource {
  id: string;
  name: string;
  type: string;
  region: string;
  account_id: string | null;
  findings_by_severity: SeverityCounts;
  health: Health;
}

/** One page of a group's member resources, worst first (critical, then high findings), then by id. */
export async function memberPage(db: Kysely<Database>, scope: Scope, now: Date, predicate: RawBuilder<boolean>, limit: number, offset: number): Promise<MemberResource[]> {
  const active = await activeFindingsTable(db, scope, now);
  const rows = await sql<{ id: string; name: string; type: string; region: string; account_id: string | null } & Record<Lowercase<SeverityKey>, number>>`
    WITH m AS MATERIALIZED (
      SELECT n.id, n.name, n.type, n.region, n.account_id FROM ${nodesInScope(scope)} n
      WHERE ${predicate}
    ), s AS (
      SELECT f.resource_id,
        count(*) FILTER (WHERE f.severity = 'CRITICAL')::int AS critical,
        count(*) FILTER (WHERE f.severity = 'HIGH')::int AS high,
        count(*) FILTER (WHERE f.severity = 'MEDIUM')::int AS medium,
        count(*) FILTER (WHERE f.severity = 'LOW')::int AS low,
        count(*) FILTER (WHERE f.severity = 'INFO')::int AS info
      FROM ${active} f JOIN m ON f.resource_id = m.id
      GROUP BY f.resource_id
    )
    SELECT m.*, coalesce(s.critical, 0) AS critical, coalesce(s.high, 0) AS high, coalesce(s.medium, 0) AS medium,
      coalesce(s.low, 0) AS low, coalesce(s.info, 0) AS info
    FROM m LEFT JOIN s ON s.resource_id = m.id
    ORDER BY coalesce(s.critical, 0) DESC, coalesce(s.high, 0) DESC, m.id
    LIMIT ${limit} OFFSET ${offset}`.execute(db);
  return rows.rows.map((r) => {
    const counts: SeverityCounts = { CRITICAL: r.critical, HIGH: r.high, MEDIUM: r.medium, LOW: r.low, INFO: r.info };
    return { id: r.id, name: r.name, type: r.type, region: r.region, account_id: r.account_id, findings_by_severity: counts, health: healthOf(counts) };
  });
}

/** Node ids of a group, one page, by id (asset group members, previews). */
export async function memberIds(db: Kysely<Database>, scope: Scope, predicate: RawBuilder<boolean>, limit: number, offset: number) {
  return nodePageMatching(db, scope, predicate, limit, offset);
}
