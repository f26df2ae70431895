import { useState } from 'react';
import { Alert, Anchor, Button, FileInput, Group, Loader, Select, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import type { ColumnDef } from '@tanstack/react-table';
import { Link } from 'react-router';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../../api/errors';
import { formatDate, formatNumber } from '../../../i18n';
import { useSession } from '../../../session/session';
import { Field, Section } from '../../../ui/DetailSection';
import { DataTable } from '../../../ui/DataTable';
import { notifySuccess } from '../../../ui/notify';
import { QueryView } from '../../../ui/QueryState';
import { useUrlPaging } from '../../../ui/url-paging';
import { useUrlState } from '../../../ui/url-state';
import { JobStatusCell } from '../JobStatusCell';
import { PagedTable } from '../PagedTable';
import {
  IMPORT_FORMATS,
  IMPORT_STATUSES,
  inProgress,
  useImport,
  useImports,
  useUploadImport,
  useUsernames,
  type ImportFormat,
  type ImportRow,
  type ImportStatus,
} from '../imports/queries';

const STATUS_COLORS: Record<ImportStatus, string> = { queued: 'gray', running: 'blue', succeeded: 'teal', failed: 'red' };
const AUTO = 'auto';

/** "user:<id>" as the user's name when the tenant lists them; an API key as such. */
function useWho() {
  const { t } = useTranslation('admin');
  const names = useUsernames();
  return (createdBy: string | null): string => {
    if (!createdBy) return '—';
    const [type, id = ''] = createdBy.split(':');
    if (type === 'user') return names.data?.get(id) ?? createdBy;
    if (type === 'api_key') return t('imports.apiKey');
    return createdBy;
  };
}

/**
 * Scanner imports (Prowler, Security Hub, SARIF, AWS Config): upload a file, follow its import to the
 * end, read the records it could not use. Filters, page and the opened import are in the URL.
 */
export function ImportsTab() {
  const { t } = useTranslation('admin');
  const { can } = useSession();
  const url = useUrlState();
  const { page, perPage } = useUrlPaging();
  const status = url.get('status') as ImportStatus | '';
  const format = url.get('format') as ImportFormat | '';
  const opened = url.get('import');
  const imports = useImports({
    page,
    per_page: perPage,
    ...(IMPORT_STATUSES.includes(status as ImportStatus) ? { status: status as ImportStatus } : {}),
    ...(IMPORT_FORMATS.includes(format as ImportFormat) ? { format: format as ImportFormat } : {}),
  });
  const who = useWho();

  const columns: ColumnDef<ImportRow>[] = [
    {
      id: 'file',
      header: t('imports.file'),
      cell: ({ row }) => (
        <Stack gap={0} miw={180}>
          <Text size="sm" style={{ overflowWrap: 'break-word' }}>
            {row.original.file_name}
          </Text>
          <Text size="xs" c="dimmed">
            {t(`imports.formats.${row.original.format}`)}
            {row.original.source ? ` · ${row.original.source}` : ''}
          </Text>
        </Stack>
      ),
    },
    {
      id: 'status',
      header: t('imports.status'),
      cell: ({ row }) => <JobStatusCell label={t(`imports.statuses.${row.original.status}`)} color={STATUS_COLORS[row.original.status]} error={row.original.error} />,
    },
    { id: 'records', header: t('imports.records'), cell: ({ row }) => formatNumber(row.original.counts.records) },
    {
      id: 'findings',
      header: t('imports.findings'),
      cell: ({ row }) =>
        t('imports.findingsSummary', { created: formatNumber(row.original.counts.findings_created), resolved: formatNumber(row.original.counts.findings_resolved) }),
    },
    { id: 'nodes', header: t('imports.nodes'), cell: ({ row }) => formatNumber(row.original.counts.nodes) },
    { id: 'errors', header: t('imports.errors'), cell: ({ row }) => formatNumber(row.original.counts.errors) },
    {
      id: 'when',
      header: t('imports.when'),
      cell: ({ row }) => (
        <Stack gap={0}>
          <Text size="xs" style={{ whiteSpace: 'nowrap' }}>
            {t('imports.startedAt', { date: formatDate(row.original.started_at ?? row.original.created_at) })}
          </Text>
          <Text size="xs" style={{ whiteSpace: 'nowrap' }}>
            {t('imports.finishedAt', { date: formatDate(row.original.finished_at) })}
          </Text>
        </Stack>
      ),
    },
    { id: 'by', header: t('imports.by'), cell: ({ row }) => who(row.original.created_by) },
    {
      id: 'actions',
      header: t('actions'),
      cell: ({ row }) => (
        <Button size="xs" variant="subtle" aria-label={t('imports.openOf', { name: row.original.file_name })} onClick={() => url.set({ import: row.original.id, page })}>
          {t('imports.open')}
        </Button>
      ),
    },
  ];

  return (
    <Stack>
      <Title order={2} size="h3">
        {t('imports.title')}
      </Title>
      <Text size="sm" c="dimmed" maw={720}>
        {t('imports.intro')}
      </Text>
      {can('jobs:write') && <UploadForm onUploaded={(id) => url.set({ import: id, status: null, format: null })} />}
      {opened && <ImportDetail id={opened} onClose={() => url.set({ import: null, page })} />}
      <Title order={3} size="h5" mt="sm">
        {t('imports.listTitle')}
      </Title>
      <Group gap="sm" align="flex-end" role="search" aria-label={t('imports.filters')}>
        <Select
          label={t('imports.status')}
          data={IMPORT_STATUSES.map((value) => ({ value, label: t(`imports.statuses.${value}`) }))}
          value={status || null}
          onChange={(value) => url.set({ status: value })}
          placeholder={t('imports.any')}
          clearable
          w={180}
        />
        <Select
          label={t('imports.format')}
          data={IMPORT_FORMATS.map((value) => ({ value, label: t(`imports.formats.${value}`) }))}
          value={format || null}
          onChange={(value) => url.set({ format: value })}
          placeholder={t('imports.any')}
          clearable
          w={240}
        />
      </Group>
      <PagedTable
        query={imports}
        columns={columns}
        getRowId={(row) => row.id}
        caption={t('imports.caption')}
        empty={<Text c="dimmed">{status || format ? t('imports.emptyFiltered') : t('imports.empty')}</Text>}
      />
    </Stack>
  );
}

function UploadForm({ onUploaded }: { onUploaded: (id: string) => void }) {
  const { t } = useTranslation('admin');
  const upload = useUploadImport();
  const [file, setFile] = useState<File | null>(null);
  const [format, setFormat] = useState<string>(AUTO);
  const [fileError, setFileError] = useState<string | null>(null);
  const [failure, setFailure] = useState<string | null>(null);

  const submit = () => {
    setFailure(null);
    if (!file) {
      setFileError(t('imports.errorsForm.file'));
      return;
    }
    setFileError(null);
    upload.mutate(
      { file, format: format === AUTO ? null : (format as ImportFormat) },
      {
        onSuccess: (created) => {
          notifySuccess(t('imports.uploaded', { name: created.file_name }));
          setFile(null);
          onUploaded(created.id);
        },
        onError: (error) => setFailure(errorMessage(error)),
      },
    );
  };

  return (
    <form
      onSubmit={(event) => {
        event.preventDefault();
        submit();
      }}
      noValidate
      aria-labelledby="new-import-title"
    >
      <Stack gap="xs" maw={720}>
        <Title order={3} size="h5" id="new-import-title">
          {t('imports.uploadTitle')}
        </Title>
        {failure && (
          <Alert color="red" role="alert" title={t('imports.refused')}>
            {failure}
          </Alert>
        )}
        <Group align="flex-start" wrap="wrap">
          <FileInput
            label={t('imports.fileLabel')}
            description={t('imports.fileHelp')}
            value={file}
            onChange={(next) => {
              setFile(next);
              setFileError(null);
            }}
            accept=".json,.sarif,.gz,.ocsf,application/json,application/gzip"
            error={fileError}
            clearable
            clearButtonProps={{ 'aria-label': t('imports.clearFile') }}
            required
            w={340}
          />
          <Select
            label={t('imports.format')}
            description={t('imports.formatHelp')}
            data={[{ value: AUTO, label: t('imports.auto') }, ...IMPORT_FORMATS.map((value) => ({ value, label: t(`imports.formats.${value}`) }))]}
            value={format}
            onChange={(value) => setFormat(value ?? AUTO)}
            allowDeselect={false}
            w={260}
          />
        </Group>
        <Group>
          <Button type="submit" loading={upload.isPending}>
            {t('imports.upload')}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

/** One import: its progress while the job reads it, then its counts, the findings it brought and the records it could not read. */
function ImportDetail({ id, onClose }: { id: string; onClose: () => void }) {
  const { t } = useTranslation('admin');
  const query = useImport(id);
  const who = useWho();
  return (
    <QueryView query={query}>
      {(item) => (
        <Section title={t('imports.detailTitle', { name: item.file_name })}>
          <Stack gap="sm">
            <Group gap="sm" aria-live="polite">
              <JobStatusCell label={t(`imports.statuses.${item.status}`)} color={STATUS_COLORS[item.status]} />
              {inProgress(item.status) && (
                <>
                  <Loader size="xs" aria-hidden />
                  <Text size="sm">{t('imports.progress', { records: formatNumber(item.counts.records) })}</Text>
                </>
              )}
            </Group>
            {item.error && (
              <Alert color="red" role="alert" title={t('imports.failed')}>
                {item.error}
              </Alert>
            )}
            <SimpleGrid cols={{ base: 2, sm: 4 }} spacing="sm" component="dl" m={0}>
              <Field label={t('imports.format')}>{t(`imports.formats.${item.format}`)}</Field>
              <Field label={t('imports.source')}>{item.source || '—'}</Field>
              <Field label={t('imports.size')}>{t('imports.bytes', { size: formatNumber(item.size_bytes) })}</Field>
              <Field label={t('imports.by')}>{who(item.created_by)}</Field>
              <Field label={t('imports.records')}>{formatNumber(item.counts.records)}</Field>
              <Field label={t('imports.created')}>{formatNumber(item.counts.findings_created)}</Field>
              <Field label={t('imports.updated')}>{formatNumber(item.counts.findings_updated)}</Field>
              <Field label={t('imports.resolved')}>{formatNumber(item.counts.findings_resolved)}</Field>
              <Field label={t('imports.reopened')}>{formatNumber(item.counts.findings_reopened)}</Field>
              <Field label={t('imports.nodes')}>{formatNumber(item.counts.nodes)}</Field>
              <Field label={t('imports.errors')}>{formatNumber(item.counts.errors)}</Field>
              <Field label={t('imports.started')}>{formatDate(item.started_at)}</Field>
              <Field label={t('imports.finished')}>{formatDate(item.finished_at)}</Field>
            </SimpleGrid>
            <Group gap="md">
              {item.source && (
                <Anchor component={Link} to={`/findings?${new URLSearchParams({ source: item.source, status: 'all' }).toString()}`}>
                  {t('imports.findingsOf', { source: item.source })}
                </Anchor>
              )}
              <Button size="xs" variant="default" onClick={onClose}>
                {t('imports.close')}
              </Button>
            </Group>
            {item.errors.length > 0 && (
              <Stack gap="xs">
                <Title order={3} size="h5">
                  {t('imports.recordErrors', { n: formatNumber(item.counts.errors) })}
                </Title>
                {item.counts.errors > item.errors.length && (
                  <Text size="sm" c="dimmed">
                    {t('imports.firstErrors', { shown: formatNumber(item.errors.length), total: formatNumber(item.counts.errors) })}
                  </Text>
                )}
                <DataTable
                  data={item.errors}
                  columns={[
                    { id: 'record', header: t('imports.record'), cell: ({ row }) => formatNumber(row.original.record) },
                    { id: 'message', header: t('imports.message'), cell: ({ row }) => row.original.message },
                  ]}
                  getRowId={(row) => String(row.record)}
                  caption={t('imports.errorsCaption', { name: item.file_name })}
                />
              </Stack>
            )}
          </Stack>
        </Section>
      )}
    </QueryView>
  );
}
