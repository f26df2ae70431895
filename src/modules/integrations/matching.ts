import type { Filters } from './config.js';

/**
 * Which integrations an event goes to. An integration receives an event when:
 * - its status is active and it was when the event happened: the event is not older than the
 *   integration's creation or last re-enabling (events while it was disabled are never delivered);
 * - the event type is one of `config.events`;
 * - the event's workspace is in `config.workspaces` when that is set (tenant-wide events, without a
 *   workspace, always pass);
 * - each filter that is set (`severity`, `frameworks`, `resource_types`) contains the event's value.
 *   A filter the event has no value for does not apply to it (a severity filter does not hold back
 *   compliance.score_changed). Finding events that carry only a finding id (finding.resolved,
 *   finding.risk_accepted, …) get the finding's severity, framework and resource type looked up.
 */
export interface Candidate {
  id: string;
  tenantId: string;
  events: ReadonlySet<string>;
  /** When it was created or last re-enabled (ms). */
  enabledAt: number;
  workspaces: ReadonlySet<string> | null;
  filters: Filters;
}

export interface EventFacts {
  severity?: string;
  framework?: string;
  resource_type?: string;
}

export interface MatchableEvent {
  type: string;
  workspaceId: string | null;
  createdAt: number;
  data: Record<string, unknown>;
}

const text = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);

/** The filterable values an event's data carries itself. */
export function factsOf(data: Record<string, unknown>): EventFacts {
  const finding = typeof data.finding === 'object' && data.finding !== null ? (data.finding as Record<string, unknown>) : {};
  const facts: EventFacts = {};
  const severity = text(finding.severity) ?? text(data.severity);
  const framework = text(finding.framework) ?? text(data.framework);
  const resourceType = text(finding.resource_type) ?? text(data.resource_type);
  if (severity) facts.severity = severity.toUpperCase();
  if (framework) facts.framework = framework;
  if (resourceType) facts.resource_type = resourceType;
  return facts;
}

/** The finding id of an event that names a finding without carrying it. */
export function findingIdOf(data: Record<string, unknown>): string | null {
  return text(data.finding_id) ?? null;
}

const FILTER_FACTS: Array<[keyof Filters, keyof EventFacts]> = [
  ['severity', 'severity'],
  ['frameworks', 'framework'],
  ['resource_types', 'resource_type'],
];

/** Whether a filter of the candidate needs a value the event does not carry. */
export function needsLookup(candidate: Candidate, facts: EventFacts): boolean {
  return FILTER_FACTS.some(([filter, fact]) => (candidate.filters[filter]?.length ?? 0) > 0 && facts[fact] === undefined);
}

export function matches(candidate: Candidate, event: MatchableEvent, facts: EventFacts): boolean {
  if (!candidate.events.has(event.type)) return false;
  if (event.createdAt < candidate.enabledAt) return false;
  if (candidate.workspaces && event.workspaceId !== null && !candidate.workspaces.has(event.workspaceId)) return false;
  for (const [filter, fact] of FILTER_FACTS) {
    const allowed = candidate.filters[filter];
    const value = facts[fact];
    if (allowed?.length && value !== undefined && !allowed.includes(value)) return false;
  }
  return true;
}
