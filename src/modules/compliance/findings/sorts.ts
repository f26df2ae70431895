/**
 * The orders GET /findings offers. A leaf of its own: the request schemas read it, and importing it
 * from the findings repository pulled the risk module's index (and through it this module's) into
 * the schemas' load order, so `FINDING_SORTS` was read before it was initialised.
 */
export const FINDING_SORTS = ['severity', 'created_at', 'resource_id', 'last_seen', 'first_seen'] as const;
