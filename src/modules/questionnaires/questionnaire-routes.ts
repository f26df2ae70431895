import { Type } from 'typebox';
import type { RoutePlugin } from '../module.js';
import { contextOf } from '../../platform/auth/authenticator.js';
import { pageRequest } from '../../platform/http/pagination.js';
import { TenantParams, withErrors } from '../../platform/http/schemas.js';
import { createQuestionnaireService } from './questionnaire-service.js';
import { negotiateLanguage } from './templates.js';
import {
  AddQuestionBody,
  AssignBody,
  AssignResult,
  FromTemplateBody,
  LangQuery,
  Question,
  QuestionInput,
  QuestionParams,
  Questionnaire,
  QuestionnaireBody,
  QuestionnaireList,
  QuestionnaireListQuery,
  QuestionnaireParams,
  QuestionnaireUpdateBody,
  Template,
  TemplateList,
  TemplateParams,
  TemplateQuery,
} from './schemas.js';

const EMPTY = { 204: Type.Null() };

/** Questionnaires (reusable definitions), their templates, questions, publication and assignment. */
// eslint-disable-next-line max-lines-per-function -- the module's route table, one short handler per route; splitting it into <thing>-routes.ts files is a follow-up of issue 26 not done in time
export const questionnaireRoutes: RoutePlugin = async (app, { deps }) => {
  const questionnaires = createQuestionnaireService(deps);
  const tags = ['questionnaires'];
  const read = { permission: 'questionnaire:read' } as const;
  const write = { permission: 'questionnaire:write' } as const;

  app.get(
    '/tenants/:tenantID/questionnaires/templates',
    {
      config: read,
      schema: {
        operationId: 'listQuestionnaireTemplates',
        tags,
        summary: 'The questionnaire templates, in the language of ?lang= or Accept-Language (English fallback)',
        description: '?framework= keeps the templates whose questions map to that framework.',
        params: TenantParams,
        querystring: TemplateQuery,
        response: withErrors({ 200: TemplateList }, [401, 403]),
      },
    },
    async (request, reply) => {
      const { page, per_page, framework, lang } = request.query;
      const chosen = negotiateLanguage(lang, request.headers['accept-language']);
      reply.header('content-language', chosen);
      return questionnaires.listTemplates(framework, chosen, pageRequest({ page, per_page }));
    },
  );

  app.get(
    '/tenants/:tenantID/questionnaires/templates/:templateID',
    {
      config: read,
      schema: {
        operationId: 'getQuestionnaireTemplate',
        tags,
        summary: 'One template with its questions, in the language of ?lang= or Accept-Language (English fallback)',
        params: TemplateParams,
        querystring: LangQuery,
        response: withErrors({ 200: Template }, [401, 403, 404]),
      },
    },
    async (request, reply) => {
      const chosen = negotiateLanguage(request.query.lang, request.headers['accept-language']);
      const template = questionnaires.getTemplate(request.params.templateID, chosen);
      reply.header('content-language', template.lang);
      return template;
    },
  );

  app.post(
    '/tenants/:tenantID/questionnaires/from-template',
    {
      config: write,
      schema: {
        operationId: 'createQuestionnaireFromTemplate',
        tags,
        summary: 'A draft questionnaire copied from a template, in the language of lang, ?lang= or Accept-Language',
        params: TenantParams,
        querystring: LangQuery,
        body: FromTemplateBody,
        response: withErrors({ 201: Questionnaire }, [401, 403]),
      },
    },
    async (request, reply) => {
      const lang = negotiateLanguage(request.body.lang ?? request.query.lang, request.headers['accept-language']);
      return reply.status(201).send(await questionnaires.fromTemplate(contextOf(request), request.body, lang));
    },
  );

  app.post(
    '/tenants/:tenantID/questionnaires',
    {
      config: write,
      schema: {
        operationId: 'createQuestionnaire',
        tags,
        summary: 'A custom questionnaire (status draft)',
        params: TenantParams,
        body: QuestionnaireBody,
        response: withErrors({ 201: Questionnaire }, [401, 403]),
      },
    },
    async (request, reply) => reply.status(201).send(await questionnaires.create(contextOf(request), request.body)),
  );

  app.get(
    '/tenants/:tenantID/questionnaires',
    {
      config: read,
      schema: {
        operationId: 'listQuestionnaires',
        tags,
        summary: 'Questionnaires of the workspace, newest first',
        params: TenantParams,
        querystring: QuestionnaireListQuery,
        response: withErrors({ 200: QuestionnaireList }, [401, 403]),
      },
    },
    async (request) => {
      const { page, per_page, ...filter } = request.query;
      return questionnaires.list(contextOf(request).scope, filter, pageRequest({ page, per_page }));
    },
  );

  app.get(
    '/tenants/:tenantID/questionnaires/:qID',
    {
      config: read,
      schema: {
        operationId: 'getQuestionnaire',
        summary: 'A questionnaire with its questions',
        tags,
        params: QuestionnaireParams,
        response: withErrors({ 200: Questionnaire }, [401, 403, 404]),
      },
    },
    async (request) => questionnaires.get(contextOf(request).scope, request.params.qID),
  );

  app.put(
    '/tenants/:tenantID/questionnaires/:qID',
    {
      config: write,
      schema: {
        operationId: 'updateQuestionnaire',
        tags,
        summary: 'Change a questionnaire: everything while draft; title, description, assignees and due_date once published',
        description: '409 for questions, framework or attestation_validity_days of a published questionnaire (create a new version), and for an archived one.',
        params: QuestionnaireParams,
        body: QuestionnaireUpdateBody,
        response: withErrors({ 200: Questionnaire }, [401, 403, 404, 409]),
      },
    },
    async (request) => questionnaires.update(contextOf(request), request.params.qID, request.body),
  );

  app.delete(
    '/tenants/:tenantID/questionnaires/:qID',
    {
      config: write,
      schema: {
        operationId: 'deleteQuestionnaire',
        tags,
        summary: 'Delete a questionnaire that has no assessments (409 otherwise: archive it)',
        params: QuestionnaireParams,
        response: withErrors(EMPTY, [401, 403, 404, 409]),
      },
    },
    async (request, reply) => {
      await questionnaires.remove(contextOf(request), request.params.qID);
      return reply.status(204).send();
    },
  );

  app.post(
    '/tenants/:tenantID/questionnaires/:qID/publish',
    {
      config: { ...write, bodyless: true },
      schema: {
        operationId: 'publishQuestionnaire',
        tags,
        summary: 'draft → published (assignable; questions fixed). Publishing a new version archives the previous one',
        description: '409 when not a draft or without questions.',
        params: QuestionnaireParams,
        response: withErrors({ 200: Questionnaire }, [401, 403, 404, 409]),
      },
    },
    async (request) => questionnaires.publish(contextOf(request), request.params.qID),
  );

  app.post(
    '/tenants/:tenantID/questionnaires/:qID/archive',
    {
      config: { ...write, bodyless: true },
      schema: {
        operationId: 'archiveQuestionnaire',
        tags,
        summary: 'No new assignments; assessments under way continue and attestations stay',
        params: QuestionnaireParams,
        response: withErrors({ 200: Questionnaire }, [401, 403, 404, 409]),
      },
    },
    async (request) => questionnaires.archive(contextOf(request), request.params.qID),
  );

  app.post(
    '/tenants/:tenantID/questionnaires/:qID/versions',
    {
      config: { ...write, bodyless: true },
      schema: {
        operationId: 'createQuestionnaireVersion',
        tags,
        summary: 'A draft copy (version + 1) of a published or archived questionnaire, to change its questions',
        description: '409 for a draft (change it directly) or when the family already has a draft version.',
        params: QuestionnaireParams,
        response: withErrors({ 201: Questionnaire }, [401, 403, 404, 409]),
      },
    },
    async (request, reply) => reply.status(201).send(await questionnaires.newVersion(contextOf(request), request.params.qID)),
  );

  app.post(
    '/tenants/:tenantID/questionnaires/:qID/assign',
    {
      config: write,
      schema: {
        operationId: 'assignQuestionnaire',
        tags,
        summary: 'One assessment per assignee; their controls become questionnaire_assigned',
        description:
          '409 when the questionnaire is not published, or an assignee already has an open assessment of it; 400 for users outside the tenant, a reviewer lacking assessment:review or also assigned.',
        params: QuestionnaireParams,
        body: AssignBody,
        response: withErrors({ 201: AssignResult }, [401, 403, 404, 409]),
      },
    },
    async (request, reply) => reply.status(201).send(await questionnaires.assign(contextOf(request), request.params.qID, request.body)),
  );

  app.post(
    '/tenants/:tenantID/questionnaires/:qID/questions',
    {
      config: write,
      schema: {
        operationId: 'addQuestionnaireQuestion',
        tags,
        summary: 'Add a question (draft only; 409 otherwise)',
        params: QuestionnaireParams,
        body: AddQuestionBody,
        response: withErrors({ 201: Question }, [401, 403, 404, 409]),
      },
    },
    async (request, reply) => reply.status(201).send(await questionnaires.addQuestion(contextOf(request), request.params.qID, request.body)),
  );

  app.put(
    '/tenants/:tenantID/questionnaires/:qID/questions/:questionID',
    {
      config: write,
      schema: {
        operationId: 'updateQuestionnaireQuestion',
        tags,
        summary: 'Replace a question (draft only; 409 otherwise)',
        params: QuestionParams,
        body: QuestionInput,
        response: withErrors({ 200: Question }, [401, 403, 404, 409]),
      },
    },
    async (request) => questionnaires.updateQuestion(contextOf(request), request.params.qID, request.params.questionID, request.body),
  );

  app.delete(
    '/tenants/:tenantID/questionnaires/:qID/questions/:questionID',
    {
      config: write,
      schema: {
        operationId: 'deleteQuestionnaireQuestion',
        tags,
        summary: 'Remove a question (draft only; 409 otherwise)',
        params: QuestionParams,
        response: withErrors(EMPTY, [401, 403, 404, 409]),
      },
    },
    async (request, reply) => {
      await questionnaires.removeQuestion(contextOf(request), request.params.qID, request.params.questionID);
      return reply.status(204).send();
    },
  );
};
