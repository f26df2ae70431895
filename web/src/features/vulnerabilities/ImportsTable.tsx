import { useMemo } from 'react';
import { Group, Progress, Select, Text } from '@mantine/core';
import type { ColumnDef } from '@tanstack/react-table';
import { useTranslation } from 'react-i18next';
import { formatDate, formatNumber } from '../../i18n';
import { DataTable } from '../../ui/DataTable';
import { LightBadge } from '../../ui/LightBadge';
import { Pager } from '../../ui/Pager';
import { EmptyState, QueryView } from '../../ui/QueryState';
import { useUrlState } from '../../ui/url-state';
import { useImports, type ImportRow, type ImportsFilter } from './queries';
import { useUrlPaging } from '../../ui/url-paging';

const STATUS_COLORS: Record<ImportRow['status'], string> = { queued: 'gray', running: 'blue', succeeded: 'teal', unchanged: 'gray', failed: 'red', cancelled: 'yellow' };
const STATUSES = Object.keys(STATUS_COLORS) as ImportRow['status'][];
const SOURCES = ['kev', 'epss', 'nvd', 'osv'] as const;

/** The import runs of the vulnerability store (platform operators): progress while they run, counts or where a file broke. */
export function ImportsTable() {
  const { t } = useTranslation('vulnerabilities');
  const url = useUrlState();
  const source = (url.get('source') || undefined) as ImportsFilter['source'];
  const status = (url.get('status') || undefined) as ImportsFilter['status'];
  const { page, perPage, setPaging } = useUrlPaging();
  const imports = useImports({ source, status, page, per_page: perPage });

  const columns = useMemo<ColumnDef<ImportRow>[]>(
    () => [
      { id: 'source', header: t('imports.source'), cell: ({ row }) => <Text size="sm">{row.original.source ? t(`sources.${row.original.source}`) : '—'}</Text> },
      {
        id: 'status',
        header: t('imports.status'),
        cell: ({ row }) => <LightBadge color={STATUS_COLORS[row.original.status]}>{t(`importStatus.${row.original.status}`)}</LightBadge>,
      },
      { id: 'progress', header: t('imports.progress'), cell: ({ row }) => <ImportProgress run={row.original} /> },
      {
        id: 'location',
        header: t('imports.location'),
        cell: ({ row }) => (
          <div>
            <Text size="sm" style={{ wordBreak: 'break-all' }}>
              {row.original.location}
            </Text>
            <Text size="xs" c="dimmed">
              {t(`trigger.${row.original.trigger}`)}
            </Text>
          </div>
        ),
      },
      { id: 'started', header: t('imports.started'), cell: ({ row }) => <Text size="sm">{formatDate(row.original.started_at)}</Text> },
      { id: 'finished', header: t('imports.finished'), cell: ({ row }) => <Text size="sm">{formatDate(row.original.finished_at)}</Text> },
    ],
    [t],
  );

  return (
    <>
      <Group gap="sm" mb="sm" wrap="wrap">
        <Select
          label={t('imports.source')}
          size="sm"
          w={180}
          placeholder={t('imports.anySource')}
          data={SOURCES.map((value) => ({ value, label: t(`sources.${value}`) }))}
          value={source ?? null}
          onChange={(value) => url.set({ source: value })}
          clearable
        />
        <Select
          label={t('imports.status')}
          size="sm"
          w={180}
          placeholder={t('imports.anyStatus')}
          data={STATUSES.map((value) => ({ value, label: t(`importStatus.${value}`) }))}
          value={status ?? null}
          onChange={(value) => url.set({ status: value })}
          clearable
        />
      </Group>
      <QueryView query={imports} isEmpty={(data) => data.items.length === 0} empty={<EmptyState title={t('imports.empty')} />}>
        {(data) => (
          <>
            <DataTable data={data.items} columns={columns} getRowId={(row) => row.id} caption={t('imports.caption')} />
            <Pager page={page} perPage={perPage} total={data.total} onChange={setPaging} />
          </>
        )}
      </QueryView>
    </>
  );
}

/** Bytes of an upload's size while it runs; afterwards what changed, or where the file broke. */
function ImportProgress({ run }: { run: ImportRow }) {
  const { t } = useTranslation('vulnerabilities');
  if (run.status === 'failed') {
    return (
      <Text size="sm" c="red.9">
        {t('imports.failedAt', { records: formatNumber(run.error_record ?? run.records), error: run.error ?? '' })}
      </Text>
    );
  }
  const share = run.size_bytes ? Math.min(1, run.bytes / run.size_bytes) : null;
  return (
    <div>
      {(run.status === 'running' || run.status === 'queued') && share !== null && (
        <Progress value={share * 100} size="sm" mb={4} aria-label={t('imports.progressLabel', { percent: Math.round(share * 100) })} />
      )}
      <Text size="xs">
        {t('imports.counts', {
          records: formatNumber(run.records),
          inserted: formatNumber(run.inserted),
          updated: formatNumber(run.updated),
          deleted: formatNumber(run.deleted),
        })}
      </Text>
    </div>
  );
}
