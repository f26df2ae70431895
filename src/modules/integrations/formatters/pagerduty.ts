import { createHash } from 'node:crypto';
import { summarize } from './summary.js';
import { cut, type FormatContext, type Prepared } from './types.js';
import { lookupTable } from '../../../platform/lookup-table.js';

/**
 * PagerDuty Events API v2 (https://developer.pagerduty.com/docs/events-api-v2/trigger-events/):
 * POST https://events.pagerduty.com/v2/enqueue (202 {status, message, dedup_key}). A finding's events
 * share one dedup_key (derived from tenant, workspace and finding id), so finding.resolved resolves
 * the incident its finding.created opened. Severities: CRITICAL critical, HIGH error, MEDIUM warning,
 * LOW and INFO info.
 */
const SEVERITY: Record<string, 'critical' | 'error' | 'warning' | 'info'> = lookupTable({
  CRITICAL: 'critical',
  HIGH: 'error',
  MEDIUM: 'warning',
  LOW: 'info',
  INFO: 'info',
});

export function dedupKey(ctx: FormatContext, findingId: string | null): string {
  if (!findingId) return `controlgraph-event-${ctx.envelope.id}`;
  const digest = createHash('sha256')
    .update(`${ctx.envelope.tenant_id}\0${ctx.envelope.workspace_id ?? ''}\0${findingId}`)
    .digest('hex');
  return `controlgraph-finding-${digest.slice(0, 40)}`;
}

function severityOf(type: string, severity: string | null, data: Record<string, unknown>): 'critical' | 'error' | 'warning' | 'info' {
  if (severity && SEVERITY[severity]) return SEVERITY[severity];
  if (type === 'compliance.control_failed' || (type === 'compliance.score_changed' && Number(data.delta) < 0)) return 'warning';
  if (type.endsWith('.failed')) return 'error';
  return 'info';
}

export function pagerDutyRequest(ctx: FormatContext): Prepared {
  const config = ctx.config as { events_url: string; routing_key: string; source: string; resolve_on_finding_resolved: boolean };
  const summary = summarize(ctx.envelope);
  const dedup = dedupKey(ctx, summary.findingId);
  const headers = { 'content-type': 'application/json' };
  if (ctx.envelope.type === 'finding.resolved' && config.resolve_on_finding_resolved) {
    return { kind: 'http', url: config.events_url, method: 'POST', headers, body: JSON.stringify({ routing_key: config.routing_key, event_action: 'resolve', dedup_key: dedup }) };
  }
  const data = ctx.envelope.data;
  const finding = (data.finding ?? {}) as Record<string, unknown>;
  const body = {
    routing_key: config.routing_key,
    event_action: 'trigger',
    dedup_key: dedup,
    client: 'ControlGraph',
    payload: {
      summary: cut(summary.title, 1024),
      source: cut(String(finding.resource_id ?? data.resource_id ?? config.source), 255),
      severity: severityOf(ctx.envelope.type, summary.severity, data),
      timestamp: ctx.envelope.timestamp,
      ...(finding.resource_type ? { component: String(finding.resource_type) } : {}),
      ...(finding.framework || data.framework ? { group: String(finding.framework ?? data.framework) } : {}),
      class: ctx.envelope.type,
      custom_details: { ...Object.fromEntries(summary.facts), event_id: ctx.envelope.id, delivery_id: ctx.deliveryId, ...(summary.text ? { details: summary.text } : {}) },
    },
  };
  return { kind: 'http', url: config.events_url, method: 'POST', headers, body: JSON.stringify(body) };
}
