/**
 * Within this many days of its expiry an attestation is "expiring soon" (the spec's 7-day stage:
 * "urgent alert, score shows expiring soon"), in /controls/status and /controls/attestations alike.
 * A leaf of its own: control-statuses.ts reads it while loading, and control-state.ts, through the
 * agents module it imports, can be mid-load when that happens.
 */
export const EXPIRING_SOON_DAYS = 7;
