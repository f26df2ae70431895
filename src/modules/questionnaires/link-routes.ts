import type { RoutePlugin } from '../module.js';
import { contextOf } from '../../platform/auth/authenticator.js';
import { pageRequest } from '../../platform/http/pagination.js';
import { withErrors } from '../../platform/http/schemas.js';
import { createRespondentLinks } from './respondent-links.js';
import { CreatedLink, CreateLinkBody, Link, LinkList, LinkListQuery, LinkParams } from './respondent-schemas.js';
import { AssessmentParams } from './schemas.js';

/**
 * The reviewer's side of outside respondents' links: create, list, revoke. They need
 * assessment:review, the permission of whoever reviews what the outside respondent sends.
 */
export const linkRoutes: RoutePlugin = async (app, { deps }) => {
  const links = createRespondentLinks(deps);
  const tags = ['assessments'];

  app.post(
    '/tenants/:tenantID/assessments/:aID/links',
    {
      config: { permission: 'assessment:review' },
      schema: {
        operationId: 'createAssessmentLink',
        tags,
        summary: 'Send an assessment to an outside respondent (no account) as an expiring, revocable link',
        description:
          "With recipient_email and an active e-mail integration the link is mailed to the recipient (delivery email; token and url null). Otherwise, or when the mail fails (email_error says why), delivery is copy and the answer carries the token and url once: only the token's hash is stored. The url starts with CONTROLGRAPH_PUBLIC_URL, never the request's Host header; without it nothing is mailed (email_error says so) and url is null. 409 once the assessment is submitted or approved.",
        params: AssessmentParams,
        body: CreateLinkBody,
        response: withErrors({ 201: CreatedLink }, [401, 403, 404, 409]),
      },
    },
    async (request, reply) => {
      const created = await links.create(contextOf(request), request.params.aID, request.body);
      return reply.status(201).header('cache-control', 'no-store').send(created);
    },
  );

  app.get(
    '/tenants/:tenantID/assessments/:aID/links',
    {
      config: { permission: 'assessment:review' },
      schema: {
        operationId: 'listAssessmentLinks',
        tags,
        summary: "The outside respondents' links of an assessment, newest first (never their tokens)",
        params: AssessmentParams,
        querystring: LinkListQuery,
        response: withErrors({ 200: LinkList }, [401, 403, 404]),
      },
    },
    async (request) => links.list(contextOf(request).scope, request.params.aID, pageRequest(request.query)),
  );

  app.post(
    '/tenants/:tenantID/assessments/:aID/links/:linkID/revoke',
    {
      config: { permission: 'assessment:review', bodyless: true },
      schema: {
        operationId: 'revokeAssessmentLink',
        tags,
        summary: 'End a link at once (its next use answers 401 LINK_REVOKED)',
        description: '409 when the link is already revoked; an expired link can still be revoked.',
        params: LinkParams,
        response: withErrors({ 200: Link }, [401, 403, 404, 409]),
      },
    },
    async (request) => links.revoke(contextOf(request), request.params.aID, request.params.linkID),
  );
};
