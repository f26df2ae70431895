import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import type { Scope } from '../../../platform/db/scope.js';
import { filtered, type AcceptanceView, type FindingFilter } from './findings-repo.js';
import type { Cursor, SortKey } from './findings-cursor.js';

/**
 * The ids (and sort key values) of one page of findings in a sort order, read so that an index
 * yields the rows in order and the read stops after the page: a keyset page (after a cursor) or an
 * offset page.
 *
 * PostgreSQL reads an index in order only for one direction per scan and one value of each column
 * before the sorted ones. So the rows after a cursor are split into pieces that each are one range
 * of an index — the rows equal to the cursor on the leading keys and after it on the next run of
 * keys sorted the same way (a row comparison, which a b-tree takes as a range bound) — and, where a
 * leading column of the index is not fixed by the filter (status=all) or is sorted against the
 * index's direction (sort=severity, ascending, over an index whose rank is descending), a piece per
 * value of that column. The pieces are combined with UNION ALL under the overall ORDER BY, which the
 * planner merges (Merge Append) reading each piece only as far as the page needs.
 */

export interface KeysetRow {
  id: string;
  /** The sort key values as the cursor stores them (times as ISO text with microseconds). */
  values: Array<number | string>;
}

const TIME_TEXT = 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"';

const ref = (column: string) => sql.ref(`f.${column}`);

function valueOf(key: SortKey, value: number | string): RawBuilder<unknown> {
  if (key.kind === 'time') return sql`${value}::timestamptz`;
  if (key.kind === 'rank' || key.kind === 'score') return sql`${value}::smallint`;
  return sql`${value}::text`;
}

/** One rank of the list index's rank column: a piece an index reads as one range. */
const rankIs = (rank: number) => sql<boolean>`${ref('severity_rank')} = ${rank}::smallint`;

/** The sort starts with the rank ascending, against the list index's descending rank: split per rank. */
const leadsWithAscendingRank = (keys: SortKey[]) => keys[0]?.kind === 'rank' && !keys[0].desc;

/** Keys including the id tie-breaker (ascending). */
function withId(keys: SortKey[]): SortKey[] {
  return [...keys, { column: 'id', desc: false, kind: 'text' }];
}

/** Consecutive keys with the same direction: each run is one row comparison. */
function runs(keys: SortKey[]): Array<{ from: number; to: number }> {
  const result: Array<{ from: number; to: number }> = [];
  keys.forEach((key, i) => {
    const last = result.at(-1);
    if (last && keys[last.to]!.desc === key.desc) last.to = i;
    else result.push({ from: i, to: i });
  });
  return result;
}

/**
 * The rows after the cursor as pieces, each a conjunction an index serves as one range. A leading
 * rank run sorted ascending is split per rank value (the list index holds the rank descending with
 * created_at descending after it).
 */
function afterPieces(keys: SortKey[], cursor: Cursor | null, rankValues: number[]): RawBuilder<boolean>[] {
  const all = withId(keys);
  const ascendingRank = leadsWithAscendingRank(keys);
  if (!cursor) {
    return ascendingRank ? rankValues.map(rankIs) : [sql<boolean>`true`];
  }
  const values = [...cursor.values, cursor.id];
  const pieces: RawBuilder<boolean>[] = [];
  // Latest run first: the rows nearest the cursor.
  for (const run of runs(all).reverse()) {
    const equal = all.slice(0, run.from).map((k, i) => sql<boolean>`${ref(k.column)} = ${valueOf(k, values[i]!)}`);
    const runKeys = all.slice(run.from, run.to + 1);
    const runValues = values.slice(run.from, run.to + 1);
    if (run.from === 0 && ascendingRank) {
      // rank > x, as one piece per greater rank.
      for (const v of rankValues.filter((r) => r > (runValues[0] as number))) pieces.push(rankIs(v));
      continue;
    }
    const op = sql.raw(runKeys[0]!.desc ? '<' : '>');
    const left = sql.join(runKeys.map((k) => ref(k.column)));
    const right = sql.join(runKeys.map((k, i) => valueOf(k, runValues[i]!)));
    const compare = runKeys.length === 1 ? sql<boolean>`${left} ${op} ${right}` : sql<boolean>`(${left}) ${op} (${right})`;
    pieces.push(sql.join([...equal, compare], sql` AND `) as RawBuilder<boolean>);
  }
  return pieces;
}

function orderBy(keys: SortKey[], prefix: string): RawBuilder<unknown> {
  return sql.join(withId(keys).map((k) => sql`${sql.ref(prefix + k.column)} ${sql.raw(k.desc ? 'DESC' : 'ASC')}`));
}

export interface KeysetRequest {
  keys: SortKey[];
  cursor: Cursor | null;
  offset: number;
  limit: number;
  /** Extra conditions on `f` (the scored list's min_score). */
  where?: RawBuilder<boolean>[];
}

/** One page of ids in the order of `keys` (see the module comment). */
export async function keysetPage(db: Kysely<Database>, scope: Scope, filter: FindingFilter, view: AcceptanceView, request: KeysetRequest): Promise<KeysetRow[]> {
  const { keys, cursor } = request;
  const statuses: Array<FindingFilter['status']> = filter.status === 'all' ? ['open', 'resolved'] : [filter.status];
  // Only the severities the filter keeps, when the rank is split per value.
  const ranks = [1, 2, 3, 4, 5].filter((r) => !filter.severities?.length || filter.severities.some((s) => ['INFO', 'LOW', 'MEDIUM', 'HIGH', 'CRITICAL'][r - 1] === s));
  const pieces = afterPieces(keys, cursor, ranks);
  const take = request.offset + request.limit;
  const selection = [
    sql<string>`f.id`.as('id'),
    ...keys.map((k) => ref(k.column).as(k.column)),
    ...keys.map((k, i) => (k.kind === 'time' ? sql`to_char(${ref(k.column)} AT TIME ZONE 'UTC', ${TIME_TEXT})` : ref(k.column)).as(`k${i}`)),
  ];
  // A severity filter is an index range only as one rank per piece: PostgreSQL before 17 reads
  // `severity_rank = ANY(...)` in index order only as a filter, which walked every open finding above
  // the wanted ranks (severity=LOW at 118,760 findings: 104,136 rows read, 400 ms, for a page of 50).
  // An ascending rank sort already has a piece per rank.
  const rankPieces: Array<RawBuilder<boolean> | null> = filter.severities?.length && ranks.length < 5 && !leadsWithAscendingRank(keys) ? ranks.map(rankIs) : [null];
  const parts = statuses.flatMap((status) =>
    pieces
      .flatMap((afterCursor) => rankPieces.map((rank) => (rank ? sql<boolean>`${afterCursor} AND ${rank}` : afterCursor)))
      .map((piece) => {
        let q = filtered(db, scope, { ...filter, status }, view).where(piece);
        for (const condition of request.where ?? []) q = q.where(condition);
        // Each piece in the index's order and no longer than the page needs.
        return q.select(selection).orderBy(orderBy(keys, 'f.')).limit(take);
      }),
  );
  const source = parts.length === 1 ? sql`${parts[0]!}` : sql.join(parts, sql` UNION ALL `);
  const rows = await sql<Record<string, unknown>>`
    SELECT * FROM (${source}) AS p ORDER BY ${orderBy(keys, '')} LIMIT ${request.limit} OFFSET ${request.offset}`.execute(db);
  return rows.rows.map((r) => ({ id: r.id as string, values: keys.map((k, i) => (k.kind === 'rank' || k.kind === 'score' ? Number(r[`k${i}`]) : (r[`k${i}`] as string))) }));
}
