import { badRequest } from '../../../platform/http/errors.js';

/**
 * Keyset paging of findings lists (issue 23 item 2). A cursor names the last row of a page by the
 * values of its sort keys and its id; the next page is the rows after it in the sort order. Unlike an
 * offset, it does not move when findings are inserted or removed before it: a client paging with
 * cursors while an audit writes sees every finding that existed when it started exactly once (as
 * long as the finding's sort key does not change meanwhile).
 *
 * The cursor is opaque to clients: base64url of JSON `[list, sort, ...key values, id]`. `list` tells
 * the lists apart (a cursor of /findings/scored is no cursor of /findings).
 */

export type KeyKind = 'rank' | 'score' | 'time' | 'text';

/** One sort key: the column of `findings as f`, its direction and what its values are. */
export interface SortKey {
  column: string;
  desc: boolean;
  kind: KeyKind;
}

export type KeyValue = number | string;

export interface Cursor {
  values: KeyValue[];
  id: string;
}

/**
 * The keys of a sort of GET /findings, in order; the id always breaks ties, ascending. Severity
 * breaks its own ties by created_at descending in both directions (newest first within a severity).
 */
export function findingSortKeys(sort: string): SortKey[] {
  const desc = sort.startsWith('-');
  const name = sort.replace(/^-/, '');
  if (name === 'severity')
    return [
      { column: 'severity_rank', desc, kind: 'rank' },
      { column: 'created_at', desc: true, kind: 'time' },
    ];
  if (name === 'resource_id') return [{ column: 'resource_id', desc, kind: 'text' }];
  return [{ column: name, desc, kind: 'time' }];
}

/** The order of GET /findings/scored: the stored score, newest first, then the id. */
export const SCORED_KEYS: SortKey[] = [
  { column: 'risk_score', desc: true, kind: 'score' },
  { column: 'created_at', desc: true, kind: 'time' },
];

export function encodeCursor(list: string, sort: string, cursor: Cursor): string {
  return Buffer.from(JSON.stringify([list, sort, ...cursor.values, cursor.id]), 'utf8').toString('base64url');
}

const invalid = () => badRequest('invalid cursor');
const MAX_CURSOR = 4096;

function validValue(kind: KeyKind, value: unknown): value is KeyValue {
  switch (kind) {
    case 'rank':
      return Number.isInteger(value) && (value as number) >= 1 && (value as number) <= 5;
    case 'score':
      return Number.isInteger(value) && (value as number) >= 0 && (value as number) <= 100;
    case 'time':
      return typeof value === 'string' && value.length <= 64 && /^\d{4}-\d\d-\d\d[ T][0-9:.+\-Z ]+$/.test(value) && !Number.isNaN(Date.parse(value.replace(' ', 'T')));
    case 'text':
      return typeof value === 'string' && value.length <= 2000;
  }
}

/** The cursor given to a list with these keys, or 400 `invalid cursor` for anything else. */
export function decodeCursor(text: string, list: string, sort: string, keys: SortKey[]): Cursor {
  if (text.length === 0 || text.length > MAX_CURSOR || !/^[A-Za-z0-9_-]+$/.test(text)) throw invalid();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(parsed) || parsed.length !== keys.length + 3 || parsed[0] !== list || parsed[1] !== sort) throw invalid();
  const values = parsed.slice(2, 2 + keys.length);
  const id = parsed[parsed.length - 1];
  if (typeof id !== 'string' || id.length === 0 || id.length > 2000) throw invalid();
  if (!keys.every((k, i) => validValue(k.kind, values[i]))) throw invalid();
  return { values: values as KeyValue[], id };
}

/**
 * The cursor of a request, refusing one sent with `page` (400): the cursor says where the page
 * starts. `page` is read from the URL, since the query schema fills in its default.
 */
export function requestCursor(url: string, cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  const at = url.indexOf('?');
  if (at >= 0 && new URLSearchParams(url.slice(at + 1)).has('page')) throw badRequest('cursor and page cannot be used together');
  return cursor;
}
