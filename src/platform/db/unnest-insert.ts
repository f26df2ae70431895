import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';

/** A PostgreSQL type name as written in a cast (no user input ever reaches it). */
export type ColumnType = 'text' | 'uuid' | 'jsonb' | 'timestamptz' | 'integer';

export interface UnnestInsert {
  table: keyof Database & string;
  /** Columns that vary per row, with their type: each is sent as one array parameter. */
  columns: Record<string, ColumnType>;
  /** Columns with one value for every row: sent once as a scalar parameter. */
  constants?: Record<string, { type: ColumnType; value: unknown }>;
  rows: Array<Record<string, unknown>>;
  /** Rows conflicting on these columns (a unique index) are skipped: ON CONFLICT (...) DO NOTHING. */
  onConflictDoNothing?: string[];
}

/**
 * Inserts many rows as `INSERT ... SELECT FROM unnest($1::type[], ...)`: one array parameter per
 * column instead of one parameter per cell. The server parses one statement shape whatever the row
 * count, and the driver serialises far fewer values than a multi-row VALUES list (several times
 * faster for wide rows such as findings). jsonb values travel as text and are cast on the server.
 * Array-typed columns are left out of ColumnType on purpose: unnest would flatten them.
 */
export async function unnestInsert(db: Kysely<Database>, insert: UnnestInsert): Promise<void> {
  if (insert.rows.length === 0) return;
  const names = Object.keys(insert.columns);
  const constants = Object.entries(insert.constants ?? {});
  const arrays = names.map((name) => {
    const type = insert.columns[name]!;
    const values = insert.rows.map((row) => {
      const value = row[name];
      return type === 'jsonb' && value !== null && value !== undefined && typeof value !== 'string' ? JSON.stringify(value) : value;
    });
    // jsonb travels as text[]: the driver sends it as an array literal and the server casts each element.
    const arrayType = type === 'jsonb' ? 'text' : type;
    return sql`${values}::${sql.raw(`${arrayType}[]`)}`;
  });
  const selected = [
    ...names.map((name, i) => (insert.columns[name] === 'jsonb' ? sql.raw(`u.c${i}::jsonb`) : sql.raw(`u.c${i}`))),
    ...constants.map(([, c]) => sql`${c.value}::${sql.raw(c.type)}`),
  ];
  const columnList = [...names, ...constants.map(([name]) => name)].map((name) => sql.ref(name));
  const aliases = sql.raw(names.map((_, i) => `c${i}`).join(', '));
  const conflict = insert.onConflictDoNothing ? sql` ON CONFLICT (${sql.join(insert.onConflictDoNothing.map((name) => sql.ref(name)))}) DO NOTHING` : sql``;
  await sql`INSERT INTO ${sql.table(insert.table)} (${sql.join(columnList)})
    SELECT ${sql.join(selected)} FROM unnest(${sql.join(arrays)}) AS u(${aliases})${conflict}`.execute(db);
}
