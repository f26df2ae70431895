import { Button, Stack, Text, Title } from '@mantine/core';
import type { ColumnDef } from '@tanstack/react-table';
import { useTranslation } from 'react-i18next';
import { useUrlState } from '../../../ui/url-state';
import { formatDate } from '../../../i18n';
import { PagedTable } from '../PagedTable';
import { useUrlPaging } from '../../../ui/url-paging';
import { JobStatusCell } from '../JobStatusCell';
import { useScheduleRuns, useSchedules } from '../schedule-queries';

const STATUS_COLORS: Record<string, string> = { running: 'blue', succeeded: 'teal', failed: 'red', cancelled: 'gray', skipped: 'gray' };

interface Schedule {
  id: string;
  name: string;
  kind: string;
  cron: string | null;
  interval_seconds: number | null;
  time_zone: string;
  enabled: boolean;
  next_run_at: string | null;
  last_run_at: string | null;
  last_status: string | null;
}

interface Run {
  id: string;
  status: string;
  due_at: string;
  started_at: string;
  finished_at: string | null;
  error: string | null;
}

/** Schedules of the workspace (discovery jobs and audits on a cron expression or an interval) and a chosen one's runs. */
export function SchedulesTab() {
  const { t } = useTranslation('admin');
  const url = useUrlState();
  const { page, perPage } = useUrlPaging();
  const schedules = useSchedules({ page, per_page: perPage });
  const selected = url.get('schedule');
  const selectedName = schedules.data?.items.find((s) => s.id === selected)?.name ?? '';

  const columns: ColumnDef<Schedule>[] = [
    { id: 'name', header: t('schedules.name'), cell: ({ row }) => row.original.name },
    { id: 'kind', header: t('schedules.kind'), cell: ({ row }) => t(`schedules.kinds.${row.original.kind}`, { defaultValue: row.original.kind }) },
    {
      id: 'timing',
      header: t('schedules.timing'),
      cell: ({ row }) =>
        row.original.cron !== null
          ? `${row.original.cron} (${row.original.time_zone})`
          : t('schedules.every', { minutes: Math.round((row.original.interval_seconds ?? 0) / 60) }),
    },
    { id: 'enabled', header: t('schedules.enabled'), cell: ({ row }) => (row.original.enabled ? t('schedules.on') : t('schedules.off')) },
    { id: 'next', header: t('schedules.next'), cell: ({ row }) => formatDate(row.original.next_run_at) },
    { id: 'last', header: t('schedules.last'), cell: ({ row }) => formatDate(row.original.last_run_at) },
    {
      id: 'status',
      header: t('schedules.status'),
      cell: ({ row }) =>
        row.original.last_status ? (
          <JobStatusCell label={t(`schedules.statuses.${row.original.last_status}`, { defaultValue: row.original.last_status })} color={STATUS_COLORS[row.original.last_status] ?? 'gray'} error={null} />
        ) : (
          '—'
        ),
    },
    {
      id: 'runs',
      header: t('actions'),
      cell: ({ row }) => (
        <Button size="xs" variant="subtle" aria-label={t('schedules.showRunsOf', { name: row.original.name })} onClick={() => url.set({ schedule: row.original.id })}>
          {t('schedules.showRuns')}
        </Button>
      ),
    },
  ];

  return (
    <Stack>
      <Title order={2} size="h3">
        {t('schedules.title')}
      </Title>
      <PagedTable query={schedules} columns={columns} getRowId={(s) => s.id} caption={t('schedules.caption')} empty={<Text c="dimmed">{t('schedules.empty')}</Text>} />
      {selected && <Runs scheduleId={selected} name={selectedName} />}
    </Stack>
  );
}

function Runs({ scheduleId, name }: { scheduleId: string; name: string }) {
  const { t } = useTranslation('admin');
  const runs = useScheduleRuns(scheduleId, { page: 1, per_page: 50 });
  const columns: ColumnDef<Run>[] = [
    { id: 'due', header: t('schedules.due'), cell: ({ row }) => formatDate(row.original.due_at) },
    { id: 'started', header: t('schedules.started'), cell: ({ row }) => formatDate(row.original.started_at) },
    { id: 'finished', header: t('schedules.finished'), cell: ({ row }) => formatDate(row.original.finished_at) },
    {
      id: 'status',
      header: t('schedules.status'),
      cell: ({ row }) => (
        <JobStatusCell label={t(`schedules.statuses.${row.original.status}`, { defaultValue: row.original.status })} color={STATUS_COLORS[row.original.status] ?? 'gray'} error={row.original.error} />
      ),
    },
  ];
  return (
    <Stack>
      <Title order={3} size="h4">
        {t('schedules.runsTitle', { name })}
      </Title>
      <PagedTable query={runs} columns={columns} getRowId={(r) => r.id} caption={t('schedules.runsCaption', { name })} empty={<Text c="dimmed">{t('schedules.noRuns')}</Text>} />
    </Stack>
  );
}
