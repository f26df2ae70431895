import type { Kysely, Selectable } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import './tables.js';

/**
 * An export and a report are each a row that follows the job building its file (queued, running,
 * succeeded or failed). The two jobs move their rows through these states with the same statements,
 * kept here so a retried or deleted row behaves the same in both.
 */
type ArtifactTable = 'exports' | 'reports';

/** The stored file a succeeded row points to. */
export interface ArtifactFile {
  artifact_key: string;
  size_bytes: number;
  content_type: string;
  file_name: string;
}

/**
 * Marks the row running under the job's attempt (a retry takes over a row left running by a dead
 * worker). Undefined when the row was deleted meanwhile: the job then has nothing to build.
 */
export async function startArtifactRow<T extends ArtifactTable>(
  db: Kysely<Database>,
  table: T,
  job: { id: string; attempts: number },
  now: Date,
): Promise<Selectable<Database[T]> | undefined> {
  // Kysely cannot type an update of a table picked by a type parameter; both tables share these columns.
  const row: unknown = await (db as unknown as Kysely<any>)
    .updateTable(table as string)
    .set({ status: 'running', started_at: now, attempts: job.attempts, error: null })
    .where('id', '=', job.id)
    .where('status', 'in', ['queued', 'running'])
    .returningAll()
    .executeTakeFirst();
  return row as Selectable<Database[T]> | undefined;
}

/** The columns of a row whose file is stored, kept until `expiresAt`. */
export function succeededColumns(attempts: number, file: ArtifactFile, finishedAt: Date, expiresAt: Date) {
  return {
    status: 'succeeded' as const,
    attempts,
    artifact_key: file.artifact_key,
    size_bytes: file.size_bytes,
    content_type: file.content_type,
    file_name: file.file_name,
    finished_at: finishedAt,
    expires_at: expiresAt,
    error: null,
  };
}
