import { Type } from 'typebox';
import type { RoutePlugin } from '../module.js';
import { contextOf } from '../../platform/auth/authenticator.js';
import { Uuid, withErrors } from '../../platform/http/schemas.js';
import { sseHubFor, type SseHubOptions, type StreamEvent } from '../../platform/events/sse-hub.js';
import { defaultEventStreamOptions, serveEventStream, type EventStreamOptions } from '../../platform/events/sse-stream.js';

/** The outbox event types the findings stream carries. */
export const FINDING_STREAM_TYPES: ReadonlySet<string> = new Set(['finding.created', 'finding.resolved']);

/** The fields of `finding` in a finding.created message (the spec's data shape, nothing more). */
const FINDING_FIELDS = [
  'id',
  'rule_id',
  'framework',
  'control_id',
  'severity',
  'title',
  'description',
  'resource_id',
  'resource_type',
  'resource_name',
  'region',
  'remediation',
  'created_at',
] as const;

/**
 * The SSE message of an outbox event: `{event: 'finding.created', finding}` or
 * `{event: 'finding.resolved', finding_id, resolved_at}`. Outbox data carries more (rule_id,
 * resolved_by …) for webhooks; the stream sends the spec's fields only.
 */
export function findingStreamMessage(event: StreamEvent): Record<string, unknown> | null {
  if (event.type === 'finding.created') {
    const finding = event.data.finding;
    if (!finding || typeof finding !== 'object') return null;
    const source = finding as Record<string, unknown>;
    return { event: 'finding.created', finding: Object.fromEntries(FINDING_FIELDS.map((key) => [key, source[key] ?? null])) };
  }
  if (event.type === 'finding.resolved') {
    return { event: 'finding.resolved', finding_id: event.data.finding_id ?? null, resolved_at: event.data.resolved_at ?? null };
  }
  return null;
}

export interface FindingStreamOptions extends Partial<EventStreamOptions> {
  /** Options of the app's hub, used when this route is the one that creates it. */
  hub?: SseHubOptions;
}

const StreamParams = Type.Object({ tenantID: Uuid });
const StreamHeaders = Type.Object({
  'last-event-id': Type.Optional(Type.String({ pattern: '^[0-9]{0,15}$', description: 'Resume after this event id (sent by EventSource on reconnect)' })),
});
const EventStream = Type.Unsafe<string>({
  description:
    'Server-Sent Events. Each event is `id: <seq>` and `data: <json>`, the JSON being ' +
    '`{"event":"finding.created","finding":{…}}` or `{"event":"finding.resolved","finding_id":…,"resolved_at":…}`; ' +
    '`: heartbeat` comments every 15 s; `retry:` advice first.',
  content: { 'text/event-stream': { schema: { type: 'string' } } },
});

/**
 * `GET /tenants/{tenantID}/findings/stream`: finding events of the token's tenant and workspace, live
 * from any process (the app's SSE hub), resumable with Last-Event-ID (at most the newest 1,000 events
 * of the last 24 h are replayed). Built by a factory so intervals and bounds can be set per app.
 */
export function createFindingStreamRoutes(options: FindingStreamOptions = {}): RoutePlugin {
  const { hub: hubOptions, ...streamOverrides } = options;
  const streamOptions: EventStreamOptions = { ...defaultEventStreamOptions, ...streamOverrides };
  return async (app, { deps }) => {
    const hub = sseHubFor(app, deps, hubOptions);

    app.get(
      '/tenants/:tenantID/findings/stream',
      {
        config: { permission: 'findings:read' },
        // A HEAD would open a stream that never ends and never shows a byte.
        exposeHeadRoute: false,
        schema: {
          operationId: 'streamFindings',
          tags: ['findings'],
          summary: 'Live finding events (Server-Sent Events)',
          description:
            "Events of the token's workspace (and tenant-wide ones). Resume with the Last-Event-ID header: the newest " +
            `${streamOptions.replayMaxEvents} missed events of the last ${Math.round(streamOptions.replayMaxAgeMs / 3_600_000)} h are replayed; ` +
            'a comment line says when older ones were left out.',
          params: StreamParams,
          headers: StreamHeaders,
          response: withErrors({ 200: EventStream }, [401, 403, 404]),
        },
      },
      async (request, reply) => {
        const { scope } = contextOf(request);
        const header = request.headers['last-event-id'];
        await serveEventStream(
          hub,
          request,
          reply,
          {
            filter: { tenantId: scope.tenantId, workspaceId: scope.workspaceId, types: FINDING_STREAM_TYPES },
            lastEventId: header ? Number(header) : null,
            format: findingStreamMessage,
          },
          streamOptions,
        );
      },
    );
  };
}

export const findingStreamRoutes: RoutePlugin = createFindingStreamRoutes();
