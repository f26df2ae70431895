import type { Selectable } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import './tables.js';

export type AcceptanceRow = Selectable<Database['risk_acceptances']>;
export type AcceptanceState = 'active' | 'partial' | 'expired' | 'revoked';

/**
 * The state of an acceptance at `now`, computed on read so expiry applies at the exact moment:
 * revoked (DELETE), expired (expires_at passed), partial (a live group acceptance whose group has
 * open findings that appeared after it was accepted: they are not covered), or active.
 */
export function stateOf(row: AcceptanceRow, now: Date, uncoveredInGroup: number): AcceptanceState {
  if (row.revoked_at) return 'revoked';
  if (new Date(row.expires_at) <= now) return 'expired';
  if (row.scope === 'group' && uncoveredInGroup > 0) return 'partial';
  return 'active';
}

/**
 * Orphaned: a live acceptance none of whose snapshot findings is still open (all resolved or
 * deleted), so it no longer covers anything; worth revoking or letting expire.
 */
export function isOrphaned(row: AcceptanceRow, now: Date, openCovered: number): boolean {
  return !row.revoked_at && new Date(row.expires_at) > now && openCovered === 0;
}

export const MAX_ACCEPTANCE_DAYS = 365;
