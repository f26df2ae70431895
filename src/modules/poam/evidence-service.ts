import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Selectable } from 'kysely';
import type { AppDeps } from '../../deps.js';
import type { Database } from '../../platform/db/schema.js';
import { inTenant, type Scope } from '../../platform/db/scope.js';
import type { RequestContext } from '../../platform/auth/actor.js';
import { auditInScope } from '../../platform/audit/audit-log.js';
import { ArtifactTooLargeError, type ArtifactStore } from '../../platform/artifacts/store.js';
import { badRequest, conflict, gone, notFound, payloadTooLarge, unavailable } from '../../platform/http/errors.js';
import { formatPoamId, parsePoamId } from './model.js';
import { appendComment, findRow } from './poam-repo.js';
import './tables.js';

type Deps = Pick<AppDeps, 'database' | 'clock' | 'artifacts' | 'log'>;

/** The spec's evidence upload limit (Limits: 50 MiB, multipart). */
export const MAX_EVIDENCE_BYTES = 50 * 1024 * 1024;

export interface EvidenceRecord {
  id: string;
  poam_id: string;
  filename: string;
  content_type: string;
  size_bytes: number;
  sha256: string;
  description: string | null;
  uploaded_by: string;
  created_at: string;
}

type EvidenceRow = Selectable<Database['poam_evidence']>;

function record(row: EvidenceRow): EvidenceRecord {
  return {
    id: row.id,
    poam_id: formatPoamId(row.number),
    filename: row.filename,
    content_type: row.content_type,
    size_bytes: Number(row.size_bytes),
    sha256: row.sha256,
    description: row.description,
    uploaded_by: row.uploaded_by,
    created_at: new Date(row.created_at).toISOString(),
  };
}

/** A file name safe to store and to send back in Content-Disposition (no path, no control characters). */
export function cleanFilename(name: string | undefined): string {
  const base = (name ?? '').split(/[\\/]/).pop() ?? '';
  const cleaned = base
    // eslint-disable-next-line no-control-regex -- control characters are what this removes
    .replace(/[\u0000-\u001f\u007f"]/g, '')
    .trim()
    .slice(0, 255);
  return cleaned || 'evidence';
}

export interface Upload {
  stream: Readable;
  filename?: string;
  contentType?: string;
  description?: string;
}

/**
 * Evidence files of POA&M items: uploaded through the artifact store (streamed, at most 50 MiB, with
 * its SHA-256), linked to the item, listed and downloaded. Closing an item needs at least one.
 */
export function createPoamEvidenceService(deps: Deps) {
  const db = deps.database.db;

  function store(): ArtifactStore {
    if (!deps.artifacts) throw unavailable('artifact storage not configured');
    return deps.artifacts;
  }

  async function itemNumber(scope: Scope, poamId: string): Promise<number> {
    const number = parsePoamId(poamId);
    const row = number === null ? undefined : await findRow(db, scope, number);
    if (!row) throw notFound('POA&M item not found');
    return row.number;
  }

  async function findEvidence(scope: Scope, poamId: string, evidenceId: string): Promise<EvidenceRow> {
    const number = await itemNumber(scope, poamId);
    const row = /^[0-9a-f-]{36}$/i.test(evidenceId)
      ? await db.selectFrom('poam_evidence').selectAll().where(inTenant(scope.tenantId)).where('number', '=', number).where('id', '=', evidenceId).executeTakeFirst()
      : undefined;
    if (!row) throw notFound('evidence not found');
    return row;
  }

  return {
    /** 404 before the body is read when the item does not exist; 503 without artifact storage. */
    async checkUploadTarget(scope: Scope, poamId: string): Promise<void> {
      store();
      const number = await itemNumber(scope, poamId);
      const row = await findRow(db, scope, number);
      if (row?.status === 'closed') throw conflict(`${formatPoamId(number)} is closed: its evidence cannot change`);
    },

    async upload(context: RequestContext, poamId: string, upload: Upload): Promise<EvidenceRecord> {
      const { scope } = context;
      const artifacts = store();
      const number = await itemNumber(scope, poamId);
      const description = upload.description?.trim() || null;
      if (description && description.length > 4000) throw badRequest('description must be at most 4000 characters');
      const id = randomUUID();
      const key = `tenants/${scope.tenantId}/poam/${number}/${id}`;
      const contentType = upload.contentType?.slice(0, 200) || 'application/octet-stream';
      let stored;
      try {
        stored = await artifacts.put(key, upload.stream, { contentType, maxBytes: MAX_EVIDENCE_BYTES });
      } catch (error) {
        await artifacts.delete(key).catch(() => undefined);
        if (error instanceof ArtifactTooLargeError || (error as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') {
          throw payloadTooLarge(`evidence exceeds ${MAX_EVIDENCE_BYTES} bytes (50 MiB)`, { max_bytes: MAX_EVIDENCE_BYTES });
        }
        throw error;
      }
      if (stored.size === 0) {
        await artifacts.delete(key);
        throw badRequest('the evidence file is empty');
      }
      const now = deps.clock.now();
      try {
        const row = await db.transaction().execute(async (trx) => {
          const item = await findRow(trx, scope, number, true);
          if (!item) throw notFound('POA&M item not found');
          if (item.status === 'closed') throw conflict(`${formatPoamId(number)} is closed: its evidence cannot change`);
          const filename = cleanFilename(upload.filename);
          const inserted = await trx
            .insertInto('poam_evidence')
            .values({
              id,
              tenant_id: scope.tenantId,
              number,
              filename,
              content_type: contentType,
              size_bytes: stored.size,
              sha256: stored.sha256,
              storage_key: key,
              description,
              uploaded_by: context.actor.name,
              created_at: now,
            })
            .returningAll()
            .executeTakeFirstOrThrow();
          await trx.updateTable('poam_items').set({ updated_at: now }).where(inTenant(scope.tenantId)).where('number', '=', number).execute();
          await appendComment(trx, scope.tenantId, number, { author: context.actor.name, text: `Evidence attached: ${filename} (sha256 ${stored.sha256})`, at: now });
          await auditInScope(trx, deps.clock, context, {
            action: 'poam.evidence_attached',
            targetType: 'poam_item',
            targetId: formatPoamId(number),
            details: { evidence_id: id, filename, size_bytes: stored.size, sha256: stored.sha256 },
          });
          return inserted;
        });
        return record(row);
      } catch (error) {
        // The row did not commit: the file has no owner.
        await artifacts.delete(key).catch(() => undefined);
        throw error;
      }
    },

    async list(scope: Scope, poamId: string): Promise<{ items: EvidenceRecord[] }> {
      const number = await itemNumber(scope, poamId);
      const rows = await db.selectFrom('poam_evidence').selectAll().where(inTenant(scope.tenantId)).where('number', '=', number).orderBy('created_at').orderBy('id').execute();
      return { items: rows.map(record) };
    },

    async get(scope: Scope, poamId: string, evidenceId: string): Promise<EvidenceRecord> {
      return record(await findEvidence(scope, poamId, evidenceId));
    },

    async download(scope: Scope, poamId: string, evidenceId: string): Promise<{ record: EvidenceRecord; stream: Readable }> {
      const artifacts = store();
      const row = await findEvidence(scope, poamId, evidenceId);
      const stream = await artifacts.get(row.storage_key);
      if (!stream) throw gone('the evidence file is missing from artifact storage');
      return { record: record(row), stream };
    },

    async remove(context: RequestContext, poamId: string, evidenceId: string): Promise<EvidenceRecord> {
      const { scope } = context;
      const artifacts = store();
      const now = deps.clock.now();
      const found = await findEvidence(scope, poamId, evidenceId);
      const row = await db.transaction().execute(async (trx) => {
        const item = await findRow(trx, scope, found.number, true);
        if (!item) throw notFound('POA&M item not found');
        if (item.status === 'closed') throw conflict(`${formatPoamId(item.number)} is closed: its evidence cannot change`);
        const deleted = await trx.deleteFrom('poam_evidence').where('id', '=', found.id).where(inTenant(scope.tenantId)).returningAll().executeTakeFirst();
        if (!deleted) throw notFound('evidence not found');
        await trx.updateTable('poam_items').set({ updated_at: now }).where(inTenant(scope.tenantId)).where('number', '=', item.number).execute();
        await appendComment(trx, scope.tenantId, item.number, { author: context.actor.name, text: `Evidence removed: ${deleted.filename}`, at: now });
        await auditInScope(trx, deps.clock, context, {
          action: 'poam.evidence_removed',
          targetType: 'poam_item',
          targetId: formatPoamId(item.number),
          details: { evidence_id: deleted.id, filename: deleted.filename, sha256: deleted.sha256 },
        });
        return deleted;
      });
      await artifacts.delete(row.storage_key).catch((error: unknown) => deps.log.warn({ err: error, key: row.storage_key }, 'evidence file not deleted'));
      return record(row);
    },

    /** Files of deleted items (after their rows are gone). */
    async deleteFiles(keys: string[]): Promise<void> {
      if (!deps.artifacts) return;
      for (const key of keys) await deps.artifacts.delete(key).catch((error: unknown) => deps.log.warn({ err: error, key }, 'evidence file not deleted'));
    },
  };
}
