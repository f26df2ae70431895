import type { Kysely, RawBuilder } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import type { Scope } from '../../../platform/db/scope.js';
import { offsetOf, type PageRequest } from '../../../platform/http/pagination.js';
import { acceptanceView, filtered, findingSelection, type AcceptanceView, type FindingFilter } from './findings-repo.js';
import { decodeCursor, encodeCursor, findingSortKeys, type Cursor, type SortKey } from './findings-cursor.js';
import { keysetPage, type KeysetRow } from './keyset.js';
import { controlRollup, rollupTotal } from '../rollups/active-rollup.js';
import { groupRollupServes } from '../rollups/group-rollup.js';

/**
 * The number of findings matching a filter: the `total` of GET /findings. The seam where counts kept
 * at write time can answer instead of counting (issue 23 item 1), for the filters they cover; this
 * is the plain count, over the same indexes the list uses.
 */
export async function findingsTotal(db: Kysely<Database>, scope: Scope, filter: FindingFilter, view: AcceptanceView, where: RawBuilder<boolean>[] = []): Promise<number> {
  // The read model's counts (per state and severity) answer a filter of status and severity alone.
  if (where.length === 0 && groupRollupServes(filter)) return rollupTotal(await controlRollup(db, scope, view.now), filter);
  let q = filtered(db, scope, filter, view);
  for (const condition of where) q = q.where(condition);
  const row = await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Page rows read whole, in the order of `ids`; a finding deleted between the two reads (its workspace gone) is left out. */
export async function findingsByIds(db: Kysely<Database>, scope: Scope, ids: string[], view: AcceptanceView) {
  const rows = ids.length ? await filtered(db, scope, { status: 'all', ids }, view).select(findingSelection(view)).execute() : [];
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

export interface ListedPage<T> {
  items: T[];
  total: number;
  /** The cursor of the next page; null on the last. */
  next_cursor: string | null;
}

/** The cursor a client sent to a list, decoded and checked (400 `invalid cursor`), or null. */
export function cursorOf(text: string | undefined, list: { name: string; sort: string; keys: SortKey[] }): Cursor | null {
  return text === undefined ? null : decodeCursor(text, list.name, list.sort, list.keys);
}

/**
 * A page read by keyset: after `cursor` when given, otherwise at the page's offset. One more row
 * than the page is read to know whether a next page exists.
 */
export async function pageOfKeys(
  db: Kysely<Database>,
  scope: Scope,
  filter: FindingFilter,
  view: AcceptanceView,
  list: { name: string; sort: string; keys: SortKey[] },
  page: PageRequest,
  cursor: Cursor | null,
  where?: RawBuilder<boolean>[],
): Promise<{ rows: KeysetRow[]; next_cursor: string | null }> {
  const rows = await keysetPage(db, scope, filter, view, { keys: list.keys, cursor, offset: cursor ? 0 : offsetOf(page), limit: page.perPage + 1, where });
  const more = rows.length > page.perPage;
  const shown = rows.slice(0, page.perPage);
  const last = shown.at(-1);
  return { rows: shown, next_cursor: more && last ? encodeCursor(list.name, list.sort, { values: last.values, id: last.id }) : null };
}

/**
 * A page of GET /findings and the total. The page is chosen without the texts (the findings view joins
 * them only when a text column is read), then its rows are read whole: joining every matching
 * finding to its text before the sort cost more than the sort itself.
 */
export async function listFindings(db: Kysely<Database>, scope: Scope, filter: FindingFilter, sort: string, page: PageRequest, now: Date, cursorText?: string) {
  const list = { name: 'findings', sort, keys: findingSortKeys(sort) };
  const cursor = cursorOf(cursorText, list);
  const view = await acceptanceView(db, scope, now);
  const [{ rows, next_cursor }, total] = await Promise.all([pageOfKeys(db, scope, filter, view, list, page, cursor), findingsTotal(db, scope, filter, view)]);
  const items = await findingsByIds(
    db,
    scope,
    rows.map((r) => r.id),
    view,
  );
  return { items, total, next_cursor };
}
