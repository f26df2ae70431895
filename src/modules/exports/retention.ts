import type { AppDeps } from '../../deps.js';

export const RETENTION_JOB = 'exports.retention';
const BATCH = 500;

/**
 * Deletes the files of exports and reports whose retention ended and marks them expired (downloads
 * already answer 410 from expires_at on; this frees the storage). Returns how many were expired.
 */
export async function sweepRetention(deps: Pick<AppDeps, 'database' | 'clock' | 'artifacts' | 'log'>): Promise<{ exports: number; reports: number }> {
  const db = deps.database.db;
  const now = deps.clock.now();
  const counts = { exports: 0, reports: 0 };
  for (const table of ['exports', 'reports'] as const) {
    for (;;) {
      const due = await db
        .selectFrom(table)
        .select(['id', 'artifact_key'])
        .where('status', '=', 'succeeded')
        .where('expires_at', '<=', now)
        .orderBy('expires_at')
        .limit(BATCH)
        .execute();
      for (const row of due) {
        // The file first: a crash in between leaves a row that the next sweep expires again.
        if (row.artifact_key && deps.artifacts) await deps.artifacts.delete(row.artifact_key);
        await db.updateTable(table).set({ status: 'expired', expired_at: now }).where('id', '=', row.id).where('status', '=', 'succeeded').execute();
        counts[table]++;
      }
      if (due.length < BATCH) break;
    }
  }
  if (counts.exports || counts.reports) deps.log.info(counts, 'expired exports and reports deleted');
  return counts;
}

export const ABANDONED_UPLOADS_JOB = 'artifacts.sweep-abandoned';
/** An upload untouched this long is not in progress any more (writers write continuously). */
export const ABANDONED_AFTER_MS = 3_600_000;

/** Removes the temporary files of uploads whose worker died mid-write (an export, a report, evidence). */
export async function sweepAbandonedUploads(deps: Pick<AppDeps, 'clock' | 'artifacts' | 'log'>): Promise<{ removed: number }> {
  const removed = deps.artifacts ? await deps.artifacts.sweepAbandoned(deps.clock.now(), ABANDONED_AFTER_MS) : 0;
  if (removed) deps.log.info({ removed }, 'abandoned partial uploads deleted');
  return { removed };
}
