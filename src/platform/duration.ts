import { lookupTable } from './lookup-table.js';
/** Durations in configuration are `<n>s`, `<n>m`, `<n>h` or `<n>d` (contracts section 1). */
const UNIT_MS: Record<string, number> = lookupTable({ s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 });

export function parseDuration(text: string, name = 'duration'): number {
  const match = /^(\d+)([smhd])$/.exec(text.trim());
  if (!match) throw new Error(`${name}: "${text}" is not a duration like 30s, 5m, 1h or 7d`);
  return Number(match[1]) * UNIT_MS[match[2]!]!;
}

/** Parses the `older_than`-style durations clients send; null when invalid. */
export function tryParseDuration(text: string): number | null {
  try {
    return parseDuration(text);
  } catch {
    return null;
  }
}
