import { Type } from 'typebox';
import type { RoutePlugin } from '../module.js';
import { contextOf } from '../../platform/auth/authenticator.js';
import { pageRequest } from '../../platform/http/pagination.js';
import { TenantParams, withErrors } from '../../platform/http/schemas.js';
import { createAlertRuleService } from './alert-rules.js';
import { createDeliveryService } from './delivery-service.js';
import { createIntegrationService } from './integration-service.js';
import { deliverySettings } from './settings.js';
import {
  AlertRule,
  AlertRuleCreate,
  AlertRuleList,
  Delivery,
  DeliveryList,
  DeliveryListQuery,
  DeliveryParams,
  Integration,
  IntegrationCreate,
  IntegrationList,
  IntegrationListQuery,
  IntegrationParams,
  IntegrationUpdate,
  PageOnly,
  RuleParams,
} from './schemas.js';

const DELIVERY_DOC = `Each subscribed event that passes the filters is delivered as an HTTP POST (webhooks: the event envelope \`{id, type, tenant_id, workspace_id, timestamp, data}\` as JSON).

Webhook headers: \`X-ControlGraph-Signature: sha256=<hex HMAC-SHA256 of "<X-ControlGraph-Timestamp>.<raw body>" keyed with config.secret>\`, \`X-ControlGraph-Timestamp\` (Unix seconds), \`X-ControlGraph-Event\`, \`X-ControlGraph-Delivery\` and \`Idempotency-Key\` (the delivery id, the same on every retry), and the Standard Webhooks headers \`webhook-id\`, \`webhook-timestamp\`, \`webhook-signature: v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">\` (key: the base64 payload of a \`whsec_\` secret, else the secret's bytes).

Receivers verify over the raw body, compare in constant time and refuse timestamps more than 300 s from their clock. The receiver helper \`verifyWebhook({secret, headers, rawBody, toleranceSeconds = 300})\` (src/modules/integrations/receiver.ts, needs only node:crypto) does exactly that and returns the event with its \`delivery_id\`, or throws WebhookVerificationError (answer 400):

\`\`\`ts
const event = verifyWebhook({ secret, headers: req.headers, rawBody });   // raw bytes, before JSON parsing
if (seen(event.delivery_id)) return;                                     // at-least-once: drop duplicates
\`\`\`

Standard Webhooks libraries verify the webhook-* headers too (e.g. \`new Webhook(secret).verify(rawBody, headers)\` of the standardwebhooks package; \`{format: 'raw'}\` for a secret that is not whsec_…).

Attempts: immediately, then 30 s, 5 min, 30 min and 2 h after each failure (CONTROLGRAPH_WEBHOOK_RETRY_SCHEDULE); non-2xx, redirects (never followed) and timeouts fail; 429/503 with Retry-After wait at least that long; 410 disables the integration at once. After the 5th failure the delivery has failed; the integration is disabled when more than half of its last 20 finished deliveries (since it was last enabled) failed.

Targets must be https:// and resolve to public addresses (CONTROLGRAPH_OUTBOUND_ALLOW_HOSTS lists exceptions, which may use http://); connection failures read "no HTTP response within N s", whatever the cause.`;

/** Integrations, their deliveries, and alert rules (a simpler body over integrations). */
// eslint-disable-next-line max-lines-per-function -- the module's route table, one short handler per route; splitting it into <thing>-routes.ts files is a follow-up of issue 26 not done in time
export const integrationRoutes: RoutePlugin = async (app, { deps }) => {
  const settings = deliverySettings(deps);
  const integrations = createIntegrationService(deps, settings);
  const deliveries = createDeliveryService(deps);
  const rules = createAlertRuleService(integrations);
  const tags = ['integrations'];
  const base = '/tenants/:tenantID/integrations';

  app.get(
    base,
    {
      config: { permission: 'tenant:read' },
      schema: {
        operationId: 'listIntegrations',
        tags,
        summary: 'Integrations of the tenant (webhooks included), oldest first',
        params: TenantParams,
        querystring: IntegrationListQuery,
        response: withErrors({ 200: IntegrationList }, [401, 403]),
      },
    },
    async (request) => {
      const { page, per_page, ...filter } = request.query;
      return integrations.list(contextOf(request), filter, pageRequest({ page, per_page }));
    },
  );

  app.post(
    base,
    {
      config: { permission: 'tenant:update' },
      schema: {
        operationId: 'createIntegration',
        tags,
        summary: 'Create an integration (status active); the response is the only one that shows its secrets',
        description: DELIVERY_DOC,
        params: TenantParams,
        body: IntegrationCreate,
        response: withErrors({ 201: Integration }, [401, 403]),
      },
    },
    async (request, reply) => reply.status(201).send(await integrations.create(contextOf(request), request.body)),
  );

  app.get(
    `${base}/:integrationID`,
    {
      config: { permission: 'tenant:read' },
      schema: {
        operationId: 'getIntegration',
        summary: 'An integration (never its secrets)',
        tags,
        params: IntegrationParams,
        response: withErrors({ 200: Integration }, [401, 403, 404]),
      },
    },
    async (request) => integrations.get(contextOf(request), request.params.integrationID),
  );

  app.put(
    `${base}/:integrationID`,
    {
      config: { permission: 'tenant:update' },
      schema: {
        operationId: 'updateIntegration',
        tags,
        summary: 'Change name or config, disable, or re-enable (status active) an integration',
        description:
          'Config fields given replace the current ones; secrets left out are kept. Re-enabling does not resend what failed meanwhile: redeliver it with POST …/deliveries/{deliveryID}/retry.',
        params: IntegrationParams,
        body: IntegrationUpdate,
        response: withErrors({ 200: Integration }, [401, 403, 404, 409]),
      },
    },
    async (request) => integrations.update(contextOf(request), request.params.integrationID, request.body),
  );

  app.delete(
    `${base}/:integrationID`,
    {
      config: { permission: 'tenant:update' },
      schema: {
        operationId: 'deleteIntegration',
        tags,
        summary: 'Delete an integration and its delivery history',
        params: IntegrationParams,
        response: withErrors({ 204: Type.Null() }, [401, 403, 404]),
      },
    },
    async (request, reply) => {
      await integrations.remove(contextOf(request), request.params.integrationID);
      return reply.status(204).send();
    },
  );

  app.post(
    `${base}/:integrationID/test`,
    {
      config: { permission: 'tenant:update', bodyless: true },
      schema: {
        operationId: 'testIntegration',
        tags,
        summary: 'Queue a test delivery (event integration.test) to this integration',
        params: IntegrationParams,
        response: withErrors({ 202: Delivery }, [401, 403, 404, 409]),
      },
    },
    async (request, reply) => reply.status(202).send(await deliveries.test(contextOf(request), request.params.integrationID)),
  );

  app.get(
    `${base}/:integrationID/deliveries`,
    {
      config: { permission: 'tenant:read' },
      schema: {
        operationId: 'listIntegrationDeliveries',
        tags,
        summary: 'Deliveries newest first, each with its attempts (status code, latency, first bytes of the response, error)',
        params: IntegrationParams,
        querystring: DeliveryListQuery,
        response: withErrors({ 200: DeliveryList }, [401, 403, 404]),
      },
    },
    async (request) => {
      const { page, per_page, ...filter } = request.query;
      return deliveries.list(contextOf(request), request.params.integrationID, filter, pageRequest({ page, per_page }));
    },
  );

  app.get(
    `${base}/:integrationID/deliveries/:deliveryID`,
    {
      config: { permission: 'tenant:read' },
      schema: {
        operationId: 'getIntegrationDelivery',
        tags,
        summary: 'One delivery with its attempts and the event as sent',
        params: DeliveryParams,
        response: withErrors({ 200: Delivery }, [401, 403, 404]),
      },
    },
    async (request) => deliveries.one(contextOf(request), request.params.integrationID, request.params.deliveryID),
  );

  app.post(
    `${base}/:integrationID/deliveries/:deliveryID/retry`,
    {
      config: { permission: 'tenant:update', bodyless: true },
      schema: {
        operationId: 'retryIntegrationDelivery',
        tags,
        summary: 'Redeliver a finished delivery (a new round of attempts, same delivery id)',
        description: '202 with the delivery; 409 while it is pending or while the integration is disabled.',
        params: DeliveryParams,
        response: withErrors({ 202: Delivery }, [401, 403, 404, 409]),
      },
    },
    async (request, reply) => reply.status(202).send(await deliveries.retry(contextOf(request), request.params.integrationID, request.params.deliveryID)),
  );

  const ruleTags = ['alerts'];
  app.post(
    '/tenants/:tenantID/alerts/rules',
    {
      config: { permission: 'tenant:update' },
      schema: {
        operationId: 'createAlertRule',
        tags: ruleTags,
        summary: 'Deliver chosen events to a channel: creates an integration of that type (source alert_rule)',
        description:
          'channel webhook (url and secret: a signed webhook, see createIntegration), slack or teams (url: the incoming webhook URL), email (url: mailto:<address>[,<address>…], default SMTP server).',
        params: TenantParams,
        body: AlertRuleCreate,
        response: withErrors({ 201: AlertRule }, [401, 403]),
      },
    },
    async (request, reply) => reply.status(201).send(await rules.create(contextOf(request), request.body)),
  );

  app.get(
    '/tenants/:tenantID/alerts/rules',
    {
      config: { permission: 'tenant:read' },
      schema: {
        operationId: 'listAlertRules',
        tags: ruleTags,
        summary: 'Alert rules, oldest first',
        params: TenantParams,
        querystring: PageOnly,
        response: withErrors({ 200: AlertRuleList }, [401, 403]),
      },
    },
    async (request) => rules.list(contextOf(request), pageRequest(request.query)),
  );

  app.get(
    '/tenants/:tenantID/alerts/rules/:ruleID',
    {
      config: { permission: 'tenant:read' },
      schema: { operationId: 'getAlertRule', summary: 'An alert rule', tags: ruleTags, params: RuleParams, response: withErrors({ 200: AlertRule }, [401, 403, 404]) },
    },
    async (request) => rules.get(contextOf(request), request.params.ruleID),
  );

  app.delete(
    '/tenants/:tenantID/alerts/rules/:ruleID',
    {
      config: { permission: 'tenant:update' },
      schema: {
        operationId: 'deleteAlertRule',
        tags: ruleTags,
        summary: 'Delete an alert rule (its integration)',
        params: RuleParams,
        response: withErrors({ 204: Type.Null() }, [401, 403, 404]),
      },
    },
    async (request, reply) => {
      await rules.remove(contextOf(request), request.params.ruleID);
      return reply.status(204).send();
    },
  );
};
