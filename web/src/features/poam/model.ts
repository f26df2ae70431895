/**
 * The POA&M's statuses, severities and moves as the service defines them (src/modules/poam/model.ts):
 * the console offers only the moves the service allows; the service still decides, and its refusal
 * (closing without evidence, a backward move without a comment) is shown as it words it.
 */
export const POAM_STATUSES = ['open', 'in_progress', 'verification', 'closed'] as const;
export type PoamStatus = (typeof POAM_STATUSES)[number];

export const POAM_SEVERITIES = ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW'] as const;
export type PoamSeverity = (typeof POAM_SEVERITIES)[number];

export const TRANSITIONS: Record<PoamStatus, readonly PoamStatus[]> = {
  open: ['in_progress'],
  in_progress: ['open', 'verification'],
  verification: ['in_progress', 'closed'],
  closed: [],
};

const ORDER: Record<PoamStatus, number> = { open: 0, in_progress: 1, verification: 2, closed: 3 };

/** A backward move needs a comment saying why (the service refuses it without one). */
export const isBackward = (from: PoamStatus, to: PoamStatus): boolean => ORDER[to] < ORDER[from];

export const STATUS_COLORS: Record<PoamStatus, string> = { open: 'red', in_progress: 'blue', verification: 'grape', closed: 'teal' };

export const EXPORT_FORMATS = ['fedramp', 'csv', 'json', 'oscal'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
