import { badRequest } from '../../platform/http/errors.js';

/**
 * The rules of a POA&M item that need no database: statuses and their moves, severity defaults,
 * control id normalisation and input validation. Contracts section 6 fixes the JSON field names,
 * the status identifiers and the default completion per severity.
 */

export const POAM_STATUSES = ['open', 'in_progress', 'verification', 'closed'] as const;
export type PoamStatus = (typeof POAM_STATUSES)[number];

export const POAM_SEVERITIES = ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW'] as const;
export type PoamSeverity = (typeof POAM_SEVERITIES)[number];

/** Default scheduled completion, in days from creation (contracts section 6). */
export const DEFAULT_COMPLETION_DAYS: Record<PoamSeverity, number> = { CRITICAL: 15, HIGH: 30, MEDIUM: 90, LOW: 180 };

/**
 * Allowed moves. Forward: open → in_progress → verification → closed. Backward: in_progress → open
 * (work not started after all), verification → in_progress (the evidence did not confirm the fix).
 * closed is final: a weakness that comes back is a new item with a new number (FedRAMP keeps closed
 * items as the record of what was fixed and never re-uses an id).
 */
export const TRANSITIONS: Record<PoamStatus, readonly PoamStatus[]> = {
  open: ['in_progress'],
  in_progress: ['open', 'verification'],
  verification: ['in_progress', 'closed'],
  closed: [],
};

const ORDER: Record<PoamStatus, number> = { open: 0, in_progress: 1, verification: 2, closed: 3 };

export function isBackward(from: PoamStatus, to: PoamStatus): boolean {
  return ORDER[to] < ORDER[from];
}

export function isPoamStatus(value: string): value is PoamStatus {
  return (POAM_STATUSES as readonly string[]).includes(value);
}

/** Finding severities map onto the POA&M's four; INFO findings become LOW items. */
export function poamSeverityOf(findingSeverity: string): PoamSeverity {
  return (POAM_SEVERITIES as readonly string[]).includes(findingSeverity) ? (findingSeverity as PoamSeverity) : 'LOW';
}

export function formatPoamId(number: number): string {
  return `POAM-${number}`;
}

/** The number of `POAM-<n>` (case-insensitive prefix), or null for anything else. */
export function parsePoamId(id: string): number | null {
  const match = /^POAM-([1-9]\d{0,8})$/i.exec(id.trim());
  return match ? Number(match[1]) : null;
}

/** YYYY-MM-DD of a Date in UTC. */
export function isoDate(date: Date): string {
  return date.toISOString().slice(0, 10);
}

export function addDays(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00.000Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return isoDate(d);
}

export function defaultCompletion(severity: PoamSeverity, now: Date): string {
  return addDays(isoDate(now), DEFAULT_COMPLETION_DAYS[severity]);
}

/** A real calendar date in YYYY-MM-DD form (2026-02-30 is refused). */
export function isCalendarDate(value: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const d = new Date(`${value}T00:00:00.000Z`);
  return !Number.isNaN(d.getTime()) && isoDate(d) === value;
}

/** Overdue: the scheduled completion date has passed (UTC) and the item is not closed. */
export function isOverdue(item: { status: PoamStatus; scheduled_completion: string }, now: Date): boolean {
  return item.status !== 'closed' && item.scheduled_completion < isoDate(now);
}

const NIST_FAMILIES = new Set(['AC', 'AT', 'AU', 'CA', 'CM', 'CP', 'IA', 'IR', 'MA', 'MP', 'PE', 'PL', 'PM', 'PS', 'PT', 'RA', 'SA', 'SC', 'SI', 'SR']);

/**
 * Control ids are NIST SP 800-53 ids in the catalog's form (`AC-2`, `AC-2(1)`). Accepted spellings:
 * `ac-2`, `AC-02`, `ac-2.1` (OSCAL), `NIST-AC-2`, `nist-800-53:AC-2(1)`. An id qualified with another
 * framework (`nist-800-171:3.1.1`, `hipaa:164.308(a)(1)`, as questionnaire control mappings write
 * them) is kept as given, so POA&M items raised from assessments of other frameworks keep their
 * controls. Returns null when the id is neither.
 */
export function normalizeControlId(raw: string): string | null {
  const value = raw.trim();
  if (!value || value.length > 100 || /\s/.test(value)) return null;
  let bare = value;
  const qualified = /^([a-z0-9][a-z0-9.-]*):(.+)$/i.exec(value);
  if (qualified) {
    if (qualified[1]!.toLowerCase() !== 'nist-800-53') return `${qualified[1]!.toLowerCase()}:${qualified[2]}`;
    bare = qualified[2]!;
  }
  bare = bare.replace(/^nist-(?=[a-z]{2}-)/i, '');
  const match = /^([a-z]{2})-0*(\d{1,2})(?:(?:\(0*(\d{1,2})\))|(?:\.0*(\d{1,2})))?$/i.exec(bare);
  if (!match) return null;
  const family = match[1]!.toUpperCase();
  if (!NIST_FAMILIES.has(family)) return null;
  const enhancement = match[3] ?? match[4];
  return `${family}-${Number(match[2])}${enhancement ? `(${Number(enhancement)})` : ''}`;
}

export interface Milestone {
  date: string;
  description: string;
  done: boolean;
}

export interface MilestoneInput {
  date: string;
  description: string;
  done?: boolean;
}

/** The fields a caller sets on an item (manual create, generate-poam, full update). */
export interface PoamFields {
  weakness_name: string;
  weakness_description: string;
  control_ids: string[];
  severity: PoamSeverity;
  point_of_contact: string;
  scheduled_completion: string;
  milestones: Milestone[];
  vendor_dependency: boolean;
  deviation_request: string | null;
}

export const LIMITS = {
  name: 500,
  description: 20_000,
  contact: 300,
  controls: 200,
  milestones: 100,
  milestoneDescription: 4_000,
  deviation: 20_000,
  comment: 10_000,
  source: 200,
} as const;

/**
 * Checks and normalises the fields of an item, answering 400 naming the field. `where` prefixes the
 * messages (e.g. `items[2]`) when a caller sends several items.
 */
export function validateFields(
  input: {
    weakness_name?: unknown;
    weakness_description?: unknown;
    control_ids?: unknown;
    severity?: unknown;
    point_of_contact?: unknown;
    scheduled_completion?: unknown;
    milestones?: unknown;
    vendor_dependency?: unknown;
    deviation_request?: unknown;
  },
  defaults: { now: Date },
  where = '',
): PoamFields {
  const at = (field: string) => (where ? `${where}.${field}` : field);
  const text = (value: unknown, field: string, max: number): string => {
    if (typeof value !== 'string' || !value.trim()) throw badRequest(`${at(field)} is required`);
    if (value.length > max) throw badRequest(`${at(field)} must be at most ${max} characters`);
    return value.trim();
  };
  const weakness_name = text(input.weakness_name, 'weakness_name', LIMITS.name);
  const weakness_description = text(input.weakness_description, 'weakness_description', LIMITS.description);
  const point_of_contact = text(input.point_of_contact, 'point_of_contact', LIMITS.contact);

  if (typeof input.severity !== 'string' || !(POAM_SEVERITIES as readonly string[]).includes(input.severity.toUpperCase())) {
    throw badRequest(`${at('severity')} must be one of ${POAM_SEVERITIES.join(', ')}`);
  }
  const severity = input.severity.toUpperCase() as PoamSeverity;

  if (!Array.isArray(input.control_ids) || input.control_ids.length === 0) throw badRequest(`${at('control_ids')} must name at least one control`);
  if (input.control_ids.length > LIMITS.controls) throw badRequest(`${at('control_ids')} may hold at most ${LIMITS.controls} controls`);
  const control_ids: string[] = [];
  for (const raw of input.control_ids) {
    const id = typeof raw === 'string' ? normalizeControlId(raw) : null;
    if (!id) {
      throw badRequest(`${at('control_ids')}: "${String(raw)}" is not a NIST SP 800-53 control id (such as AC-2 or AC-2(1)) nor <framework>:<control>`);
    }
    if (!control_ids.includes(id)) control_ids.push(id);
  }

  let scheduled_completion: string;
  if (input.scheduled_completion === undefined || input.scheduled_completion === null) {
    scheduled_completion = defaultCompletion(severity, defaults.now);
  } else if (typeof input.scheduled_completion !== 'string' || !isCalendarDate(input.scheduled_completion)) {
    throw badRequest(`${at('scheduled_completion')} must be a date YYYY-MM-DD`);
  } else {
    scheduled_completion = input.scheduled_completion;
  }

  const milestones: Milestone[] = [];
  if (input.milestones !== undefined && input.milestones !== null) {
    if (!Array.isArray(input.milestones)) throw badRequest(`${at('milestones')} must be an array`);
    if (input.milestones.length > LIMITS.milestones) throw badRequest(`${at('milestones')} may hold at most ${LIMITS.milestones} entries`);
    input.milestones.forEach((m: unknown, i: number) => {
      const entry = m as Partial<MilestoneInput> | null;
      const field = `milestones[${i}]`;
      if (!entry || typeof entry !== 'object') throw badRequest(`${at(field)} must be an object {date, description, done?}`);
      if (typeof entry.date !== 'string' || !isCalendarDate(entry.date)) throw badRequest(`${at(field)}.date must be a date YYYY-MM-DD`);
      const description = text(entry.description, `${field}.description`, LIMITS.milestoneDescription);
      if (entry.done !== undefined && typeof entry.done !== 'boolean') throw badRequest(`${at(field)}.done must be a boolean`);
      milestones.push({ date: entry.date, description, done: entry.done ?? false });
    });
  }

  if (input.vendor_dependency !== undefined && typeof input.vendor_dependency !== 'boolean') {
    throw badRequest(`${at('vendor_dependency')} must be a boolean`);
  }
  let deviation_request: string | null = null;
  if (input.deviation_request !== undefined && input.deviation_request !== null) {
    if (typeof input.deviation_request !== 'string') throw badRequest(`${at('deviation_request')} must be a string or null`);
    if (input.deviation_request.length > LIMITS.deviation) throw badRequest(`${at('deviation_request')} must be at most ${LIMITS.deviation} characters`);
    deviation_request = input.deviation_request.trim() || null;
  }

  return {
    weakness_name,
    weakness_description,
    control_ids,
    severity,
    point_of_contact,
    scheduled_completion,
    milestones,
    vendor_dependency: input.vendor_dependency === true,
    deviation_request,
  };
}
