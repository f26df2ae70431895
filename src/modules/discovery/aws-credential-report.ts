import { parse } from 'csv-parse/sync';

/**
 * IAM's credential report (GetCredentialReport: a CSV with one row per user and one for the root
 * user, `<root_account>`), as the `supplementaryConfiguration.CredentialReport` of an AWS::IAM::User
 * node (content/aws-config-schema/SOURCES.md, "Additions"). AWS Config records none of it; the
 * access-key, console-MFA and root rules read it.
 *
 * Values are typed so conditions compare them directly: `true`/`false` are booleans, timestamps ISO
 * 8601 strings, and the report's `N/A` (never, or no such credential), `no_information` (not tracked
 * then) and `not_supported` (the root user's password fields) are null.
 */

export const ROOT_ROW = '<root_account>';

export interface AccessKeyFacts {
  slot: number;
  active: boolean;
  lastRotated: string | null;
  lastUsedDate: string | null;
  lastUsedRegion: string | null;
  lastUsedService: string | null;
}

export interface CredentialReport {
  generatedTime: string;
  user: string;
  arn: string;
  userCreationTime: string | null;
  passwordEnabled: boolean | null;
  passwordLastUsed: string | null;
  passwordLastChanged: string | null;
  mfaActive: boolean | null;
  /** The user's access keys that exist (a rotation date), active or not. */
  accessKeys: AccessKeyFacts[];
}

const ABSENT = new Set(['N/A', 'no_information', 'not_supported', '']);

const text = (v: string | undefined) => (v === undefined || ABSENT.has(v) ? null : v);
const flag = (v: string | undefined) => (v === 'true' ? true : v === 'false' ? false : null);
function time(v: string | undefined): string | null {
  const t = text(v);
  if (t === null) return null;
  const d = new Date(t);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

/** The report's rows by lower-cased user name (IAM user names are unique regardless of case). */
export function parseCredentialReport(csv: string, generatedTime: Date | string): Map<string, CredentialReport> {
  const generated = new Date(generatedTime).toISOString();
  const rows = parse(csv, { columns: true, skip_empty_lines: true, trim: true }) as Array<Record<string, string>>;
  const out = new Map<string, CredentialReport>();
  for (const row of rows) {
    if (!row.user) continue;
    const accessKeys: AccessKeyFacts[] = [];
    for (const slot of [1, 2]) {
      const lastRotated = time(row[`access_key_${slot}_last_rotated`]);
      const active = flag(row[`access_key_${slot}_active`]) === true;
      if (lastRotated === null && !active) continue;
      accessKeys.push({
        slot,
        active,
        lastRotated,
        lastUsedDate: time(row[`access_key_${slot}_last_used_date`]),
        lastUsedRegion: text(row[`access_key_${slot}_last_used_region`]),
        lastUsedService: text(row[`access_key_${slot}_last_used_service`]),
      });
    }
    out.set(row.user.toLowerCase(), {
      generatedTime: generated,
      user: row.user,
      arn: row.arn ?? '',
      userCreationTime: time(row.user_creation_time),
      passwordEnabled: flag(row.password_enabled),
      passwordLastUsed: time(row.password_last_used),
      passwordLastChanged: time(row.password_last_changed),
      mfaActive: flag(row.mfa_active),
      accessKeys,
    });
  }
  return out;
}
