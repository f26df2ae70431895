import { useState } from 'react';
import { Button, Code, Group, Select, Stack, Text, TextInput, Title } from '@mantine/core';
import type { ColumnDef } from '@tanstack/react-table';
import { useTranslation } from 'react-i18next';
import { DataTable } from '../../../ui/DataTable';
import { Pager } from '../../../ui/Pager';
import { QueryView } from '../../../ui/QueryState';
import { useUrlState } from '../../../ui/url-state';
import { formatDate } from '../../../i18n';
import { useAuditLog } from '../queries';
import { useUrlPaging } from '../../../ui/url-paging';

interface Entry {
  id: string;
  action: string;
  actor_type: string;
  actor_name: string;
  target_type: string | null;
  target_id: string | null;
  details: Record<string, unknown>;
  ip: string | null;
  created_at: string;
}

const ACTOR_TYPES = ['user', 'api_key', 'system'] as const;

/** A day as the start (since) or end (until) of that day in UTC, as the API wants a date-time. */
const dayBound = (day: string, end: boolean) => (day ? new Date(`${day}T${end ? '23:59:59.999' : '00:00:00.000'}Z`).toISOString() : undefined);

/** The tenant's audit log, newest first, with its filters in the URL. */
export function AuditLogTab() {
  const { t } = useTranslation('admin');
  const url = useUrlState();
  const { page, perPage, setPaging } = useUrlPaging();
  const action = url.get('action');
  const actorType = url.get('actor_type');
  const since = url.get('since');
  const until = url.get('until');
  const [actionInput, setActionInput] = useState(action);
  const log = useAuditLog({
    page,
    per_page: perPage,
    ...(action ? { action } : {}),
    ...(actorType ? { actor_type: actorType as (typeof ACTOR_TYPES)[number] } : {}),
    ...(since ? { since: dayBound(since, false) } : {}),
    ...(until ? { until: dayBound(until, true) } : {}),
  });

  const columns: ColumnDef<Entry>[] = [
    { id: 'created_at', header: t('audit.time'), cell: ({ row }) => formatDate(row.original.created_at) },
    { id: 'actor', header: t('audit.actor'), cell: ({ row }) => `${row.original.actor_name} (${t(`audit.actorTypes.${row.original.actor_type}`)})` },
    { id: 'action', header: t('audit.action'), cell: ({ row }) => <Code>{row.original.action}</Code> },
    { id: 'target', header: t('audit.target'), cell: ({ row }) => (row.original.target_type ? `${row.original.target_type} ${row.original.target_id ?? ''}` : '—') },
    {
      id: 'details',
      header: t('audit.details'),
      cell: ({ row }) =>
        Object.keys(row.original.details).length ? (
          <Text size="xs" ff="monospace" style={{ wordBreak: 'break-all' }} maw={360}>
            {JSON.stringify(row.original.details)}
          </Text>
        ) : (
          '—'
        ),
    },
    { id: 'ip', header: t('audit.ip'), cell: ({ row }) => row.original.ip ?? '—' },
  ];

  return (
    <Stack>
      <Title order={2} size="h3">
        {t('audit.title')}
      </Title>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          url.set({ action: actionInput.trim() });
        }}
      >
        <Group align="flex-end" wrap="wrap">
          <TextInput label={t('audit.actionFilter')} description={t('audit.actionHelp')} value={actionInput} onChange={(e) => setActionInput(e.currentTarget.value)} w={240} />
          <Select
            label={t('audit.actorType')}
            data={ACTOR_TYPES.map((value) => ({ value, label: t(`audit.actorTypes.${value}`) }))}
            value={actorType || null}
            onChange={(value) => url.set({ actor_type: value })}
            clearable
            w={160}
          />
          <TextInput label={t('audit.since')} type="date" value={since} onChange={(e) => url.set({ since: e.currentTarget.value })} />
          <TextInput label={t('audit.until')} type="date" value={until} onChange={(e) => url.set({ until: e.currentTarget.value })} />
          <Button type="submit">{t('audit.apply')}</Button>
        </Group>
      </form>
      <QueryView query={log} isEmpty={(data) => data.items.length === 0} empty={<Text c="dimmed">{t('audit.empty')}</Text>}>
        {(data) => (
          <>
            <DataTable data={data.items as Entry[]} columns={columns} getRowId={(entry) => entry.id} caption={t('audit.caption')} />
            <Pager page={page} perPage={perPage} total={data.total} onChange={setPaging} />
          </>
        )}
      </QueryView>
    </Stack>
  );
}
