import { commentLog, detectionDate, detectorSource, milestoneChanges, plannedMilestones, statusDate, type ExportData, type ExportItem } from './collect.js';

/**
 * The OMB-style POA&M as CSV. OMB Memorandum M-02-01 ("Guidance for Preparing and Submitting
 * Security Plans of Action and Milestones", 17 October 2001) fixes the elements of an agency POA&M:
 * the weakness, the point of contact responsible for it, the resources required, the scheduled
 * completion date, key milestones with completion dates, changes to milestones, the source that
 * identified the weakness, and its status (ongoing or completed). Those come first, in that order,
 * under the memo's names; the columns after them carry what the memo leaves to the agency and
 * FedRAMP asks for (POA&M id, controls, severity, vendor dependency, deviation request), plus this
 * service's own status and links. The exact layout of the OMB MAX upload form is not public, so this
 * is a faithful reading of the memo, not a copy of that form.
 *
 * RFC 4180: comma-separated, CRLF line ends, fields with a comma, quote or line break quoted, quotes
 * doubled. Multi-line cells (milestones, comments) keep their line breaks inside quotes. A cell that
 * starts with = + - @ (or a tab/CR) is prefixed with ' so a spreadsheet does not run it as a formula.
 */
export const CSV_COLUMNS = [
  'POA&M ID',
  'Weakness',
  'Weakness Description',
  'Point of Contact',
  'Resources Required',
  'Scheduled Completion Date',
  'Milestones with Completion Dates',
  'Changes to Milestones',
  'Identified In',
  'Status',
  'Controls',
  'Severity',
  'Workflow Status',
  'Original Detection Date',
  'Status Date',
  'Overdue',
  'Vendor Dependency',
  'Deviation Request',
  'Finding ID',
  'Asset Identifier',
  'Supporting Documents',
  'Comments',
] as const;

function cell(value: string | number | boolean | null | undefined): string {
  if (value === null || value === undefined) return '';
  let text = String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvRow(item: ExportItem): string[] {
  return [
    item.id,
    item.weakness_name,
    item.weakness_description,
    item.point_of_contact,
    '',
    item.scheduled_completion,
    plannedMilestones(item),
    milestoneChanges(item),
    detectorSource(item),
    // M-02-01 knows two states: completed (closed here) and ongoing (everything else).
    item.status === 'closed' ? 'Completed' : 'Ongoing',
    item.control_ids.join(', '),
    item.severity,
    item.status,
    detectionDate(item),
    statusDate(item),
    item.overdue ? 'Yes' : 'No',
    item.vendor_dependency ? 'Yes' : 'No',
    item.deviation_request ?? '',
    item.finding_id ?? '',
    item.finding?.resource_id ?? '',
    item.evidence.map((e) => `${e.filename} (sha256 ${e.sha256})`).join('\n'),
    commentLog(item),
  ].map((v) => cell(v));
}

export function poamCsv(data: ExportData): string {
  const lines = [CSV_COLUMNS.map((c) => cell(c)).join(','), ...data.items.map((item) => csvRow(item).join(','))];
  return `${lines.join('\r\n')}\r\n`;
}
