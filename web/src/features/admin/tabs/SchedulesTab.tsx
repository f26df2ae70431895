import { useState } from 'react';
import { Button, Group, Modal, Stack, Switch, Text, Title } from '@mantine/core';
import type { ColumnDef } from '@tanstack/react-table';
import { useTranslation } from 'react-i18next';
import type { TFunction } from 'i18next';
import { useSession } from '../../../session/session';
import { notifySuccess } from '../../../ui/notify';
import { DangerRowButton, notifyOutcome } from '../RowAction';
import { ScheduleForm } from '../schedules/ScheduleForm';
import { useUrlState } from '../../../ui/url-state';
import { formatDate } from '../../../i18n';
import { PagedTable } from '../PagedTable';
import { useUrlPaging } from '../../../ui/url-paging';
import { JobStatusCell } from '../JobStatusCell';
import { useDeleteSchedule, useScheduleRuns, useSchedules, useUpdateSchedule, type Schedule, type ScheduleKind } from '../schedule-queries';

const STATUS_COLORS: Record<string, string> = { running: 'blue', succeeded: 'teal', failed: 'red', cancelled: 'gray', skipped: 'gray' };

interface Run {
  id: string;
  status: string;
  due_at: string;
  started_at: string;
  finished_at: string | null;
  error: string | null;
}

/** What a schedule's kind needs to be changed: the permission of what it runs. */
const WRITE_PERMISSION: Record<ScheduleKind, string> = { discovery: 'jobs:write', audit: 'audit:run' };
const KINDS: ScheduleKind[] = ['audit', 'discovery'];

/**
 * Schedules of the workspace (discovery jobs and audits on a cron expression or an interval) and a
 * chosen one's runs. Creating, editing, enabling and deleting show for the kinds the role may change.
 */
export function SchedulesTab() {
  const { t } = useTranslation('admin');
  const { can } = useSession();
  const url = useUrlState();
  const { page, perPage } = useUrlPaging();
  const schedules = useSchedules({ page, per_page: perPage });
  const update = useUpdateSchedule();
  const remove = useDeleteSchedule();
  const [editing, setEditing] = useState<Schedule | 'new' | null>(null);
  const selected = url.get('schedule');
  const selectedName = schedules.data?.items.find((s) => s.id === selected)?.name ?? '';
  const writable = KINDS.filter((kind) => can(WRITE_PERMISSION[kind]));
  const mayChange = (schedule: Schedule) => can(WRITE_PERMISSION[schedule.kind]);

  const columns: ColumnDef<Schedule>[] = [
    { id: 'name', header: t('schedules.name'), cell: ({ row }) => row.original.name },
    { id: 'kind', header: t('schedules.kind'), cell: ({ row }) => t(`schedules.kinds.${row.original.kind}`, { defaultValue: row.original.kind }) },
    { id: 'timing', header: t('schedules.timing'), cell: ({ row }) => timingText(t, row.original) },
    {
      id: 'enabled',
      header: t('schedules.enabled'),
      cell: ({ row }) =>
        mayChange(row.original) ? (
          <Switch
            checked={row.original.enabled}
            aria-label={t('schedules.enableOf', { name: row.original.name })}
            disabled={update.isPending && update.variables?.id === row.original.id}
            onChange={(event) => {
              const enabled = event.currentTarget.checked;
              update.mutate({ id: row.original.id, body: { enabled } }, notifyOutcome(t(enabled ? 'schedules.enabledNow' : 'schedules.disabledNow', { name: row.original.name })));
            }}
          />
        ) : row.original.enabled ? (
          t('schedules.on')
        ) : (
          t('schedules.off')
        ),
    },
    { id: 'next', header: t('schedules.next'), cell: ({ row }) => formatDate(row.original.next_run_at) },
    { id: 'last', header: t('schedules.last'), cell: ({ row }) => formatDate(row.original.last_run_at) },
    {
      id: 'status',
      header: t('schedules.status'),
      cell: ({ row }) =>
        row.original.last_status ? (
          <JobStatusCell
            label={t(`schedules.statuses.${row.original.last_status}`, { defaultValue: row.original.last_status })}
            color={STATUS_COLORS[row.original.last_status] ?? 'gray'}
            error={null}
          />
        ) : (
          '—'
        ),
    },
    {
      id: 'actions',
      header: t('actions'),
      cell: ({ row }) => (
        <Group gap={4} wrap="nowrap">
          <Button size="xs" variant="subtle" aria-label={t('schedules.showRunsOf', { name: row.original.name })} onClick={() => url.set({ schedule: row.original.id, page })}>
            {t('schedules.showRuns')}
          </Button>
          {mayChange(row.original) && (
            <>
              <Button size="xs" variant="subtle" aria-label={t('schedules.editOf', { name: row.original.name })} onClick={() => setEditing(row.original)}>
                {t('schedules.edit')}
              </Button>
              <DangerRowButton
                label={t('schedules.delete')}
                ariaLabel={t('schedules.deleteOf', { name: row.original.name })}
                confirm={t('schedules.confirmDelete', { name: row.original.name })}
                onClick={() =>
                  remove.mutate(row.original.id, {
                    ...notifyOutcome(t('schedules.deleted', { name: row.original.name })),
                    onSuccess: () => {
                      notifySuccess(t('schedules.deleted', { name: row.original.name }));
                      if (selected === row.original.id) url.set({ schedule: null, page });
                    },
                  })
                }
              />
            </>
          )}
        </Group>
      ),
    },
  ];

  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2} size="h3">
          {t('schedules.title')}
        </Title>
        {writable.length > 0 && <Button onClick={() => setEditing('new')}>{t('schedules.create')}</Button>}
      </Group>
      <PagedTable
        query={schedules}
        columns={columns}
        getRowId={(s) => s.id}
        caption={t('schedules.caption')}
        empty={<Text c="dimmed">{writable.length > 0 ? t('schedules.emptyWritable') : t('schedules.empty')}</Text>}
      />
      {selected && <Runs scheduleId={selected} name={selectedName} />}
      <Modal
        opened={editing !== null}
        onClose={() => setEditing(null)}
        closeButtonProps={{ 'aria-label': t('common:close') }}
        title={editing === 'new' || editing === null ? t('schedules.createTitle') : t('schedules.editTitle', { name: editing.name })}
        size="lg"
      >
        {editing !== null && (
          <ScheduleForm
            schedule={editing === 'new' ? null : editing}
            kinds={writable}
            onDone={(saved) => {
              notifySuccess(t(editing === 'new' ? 'schedules.created' : 'schedules.saved', { name: saved.name }));
              setEditing(null);
            }}
          />
        )}
      </Modal>
    </Stack>
  );
}

/** "Every 5 minutes", "Every 2 hours" or the cron expression and its zone. */
function timingText(t: TFunction<'admin'>, schedule: Schedule): string {
  if (schedule.cron !== null) return `${schedule.cron} (${schedule.time_zone})`;
  const seconds = schedule.interval_seconds ?? 0;
  if (seconds % 86_400 === 0) return t('schedules.everyDays', { count: seconds / 86_400 });
  if (seconds % 3600 === 0) return t('schedules.everyHours', { count: seconds / 3600 });
  return t('schedules.every', { minutes: Math.round(seconds / 60) });
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
        <JobStatusCell
          label={t(`schedules.statuses.${row.original.status}`, { defaultValue: row.original.status })}
          color={STATUS_COLORS[row.original.status] ?? 'gray'}
          error={row.original.error}
        />
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
