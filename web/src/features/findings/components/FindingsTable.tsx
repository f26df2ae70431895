import { Stack, Text } from '@mantine/core';
import { createColumnHelper, type ColumnDef } from '@tanstack/react-table';
import { memo, useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import type { TFunction } from 'i18next';
import { Link } from 'react-router';
import { DataTable } from '../../../ui/DataTable';
import { LightBadge } from '../../../ui/LightBadge';
import cells from '../../../ui/light-cells.module.css';
import { SEVERITY_COLORS } from '../../../ui/SeverityBadge';
import { formatDate, formatDay, formatNumber } from '../../../i18n';
import type { ScoredFinding } from '../queries';

/** What the list and the scored view show of a finding (the scored view adds its score). */
type Row = Omit<ScoredFinding, 'risk_score' | 'risk_factors'> & Partial<Pick<ScoredFinding, 'risk_score' | 'risk_factors'>>;

const column = createColumnHelper<Row>();
const FACTORS = ['severity', 'exposure', 'criticality', 'kev', 'epss'] as const;

export function findingPath(id: string): string {
  return `/findings/${encodeURIComponent(id)}`;
}

const statusColor = (status: string) => (status === 'open' ? 'red' : status === 'accepted' ? 'grape' : 'teal');

export function StatusBadge({ status }: { status: string }) {
  const { t } = useTranslation('findings');
  return <LightBadge color={statusColor(status)}>{t(`status.${status}`, { defaultValue: status })}</LightBadge>;
}

/** The day in the row (the time on hover), kept on one line so the columns stay narrow. */
function Day({ value }: { value: string }) {
  return (
    <time className={cells.nowrap} dateTime={value} title={formatDate(value)}>
      {formatDay(value)}
    </time>
  );
}

/**
 * The list (sortable by the API's sort keys) or the scored view (ranked by risk score, factors shown).
 * Memoised: while a filter change waits for its answer the page re-renders with the same rows, and
 * rebuilding 50 to 500 rows of components then delayed the request itself.
 */
export const FindingsTable = memo(function FindingsTable({
  rows,
  scored,
  sort,
  onSortChange,
  selection,
  onSelectionChange,
}: {
  rows: Row[];
  scored: boolean;
  sort?: string;
  onSortChange?: (sort: string) => void;
  selection?: Record<string, boolean>;
  onSelectionChange?: (selection: Record<string, boolean>) => void;
}) {
  const { t } = useTranslation('findings');
  const columns = useMemo(() => findingColumns(t, scored), [t, scored]);
  return (
    <DataTable
      data={rows}
      columns={columns}
      getRowId={rowId}
      sort={scored ? undefined : sort}
      onSortChange={scored ? undefined : onSortChange}
      selection={selection}
      onSelectionChange={onSelectionChange}
      caption={scored ? t('captionScored') : t('captionList')}
    />
  );
});

const rowId = (row: Row) => row.id;

/**
 * A label looked up once per table rather than once per cell: the severities, statuses and frameworks
 * repeat on every row, and 50 rows asked i18next (and subscribed a badge to it) 150 times, about 0.1 s
 * of a cold load's profile.
 */
function labelCache(t: TFunction<'findings'>) {
  const labels = new Map<string, string>();
  return (key: string, fallback: string): string => {
    let label = labels.get(key);
    if (label === undefined) labels.set(key, (label = t(key, { defaultValue: fallback })));
    return label;
  };
}

function findingColumns(t: TFunction<'findings'>, scored: boolean): ColumnDef<Row, any>[] {
  const label = labelCache(t);
  return [
    ...(scored
      ? [
          column.accessor('risk_score', {
            header: t('columns.score'),
            enableSorting: false,
            cell: (info) => {
              const factors = info.row.original.risk_factors;
              return (
                <Stack gap={0}>
                  <Text fw={700}>{formatNumber(info.getValue() ?? 0)}</Text>
                  {factors && (
                    <Text size="xs" c="dimmed">
                      {FACTORS.map((name) => t('factor', { name: t(`factors.${name}`), value: formatNumber(factors[name], 2) })).join(' · ')}
                    </Text>
                  )}
                </Stack>
              );
            },
          }),
        ]
      : []),
    column.accessor('severity', {
      header: t('columns.severity'),
      cell: (info) => {
        // What SeverityBadge shows, with its label from the table's cache.
        const severity = info.getValue().toLowerCase();
        return <LightBadge color={SEVERITY_COLORS[severity] ?? 'gray'}>{label(`common:severity.${severity}`, severity)}</LightBadge>;
      },
    }),
    column.accessor('title', {
      header: t('columns.title'),
      enableSorting: false,
      cell: (info) => (
        <Link className={cells.link} to={findingPath(info.row.original.id)}>
          {info.getValue()}
        </Link>
      ),
    }),
    column.accessor('resource_id', {
      header: t('columns.resource'),
      cell: (info) => (
        <>
          <span className={cells.text}>{info.row.original.resource_name || info.getValue()}</span>
          {/* A native title, not a Tooltip: 50 to 500 positioned tooltips cost a tenth of a second to mount. */}
          <span className={cells.dimmed} title={info.getValue()}>
            {info.row.original.resource_type}
          </span>
        </>
      ),
    }),
    column.accessor('control_id', {
      header: t('columns.control'),
      enableSorting: false,
      cell: (info) => (
        <span className={cells.text}>
          {info.getValue()} <span className={cells.inlineDimmed}>{label(`frameworks.${info.row.original.framework}`, info.row.original.framework)}</span>
        </span>
      ),
    }),
    column.accessor('status', {
      header: t('columns.status'),
      enableSorting: false,
      cell: (info) => <LightBadge color={statusColor(info.getValue())}>{label(`status.${info.getValue()}`, info.getValue())}</LightBadge>,
    }),
    column.accessor('first_seen', { header: t('columns.firstSeen'), cell: (info) => <Day value={info.getValue()} /> }),
    column.accessor('last_seen', { header: t('columns.lastSeen'), cell: (info) => <Day value={info.getValue()} /> }),
  ];
}
