import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RoutePlugin } from '../module.js';
import { contextOf } from '../../platform/auth/authenticator.js';
import { pageRequest } from '../../platform/http/pagination.js';
import { TenantParams, withErrors } from '../../platform/http/schemas.js';
import { createAssessmentService } from './assessment-service.js';
import { createAttestationService } from './attestation-service.js';
import { createGeneratePoam } from './generate-poam.js';
import { assessmentIn } from './localize.js';
import { negotiateLanguage } from './templates.js';
import {
  AliasReviewBody,
  Assessment,
  AssessmentList,
  AssessmentListQuery,
  AssessmentParams,
  ControlAttestationList,
  ControlAttestationQuery,
  GeneratePoamBody,
  GeneratePoamResult,
  LangQuery,
  MineQuery,
  PageOnlyQuery,
  RespondBody,
  ReviewBody,
} from './schemas.js';

/** A body that may be left out entirely: it is then an empty object. */
async function optionalBody(request: FastifyRequest) {
  if (request.body === undefined || request.body === null) request.body = {};
}

/** Assessments (assigned instances), their answers and reviews, POA&M items from them, and control attestation status. */
// eslint-disable-next-line max-lines-per-function -- the module's route table, one short handler per route; splitting it into <thing>-routes.ts files is a follow-up of issue 26 not done in time
export const assessmentRoutes: RoutePlugin = async (app, { deps }) => {
  const assessments = createAssessmentService(deps);
  const attestations = createAttestationService(deps);
  const generatePoam = createGeneratePoam(deps);
  const tags = ['assessments'];
  // An assessment is returned in the language of ?lang= or Accept-Language where its template has it.
  const inLanguage = async <T extends Parameters<typeof assessmentIn>[1]>(
    request: { query: { lang?: string }; headers: FastifyRequest['headers'] },
    reply: FastifyReply,
    full: T,
  ) => {
    const served = await assessmentIn(deps.database.db, full, negotiateLanguage(request.query.lang, request.headers['accept-language']));
    reply.header('content-language', served.lang);
    return served;
  };

  app.get(
    '/tenants/:tenantID/assessments',
    {
      config: { permission: 'assessment:read' },
      schema: {
        operationId: 'listAssessments',
        tags,
        summary: 'Assessments of the workspace, newest first',
        params: TenantParams,
        querystring: AssessmentListQuery,
        response: withErrors({ 200: AssessmentList }, [401, 403]),
      },
    },
    async (request) => {
      const { page, per_page, ...filter } = request.query;
      return assessments.list(contextOf(request).scope, filter, pageRequest({ page, per_page }));
    },
  );

  app.get(
    '/tenants/:tenantID/assessments/mine',
    {
      config: { permission: 'assessment:read' },
      schema: {
        operationId: 'listMyAssessments',
        tags,
        summary: "The respondent view: the caller's own assessments, newest first",
        params: TenantParams,
        querystring: MineQuery,
        response: withErrors({ 200: AssessmentList }, [401, 403]),
      },
    },
    async (request) => {
      const { page, per_page, ...filter } = request.query;
      return assessments.mine(contextOf(request), filter, pageRequest({ page, per_page }));
    },
  );

  app.get(
    '/tenants/:tenantID/assessments/review-queue',
    {
      config: { permission: 'assessment:review' },
      schema: {
        operationId: 'assessmentReviewQueue',
        tags,
        summary: 'Submitted assessments the caller may review (never their own), oldest submission first',
        params: TenantParams,
        querystring: PageOnlyQuery,
        response: withErrors({ 200: AssessmentList }, [401, 403]),
      },
    },
    async (request) => assessments.reviewQueue(contextOf(request), pageRequest(request.query)),
  );

  app.get(
    '/tenants/:tenantID/assessments/:aID',
    {
      config: { permission: 'assessment:read' },
      schema: {
        operationId: 'getAssessment',
        tags,
        summary: 'One assessment with its questions, answers, evidence and review history',
        params: AssessmentParams,
        querystring: LangQuery,
        response: withErrors({ 200: Assessment }, [401, 403, 404]),
      },
    },
    async (request, reply) => inLanguage(request, reply, await assessments.get(contextOf(request).scope, request.params.aID)),
  );

  app.post(
    '/tenants/:tenantID/assessments/:aID/respond',
    {
      config: { permission: 'assessment:read' },
      schema: {
        operationId: 'respondToAssessment',
        tags,
        summary: 'Save answers incrementally (the assignee only)',
        description:
          'Each answer is checked against its question type (400 with details.errors). 400 once the assessment is submitted or approved; 403 for anyone but the assignee. assigned and changes_requested move to in_progress.',
        params: AssessmentParams,
        body: RespondBody,
        querystring: LangQuery,
        response: withErrors({ 200: Assessment }, [401, 403, 404]),
      },
    },
    async (request, reply) => inLanguage(request, reply, await assessments.respond(contextOf(request), request.params.aID, request.body.responses)),
  );

  app.post(
    '/tenants/:tenantID/assessments/:aID/submit',
    {
      config: { permission: 'assessment:read', bodyless: true },
      schema: {
        operationId: 'submitAssessment',
        tags,
        summary: 'Submit for review (the assignee only); read-only afterwards',
        description: '400 with details.missing when required questions are unanswered; 409 when already submitted or approved.',
        params: AssessmentParams,
        querystring: LangQuery,
        response: withErrors({ 200: Assessment }, [401, 403, 404, 409]),
      },
    },
    async (request, reply) => inLanguage(request, reply, await assessments.submit(contextOf(request), request.params.aID)),
  );

  app.post(
    '/tenants/:tenantID/assessments/:aID/review',
    {
      config: { permission: 'assessment:review' },
      schema: {
        operationId: 'reviewAssessment',
        tags,
        summary: 'approved (attests the mapped controls) or rejected (changes requested); approve and reject are accepted too',
        description: '403 for the assignee (nobody reviews their own assessment) and for anyone but a named reviewer; 409 unless submitted; 400 rejecting without notes.',
        params: AssessmentParams,
        body: ReviewBody,
        querystring: LangQuery,
        response: withErrors({ 200: Assessment }, [401, 403, 404, 409]),
      },
    },
    async (request, reply) => inLanguage(request, reply, await assessments.review(contextOf(request), request.params.aID, request.body)),
  );

  app.post(
    '/tenants/:tenantID/assessments/:aID/approve',
    {
      config: { permission: 'assessment:review' },
      preValidation: optionalBody,
      schema: {
        operationId: 'approveAssessment',
        tags,
        summary: 'Alias of review with review_status approved (body optional)',
        params: AssessmentParams,
        body: AliasReviewBody,
        querystring: LangQuery,
        response: withErrors({ 200: Assessment }, [401, 403, 404, 409]),
      },
    },
    async (request, reply) => inLanguage(request, reply, await assessments.review(contextOf(request), request.params.aID, { ...request.body, review_status: 'approved' })),
  );

  app.post(
    '/tenants/:tenantID/assessments/:aID/reject',
    {
      config: { permission: 'assessment:review' },
      preValidation: optionalBody,
      schema: {
        operationId: 'rejectAssessment',
        tags,
        summary: 'Alias of review with review_status rejected (notes required)',
        params: AssessmentParams,
        body: AliasReviewBody,
        querystring: LangQuery,
        response: withErrors({ 200: Assessment }, [401, 403, 404, 409]),
      },
    },
    async (request, reply) => inLanguage(request, reply, await assessments.review(contextOf(request), request.params.aID, { ...request.body, review_status: 'rejected' })),
  );

  app.post(
    '/tenants/:tenantID/assessments/:aID/generate-poam',
    {
      config: { permission: 'poam:write' },
      preValidation: optionalBody,
      schema: {
        operationId: 'generateAssessmentPoam',
        tags,
        summary: 'POA&M items from a rejected assessment or the gaps its review flagged',
        description:
          'One item per question in question_ids, else per flagged gap, else one for the whole rejected assessment. Raising again returns the existing items (200); 201 when new ones were created; 409 when the assessment is neither rejected nor gapped.',
        params: AssessmentParams,
        body: GeneratePoamBody,
        response: withErrors({ 200: GeneratePoamResult, 201: GeneratePoamResult }, [401, 403, 404, 409]),
      },
    },
    async (request, reply) => {
      const result = await generatePoam(contextOf(request), request.params.aID, request.body);
      return reply.status(result.created > 0 ? 201 : 200).send(result);
    },
  );

  app.get(
    '/tenants/:tenantID/controls/attestations',
    {
      config: { permission: 'assessment:read' },
      schema: {
        operationId: 'listControlAttestations',
        tags: ['controls'],
        summary: 'Attestation status of the controls questionnaires cover, with expiry marks (expiring_soon within 7 days)',
        params: TenantParams,
        querystring: ControlAttestationQuery,
        response: withErrors({ 200: ControlAttestationList }, [401, 403]),
      },
    },
    async (request) => {
      const { page, per_page, ...filter } = request.query;
      return attestations.list(contextOf(request).scope, filter, pageRequest({ page, per_page }));
    },
  );
};
