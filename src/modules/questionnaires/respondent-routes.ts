import multipart from '@fastify/multipart';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RoutePlugin } from '../module.js';
import { badRequest } from '../../platform/http/errors.js';
import { offsetOf, pageRequest, toPage } from '../../platform/http/pagination.js';
import { withErrors } from '../../platform/http/schemas.js';
import { createAssessmentService } from './assessment-service.js';
import { createQuestionnaireEvidenceService, MAX_EVIDENCE_BYTES, requireStore } from './evidence-service.js';
import { createRespondentLinks } from './respondent-links.js';
import { createRespondentRateLimit } from './respondent-rate-limit.js';
import { RespondentAssessment, RespondentEvidence, RespondentEvidenceList, RespondentEvidenceQuery, RespondentUploadForm } from './respondent-schemas.js';
import { respondentAssessment, respondentEvidence } from './respondent-view.js';
import { assessmentIn } from './localize.js';
import { LangQuery, RespondBody } from './schemas.js';
import { negotiateLanguage } from './templates.js';

/**
 * The outside respondent's side: the one assessment of a link, answered, submitted and given its
 * files, with the link's token as the only credential. The routes are public to the authenticator
 * (no account, no tenant in the path) and resolve the token themselves before anything else.
 *
 * The token travels in the Authorization header (`Bearer cgr_…`), never in a path or query: URLs end
 * up in request logs, proxies and browser history. The link mailed or copied puts it in the URL's
 * fragment (`/respond#cgr_…`), which browsers never send; the console reads it from there.
 */
const tokenOf = (request: FastifyRequest): string | null => {
  const header = request.headers.authorization;
  if (!header) return null;
  const match = /^Bearer[ ]+(\S+)$/i.exec(header);
  return match ? match[1]! : '';
};

export const respondentRoutes: RoutePlugin = async (app, { deps }) => {
  await app.register(multipart, { limits: { fileSize: MAX_EVIDENCE_BYTES + 1, files: 1, fields: 10, fieldSize: 10_000, parts: 12 } });
  const links = createRespondentLinks(deps);
  const assessments = createAssessmentService(deps);
  const evidence = createQuestionnaireEvidenceService(deps);
  const db = deps.database.db;
  const tags = ['respondent'];
  // What a respondent reads holds their answers: no cache keeps it.
  app.addHook('onSend', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
  });

  // The token is checked first, before the body is parsed or a byte of a file is read.
  const resolved = new WeakMap<FastifyRequest, Awaited<ReturnType<typeof links.resolve>>>();
  const limit = createRespondentRateLimit(deps);
  app.addHook('onRequest', async (request, reply) => {
    const token = tokenOf(request);
    await limit(request, reply, token);
    resolved.set(request, await links.resolve(token, { ip: request.ip, requestId: request.id }));
  });
  const resolve = async (request: FastifyRequest) => resolved.get(request)!;
  const statuses = [401, 404, 429];
  // The respondent reads the questionnaire in the language of ?lang= or Accept-Language where its template has it.
  const shown = async (
    request: { query: { lang?: string }; headers: FastifyRequest['headers'] },
    reply: FastifyReply,
    full: Awaited<ReturnType<typeof assessments.get>>,
    link: Parameters<typeof respondentAssessment>[1],
  ) => {
    const served = await assessmentIn(db, full, negotiateLanguage(request.query.lang, request.headers['accept-language']));
    reply.header('content-language', served.lang);
    return respondentAssessment(served, link);
  };

  app.get(
    '/respond/assessment',
    {
      // The link's token is the credential (Authorization: Bearer cgr_…), checked by the handler.
      config: { public: true },
      schema: {
        operationId: 'respondentGetAssessment',
        tags,
        summary: "The outside respondent's assessment (link token as bearer): questions, answers, files, change requests",
        description: '401 UNAUTHORIZED without a token or for an unknown one; 401 LINK_REVOKED or LINK_EXPIRED once the link ended.',
        querystring: LangQuery,
        response: withErrors({ 200: RespondentAssessment }, statuses),
      },
    },
    async (request, reply) => {
      const { link, respondent } = await resolve(request);
      await links.recordAccess(link, { ip: request.ip, requestId: request.id }, 'assessment');
      return shown(request, reply, await assessments.get(respondent.scope, link.assessment_id), link);
    },
  );

  app.post(
    '/respond/assessment/responses',
    {
      config: { public: true },
      schema: {
        operationId: 'respondentRespond',
        tags,
        summary: 'Save answers incrementally, as POST /assessments/{aID}/respond does for the assignee',
        description: 'The same checks: 400 with details.errors for answers not fitting their question; 400 once submitted or approved.',
        body: RespondBody,
        querystring: LangQuery,
        response: withErrors({ 200: RespondentAssessment }, statuses),
      },
    },
    async (request, reply) => {
      const { link, respondent } = await resolve(request);
      return shown(request, reply, await assessments.respondAs(respondent, link.assessment_id, request.body.responses), link);
    },
  );

  app.post(
    '/respond/assessment/submit',
    {
      config: { public: true, bodyless: true },
      schema: {
        operationId: 'respondentSubmit',
        tags,
        summary: 'Submit the assessment for review; read-only afterwards',
        description: '400 with details.missing when required questions are unanswered; 409 when already submitted or approved.',
        querystring: LangQuery,
        response: withErrors({ 200: RespondentAssessment }, [...statuses, 409]),
      },
    },
    async (request, reply) => {
      const { link, respondent } = await resolve(request);
      return shown(request, reply, await assessments.submitAs(respondent, link.assessment_id), link);
    },
  );

  app.get(
    '/respond/evidence',
    {
      config: { public: true },
      schema: {
        operationId: 'respondentListEvidence',
        tags,
        summary: "Files uploaded to the link's assessment, newest first",
        querystring: RespondentEvidenceQuery,
        response: withErrors({ 200: RespondentEvidenceList }, [...statuses, 503]),
      },
    },
    async (request) => {
      const { link } = await resolve(request);
      requireStore(deps);
      await links.recordAccess(link, { ip: request.ip, requestId: request.id }, 'evidence');
      const page = pageRequest(request.query);
      let base = db.selectFrom('attestation_evidence').where('assessment_id', '=', link.assessment_id);
      if (request.query.question_id) base = base.where('question_id', '=', request.query.question_id);
      const [rows, count] = await Promise.all([
        base.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.perPage).offset(offsetOf(page)).execute(),
        base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return toPage(rows.map(respondentEvidence), Number(count.n), page);
    },
  );

  app.post(
    '/respond/evidence',
    {
      config: { public: true, rawBody: true },
      preValidation: async (request) => {
        request.body = {};
      },
      schema: {
        operationId: 'respondentUploadEvidence',
        tags,
        summary: "Upload a file for a file_upload question of the link's assessment (multipart, at most 50 MiB)",
        description:
          'multipart/form-data with question_id (and optional description) before the file part; the same checks as POST /attestation-evidence: 413 above 50 MiB, 400 for a type not accepted or content not fitting it, or once submitted or approved; 503 without artifact storage.',
        consumes: ['multipart/form-data'],
        body: RespondentUploadForm,
        response: withErrors({ 201: RespondentEvidence }, [...statuses, 413, 503]),
      },
    },
    async (request, reply) => {
      const { link, respondent } = await resolve(request);
      requireStore(deps);
      if (!request.isMultipart()) throw badRequest('expected a multipart/form-data upload');
      const record = await evidence.upload(respondent, request.parts(), { assessment_id: link.assessment_id });
      return reply.status(201).send(respondentEvidence(record));
    },
  );
};
