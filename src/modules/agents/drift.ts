import { createHash } from 'node:crypto';
import type { ReportFile } from './report-schema.js';
import { fillTemplate, type TemplateRule } from './host-rules.js';
import type { DesiredFinding } from '../compliance/index.js';

/**
 * Config drift: the monitored files of a report against the baseline of the last processed one. A
 * file whose SHA-256, size, owner, group or permissions changed has drifted. The first sight of a path
 * only sets its baseline; a path missing from a later report leaves the baseline (the monitored set
 * may have been changed with --fim) and raises nothing. A hash is compared only when both reports
 * could read the file (an unprivileged agent cannot read /etc/shadow: its hash is null).
 */

export interface FileState {
  sha256: string | null;
  size_bytes: number | null;
  modified_at: string | null;
  permissions: string | null;
  owner: string | null;
  group: string | null;
}

export interface FileChange {
  path: string;
  previous: FileState;
  current: FileState;
  /** Which attributes changed: sha256, size_bytes, permissions, owner, group. */
  changed: string[];
}

export function fileState(f: ReportFile): FileState {
  return {
    sha256: f.sha256,
    size_bytes: f.size_bytes,
    modified_at: f.modified_at ? new Date(f.modified_at).toISOString() : null,
    permissions: f.permissions,
    owner: f.owner,
    group: f.group,
  };
}

export function diffFile(path: string, previous: FileState, current: FileState): FileChange | null {
  const changed: string[] = [];
  if (previous.sha256 && current.sha256 && previous.sha256 !== current.sha256) changed.push('sha256');
  if (previous.size_bytes !== null && current.size_bytes !== null && Number(previous.size_bytes) !== Number(current.size_bytes)) changed.push('size_bytes');
  for (const key of ['permissions', 'owner', 'group'] as const) {
    if (previous[key] !== null && current[key] !== null && previous[key] !== current[key]) changed.push(key);
  }
  return changed.length ? { path, previous, current, changed } : null;
}

/** Rule id of a file's drift finding: readable, colon-free, and unique per path (short hash). */
export function driftRuleId(prefix: string, path: string): string {
  const slug = path
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48)
    .replace(/-+$/, '');
  const hash = createHash('sha256').update(path).digest('hex').slice(0, 8);
  return `${prefix}-${slug ? `${slug}-` : ''}${hash}`;
}

function describe(change: FileChange): string {
  return change.changed
    .map((key) => {
      const before = change.previous[key as keyof FileState];
      const after = change.current[key as keyof FileState];
      const short = (v: unknown) => (key === 'sha256' && typeof v === 'string' ? `${v.slice(0, 12)}…` : String(v));
      return `${key} ${short(before)} → ${short(after)}`;
    })
    .join(', ');
}

const HISTORY = 10;

export function driftFinding(rule: TemplateRule, change: FileChange, scan: { scanId: string; previousScanId: string | null; at: Date }): DesiredFinding {
  const values = { path: change.path, changes: describe(change) };
  const entry = {
    detected_at: scan.at.toISOString(),
    scan_id: scan.scanId,
    previous_scan_id: scan.previousScanId,
    changed: change.changed,
    previous_sha256: change.previous.sha256,
    sha256: change.current.sha256,
  };
  return {
    rule_id: driftRuleId(rule.id, change.path),
    framework: rule.framework,
    control_id: rule.control_id,
    framework_mappings: rule.framework_mappings,
    base_severity: rule.severity,
    severity: rule.severity,
    title: fillTemplate(rule.finding_title, values),
    description: fillTemplate(rule.finding_description, values),
    remediation: fillTemplate(rule.remediation.summary, values),
    cve_ids: [],
    tags: ['config-drift', 'host'],
    details: {
      kind: 'config-drift',
      path: change.path,
      previous_sha256: change.previous.sha256,
      sha256: change.current.sha256,
      changed: change.changed,
      previous: change.previous,
      current: change.current,
      scan_id: scan.scanId,
      previous_scan_id: scan.previousScanId,
      detected_at: scan.at.toISOString(),
      history: [entry],
    },
  };
}

/** A further change of a file whose drift finding is still open: the latest change, history kept. */
export function mergeDrift(existing: { details: Record<string, unknown> }, next: DesiredFinding): DesiredFinding {
  const before = Array.isArray(existing.details.history) ? (existing.details.history as unknown[]) : [];
  const added = (next.details.history as unknown[]) ?? [];
  return { ...next, details: { ...next.details, history: [...before, ...added].slice(-HISTORY) } };
}
