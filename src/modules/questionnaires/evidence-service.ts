import { randomUUID } from 'node:crypto';
import { basename } from 'node:path';
import type { Multipart } from '@fastify/multipart';
import type { AppDeps } from '../../deps.js';
import type { ArtifactStore } from '../../platform/artifacts/index.js';
import { ArtifactTooLargeError } from '../../platform/artifacts/store.js';
import { inScope, type Scope } from '../../platform/db/scope.js';
import { writeAudit } from '../../platform/audit/audit-log.js';
import { AppError, badRequest, notFound, payloadTooLarge, unavailable } from '../../platform/http/errors.js';
import { discardPart } from '../../platform/http/multipart.js';
import { offsetOf, toPage, type PageRequest } from '../../platform/http/pagination.js';
import { assertAnswerable, loadAssessment, type Respondent } from './assessment-service.js';
import { presentEvidence } from './assessment-view.js';
import { checkContentType, extensionOf, SignatureCheck, SignatureMismatchError } from './file-types.js';
import type { Question } from './questions.js';
import { UUID_PATTERN } from '../../platform/http/schemas.js';

type Deps = Pick<AppDeps, 'database' | 'clock' | 'artifacts'>;

/** The spec's evidence upload limit: 50 MiB. */
export const MAX_EVIDENCE_BYTES = 50 * 1024 * 1024;

export function requireStore(deps: Pick<AppDeps, 'artifacts'>): ArtifactStore {
  if (!deps.artifacts) throw unavailable('artifact storage not configured');
  return deps.artifacts;
}

/** A file name safe to record and to send back in Content-Disposition: no path, no control characters. */
function cleanFilename(raw: string | undefined): string {
  const name = [...basename((raw ?? '').replace(/\\/g, '/'))]
    .filter((ch) => ch.charCodeAt(0) >= 0x20 && ch.charCodeAt(0) !== 0x7f)
    .join('')
    .trim();
  return name.slice(-255);
}

// eslint-disable-next-line max-lines-per-function -- a service factory whose methods share its closure; each method is short, and moving them out is a follow-up of issue 26 not done in time
export function createQuestionnaireEvidenceService(deps: Deps) {
  const db = deps.database.db;

  /** The assessment and question a file is for, and whether the caller may add it (before reading any byte). */
  async function target(respondent: Respondent, fields: Map<string, string>) {
    const assessmentId = fields.get('assessment_id');
    const questionId = fields.get('question_id');
    if (!assessmentId || !questionId) throw badRequest('the fields assessment_id and question_id must come before the file part');
    if (!UUID_PATTERN.test(assessmentId)) throw badRequest('assessment_id must be a UUID');
    const assessment = await loadAssessment(db, respondent.scope, assessmentId);
    respondent.authorize(assessment);
    assertAnswerable(assessment);
    const q = await db.selectFrom('questionnaires').select('questions').where('id', '=', assessment.questionnaire_id).executeTakeFirstOrThrow();
    const question: Question | undefined = q.questions.find((x) => x.id === questionId);
    if (!question) throw badRequest(`question "${questionId}" is not in this assessment's questionnaire`);
    if (question.type !== 'file_upload') throw badRequest(`question "${questionId}" is not a file_upload question`);
    return { assessment, question };
  }

  return {
    /**
     * multipart/form-data: fields assessment_id, question_id (and optional description) first, then
     * one file part. The file streams to the artifact store through a SHA-256 meter that stops at
     * 50 MiB (413, and nothing is kept); its extension must be in the question's accepted_types, its
     * declared content type must fit the extension, and its first bytes the format's signature.
     */
    async upload(respondent: Respondent, parts: AsyncIterableIterator<Multipart>, preset: Record<string, string> = {}) {
      const store = requireStore(deps);
      const { scope } = respondent;
      const fields = new Map<string, string>();
      let stored: {
        id: string;
        key: string;
        size: number;
        sha256: string;
        filename: string;
        extension: string;
        contentType: string;
        questionId: string;
        assessmentId: string;
      } | null = null;
      try {
        for await (const part of parts) {
          if (part.type === 'field') {
            if (typeof part.value !== 'string') throw badRequest(`field ${part.fieldname} must be text`);
            if (part.valueTruncated) throw badRequest(`field ${part.fieldname} is too long`);
            if (!(part.fieldname in preset)) fields.set(part.fieldname, part.value.trim());
            continue;
          }
          if (stored) {
            await discardPart(part.file);
            throw badRequest('one file per upload');
          }
          let checked;
          try {
            checked = await target(respondent, new Map([...fields, ...Object.entries(preset)]));
          } catch (error) {
            await discardPart(part.file);
            throw error;
          }
          const { assessment, question } = checked;
          const filename = cleanFilename(part.filename);
          const extension = extensionOf(filename);
          const accepted = question.accepted_types ?? [];
          if (!filename || !accepted.includes(extension)) {
            await discardPart(part.file);
            throw badRequest(`file type "${extension || filename || '(none)'}" is not accepted for question "${question.id}" (accepted: ${accepted.join(', ')})`);
          }
          const type = checkContentType(extension, part.mimetype);
          if (!type.ok) {
            await discardPart(part.file);
            throw badRequest(`content type "${part.mimetype}" does not match a ${extension} file`);
          }
          const id = randomUUID();
          const key = `tenants/${scope.tenantId}/attestation-evidence/${id}`;
          const checkedBytes = new SignatureCheck(extension);
          part.file.once('error', (error) => checkedBytes.destroy(error));
          // A mismatch can show before the store's pipeline listens; the pipeline still sees it (errored stream).
          checkedBytes.on('error', () => undefined);
          try {
            const result = await store.put(key, part.file.pipe(checkedBytes), { contentType: type.contentType, maxBytes: MAX_EVIDENCE_BYTES });
            if (part.file.truncated) throw new ArtifactTooLargeError(MAX_EVIDENCE_BYTES);
            stored = {
              id,
              key,
              size: result.size,
              sha256: result.sha256,
              filename,
              extension,
              contentType: type.contentType,
              questionId: question.id,
              assessmentId: assessment.id,
            };
          } catch (error) {
            await store.delete(key).catch(() => undefined);
            // Read (and drop) the rest, so the client receives the answer after sending its body.
            await discardPart(part.file);
            if (error instanceof ArtifactTooLargeError || (error as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') {
              throw payloadTooLarge(`evidence file exceeds the ${MAX_EVIDENCE_BYTES / 1024 / 1024} MiB limit`, { max_bytes: MAX_EVIDENCE_BYTES });
            }
            if (error instanceof SignatureMismatchError) throw badRequest(error.message);
            throw error;
          }
        }
        if (!stored) throw badRequest('no file part in the upload (multipart field "file")');
        const description = (fields.get('description') ?? '').slice(0, 2000);
        const file = stored;
        const now = deps.clock.now();
        const row = await db.transaction().execute(async (trx) => {
          // The assessment may have been submitted while the file streamed.
          const assessment = await loadAssessment(trx, scope, file.assessmentId, true);
          respondent.authorize(assessment);
          assertAnswerable(assessment);
          const inserted = await trx
            .insertInto('attestation_evidence')
            .values({
              id: file.id,
              tenant_id: scope.tenantId,
              workspace_id: scope.workspaceId,
              assessment_id: file.assessmentId,
              question_id: file.questionId,
              filename: file.filename,
              extension: file.extension,
              content_type: file.contentType,
              size_bytes: file.size,
              sha256: file.sha256,
              storage_key: file.key,
              description,
              uploaded_by: respondent.userId,
              uploaded_by_name: respondent.name,
              created_at: now,
            })
            .returningAll()
            .executeTakeFirstOrThrow();
          await writeAudit(trx, deps.clock, respondent.audit, {
            tenantId: scope.tenantId,
            workspaceId: scope.workspaceId,
            action: 'attestation_evidence.uploaded',
            targetType: 'attestation_evidence',
            targetId: file.id,
            details: { assessment_id: file.assessmentId, question_id: file.questionId, filename: file.filename, size_bytes: file.size, sha256: file.sha256 },
          });
          return inserted;
        });
        return presentEvidence(row, scope.tenantId);
      } catch (error) {
        if (stored) await store.delete(stored.key).catch(() => undefined);
        // The multipart parser's own limits (parts, fields, files) carry a 413 or 400 status.
        const status = (error as { statusCode?: number }).statusCode;
        if (!(error instanceof AppError) && status === 413) throw payloadTooLarge('upload exceeds the multipart limits (one file, a few fields)');
        throw error;
      }
    },

    async list(scope: Scope, filter: { assessment_id?: string; question_id?: string }, page: PageRequest) {
      requireStore(deps);
      let base = db.selectFrom('attestation_evidence').where(inScope(scope));
      if (filter.assessment_id) base = base.where('assessment_id', '=', filter.assessment_id);
      if (filter.question_id) base = base.where('question_id', '=', filter.question_id);
      const [rows, count] = await Promise.all([
        base.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.perPage).offset(offsetOf(page)).execute(),
        base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return toPage(
        rows.map((r) => presentEvidence(r, scope.tenantId)),
        Number(count.n),
        page,
      );
    },

    async get(scope: Scope, id: string) {
      requireStore(deps);
      const row = await db.selectFrom('attestation_evidence').selectAll().where(inScope(scope)).where('id', '=', id).executeTakeFirst();
      if (!row) throw notFound('attestation evidence not found');
      return row;
    },

    async open(scope: Scope, id: string) {
      const store = requireStore(deps);
      const row = await this.get(scope, id);
      const stream = await store.get(row.storage_key);
      if (!stream) throw notFound('the evidence file is missing from artifact storage');
      return { row, stream };
    },
  };
}
