import { Type } from 'typebox';
import { DateOnly, Nullable, Paged, PageNumber, StringEnum, Timestamp } from '../../../platform/http/schemas.js';
import { FrameworkName } from '../schemas.js';

/** A point in time of a range: a UTC date or an RFC 3339 date-time (range.ts checks it, with its own 400). */
const TimeParam = (what: string) => Type.String({ maxLength: 40, description: `${what}: YYYY-MM-DD (a UTC day) or an RFC 3339 date-time` });

export const HISTORY_INTERVALS = ['day', 'run'] as const;
export const MAX_HISTORY_PER_PAGE = 1000;

export const HistoryQuery = Type.Object({
  framework: Type.Optional(FrameworkName),
  from: Type.Optional(TimeParam('the first point (default: 30 days before to)')),
  to: Type.Optional(TimeParam('the last point (default: now; a date includes its whole day)')),
  interval: Type.Optional(StringEnum(HISTORY_INTERVALS, { default: 'day', description: 'day: one point per UTC day; run: one per audit' })),
  page: PageNumber,
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_HISTORY_PER_PAGE, default: 400, description: 'points per page' })),
});

const HistoryState = Type.Object({
  score: Type.Integer(),
  by_severity: Type.Record(Type.String(), Type.Integer(), { description: 'active findings (open, not accepted) per severity' }),
  by_status: Type.Object({
    open: Type.Integer({ description: 'open and not accepted' }),
    accepted: Type.Integer({ description: 'open, under a live risk acceptance' }),
    resolved: Type.Integer(),
  }),
  controls: Type.Object({
    applicable: Type.Integer(),
    passing: Type.Integer(),
    failing: Type.Integer(),
    unknown: Type.Integer(),
  }),
});

export const HistoryPoint = Type.Object({
  at: Type.Unsafe<string | Date>({ type: 'string', format: 'date-time', description: 'interval=run: when the audit ended; interval=day: the day (00:00 UTC)' }),
  taken_at: Type.Unsafe<string | Date>({ type: 'string', format: 'date-time', description: 'when the state was measured' }),
  run_id: Nullable(Type.Unsafe<string>({ type: 'string', format: 'uuid', description: 'the audit run (or discovery job) that measured it; null: the history job' })),
  frameworks: Type.Record(Type.String(), HistoryState, { description: '"overall" and each enabled framework, or only ?framework=' }),
});

export const History = Paged(HistoryPoint, {
  interval: StringEnum(HISTORY_INTERVALS),
  from: Timestamp,
  to: Timestamp,
});

export const TrendQuery = Type.Object({
  from: Type.Optional(TimeParam('the first day (default: 29 days before to)')),
  to: Type.Optional(TimeParam('the last day (default: today)')),
});

const TrendCounts = {
  opened: Type.Integer({ description: 'findings created' }),
  resolved: Type.Integer(),
  reopened: Type.Integer({ description: 'resolved findings found again' }),
};

export const Trend = Type.Object({
  from: DateOnly,
  to: DateOnly,
  days: Type.Array(Type.Object({ date: DateOnly, ...TrendCounts }), { description: 'every UTC day of the range, oldest first' }),
  totals: Type.Object(TrendCounts),
  mean_time_to_resolve: Type.Record(
    Type.String(),
    Type.Object({
      resolved: Type.Integer({ description: 'findings of the severity resolved in the range' }),
      mean_seconds: Nullable(Type.Number({ description: 'mean seconds from opening (or the last reopening) to resolution; null when none was resolved' })),
    }),
    { description: 'per severity, every severity present' },
  ),
});

export const ForecastQuery = Type.Object({
  date: Type.String({ maxLength: 40, description: 'the future moment: YYYY-MM-DD (00:00 UTC of that day) or an RFC 3339 date-time, at most 731 days ahead' }),
});

export const Forecast = Type.Object({
  date: Timestamp,
  overall_score: Type.Integer({ description: 'the overall score expected at date' }),
  current_overall_score: Type.Integer(),
  by_framework: Type.Record(
    Type.String(),
    Type.Object({
      score: Type.Integer(),
      current_score: Type.Integer(),
      failing_controls: Type.Integer({ description: 'controls an active finding is expected to fail at date' }),
      current_failing_controls: Type.Integer(),
    }),
    { description: 'every enabled framework' },
  ),
  assumptions: Type.Object(
    {
      acceptances_expiring: Type.Integer({ description: 'live risk acceptances that expire by date: their findings count as active again' }),
      attestations_expiring: Type.Integer({ description: 'attested controls whose attestation expires by date: they no longer pass by attestation' }),
      poam_findings_closing: Type.Integer({ description: 'findings of POA&M items not closed whose scheduled completion day is before date: counted as resolved' }),
    },
    { description: 'what the forecast takes into account; nothing else changes (no new findings, renewals or attestations)' },
  ),
});
