import { useState } from 'react';
import { Anchor, Button, Select, Stack, Text, TextInput, Title } from '@mantine/core';
import type { ColumnDef } from '@tanstack/react-table';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../../api/errors';
import { notifySuccess } from '../../../ui/notify';
import { formatDate, formatNumber } from '../../../i18n';
import { useSession } from '../../../session/session';
import { AdminForm } from '../AdminForm';
import { PagedTable } from '../PagedTable';
import { useUrlPaging } from '../../../ui/url-paging';
import { JobStatusCell } from '../JobStatusCell';
import { useGenerateReport, useReports } from '../queries';

const FORMATS = ['pdf', 'json', 'csv'] as const;
const STATUS_COLORS: Record<string, string> = { queued: 'blue', running: 'blue', succeeded: 'teal', failed: 'red', expired: 'gray' };

interface Report {
  id: string;
  framework: string | null;
  format: string;
  status: string;
  file_name: string | null;
  size_bytes: number | null;
  created_at: string;
  expires_at: string | null;
  error?: string;
}

/** Compliance reports: generate one (PDF, JSON or CSV), follow it, download it with the session cookie. */
export function ReportsTab() {
  const { t } = useTranslation('admin');
  const { can, tenantId } = useSession();
  const { page, perPage } = useUrlPaging();
  const reports = useReports({ page, per_page: perPage });

  const columns: ColumnDef<Report>[] = [
    { id: 'created_at', header: t('reports.created'), cell: ({ row }) => formatDate(row.original.created_at) },
    { id: 'framework', header: t('reports.framework'), cell: ({ row }) => row.original.framework ?? t('reports.allFrameworks') },
    { id: 'format', header: t('reports.format'), cell: ({ row }) => row.original.format.toUpperCase() },
    {
      id: 'status',
      header: t('reports.status'),
      cell: ({ row }) => (
        <JobStatusCell
          label={t(`reports.statuses.${row.original.status}`, { defaultValue: row.original.status })}
          color={STATUS_COLORS[row.original.status] ?? 'gray'}
          error={row.original.error}
        />
      ),
    },
    {
      id: 'file',
      header: t('reports.file'),
      cell: ({ row }) =>
        row.original.status === 'succeeded' ? (
          // A plain link: the browser sends the session cookie with a same-origin GET, and saves the attachment.
          <Anchor href={`/api/v1/tenants/${tenantId}/reports/${row.original.id}/download`} download={row.original.file_name ?? undefined}>
            {t('reports.download', { name: row.original.file_name ?? row.original.id, size: formatNumber((row.original.size_bytes ?? 0) / 1024, 1) })}
          </Anchor>
        ) : (
          '—'
        ),
    },
    { id: 'expires_at', header: t('reports.expires'), cell: ({ row }) => formatDate(row.original.expires_at) },
  ];

  return (
    <Stack>
      <Title order={2} size="h3">
        {t('reports.title')}
      </Title>
      {can('reports:write') && <Generate />}
      <PagedTable query={reports} columns={columns} getRowId={(report) => report.id} caption={t('reports.caption')} empty={<Text c="dimmed">{t('reports.empty')}</Text>} />
    </Stack>
  );
}

function Generate() {
  const { t } = useTranslation('admin');
  const generate = useGenerateReport();
  const [format, setFormat] = useState<(typeof FORMATS)[number]>('pdf');
  const [framework, setFramework] = useState('');
  const [error, setError] = useState<string | null>(null);
  return (
    <AdminForm
      title={t('reports.generateTitle')}
      error={error}
      onSubmit={() => {
        setError(null);
        generate.mutate(
          { format, ...(framework.trim() ? { framework: framework.trim() } : {}) },
          { onSuccess: () => notifySuccess(t('reports.queued')), onError: (failure) => setError(errorMessage(failure)) },
        );
      }}
    >
      <Select
        label={t('reports.format')}
        data={FORMATS.map((value) => ({ value, label: value.toUpperCase() }))}
        value={format}
        onChange={(value) => value && setFormat(value as (typeof FORMATS)[number])}
        allowDeselect={false}
        w={120}
      />
      <TextInput label={t('reports.framework')} description={t('reports.frameworkHelp')} value={framework} onChange={(e) => setFramework(e.currentTarget.value)} />
      <Button type="submit" loading={generate.isPending}>
        {t('reports.generate')}
      </Button>
    </AdminForm>
  );
}
