import { useMemo } from 'react';
import { Text } from '@mantine/core';
import type { ColumnDef } from '@tanstack/react-table';
import { useTranslation } from 'react-i18next';
import { DataTable } from '../../ui/DataTable';
import { Pager } from '../../ui/Pager';
import { EmptyState, QueryView } from '../../ui/QueryState';
import { SeverityDot } from '../../ui/SeverityBadge';
import { controlIdentityColumns } from './columns';
import { AttestationCell, ControlStateBadge, FindingsLink } from './badges';
import { useGaps, type Framework, type GapRow } from './queries';
import { useUrlPaging } from '../../ui/url-paging';

/** The gaps: applicable controls that fail, are unknown, or rest on an attestation not given. */
export function GapsTable({ framework }: { framework?: Framework }) {
  const { t } = useTranslation('controls');
  const { page, perPage, setPaging } = useUrlPaging();
  const gaps = useGaps({ framework, page, per_page: perPage });

  const columns = useMemo<ColumnDef<GapRow>[]>(
    () => [
      ...controlIdentityColumns<GapRow>({ control: t('columns.control'), title: t('columns.title') }),
      { id: 'gap', header: t('columns.gap'), cell: ({ row }) => <ControlStateBadge state={row.original.status} /> },
      {
        id: 'severity',
        header: t('columns.severity'),
        cell: ({ row }) => (row.original.max_severity ? <SeverityDot severity={row.original.max_severity} /> : <Text size="sm">—</Text>),
      },
      {
        id: 'findings',
        header: t('columns.findings'),
        cell: ({ row }) =>
          row.original.automated ? (
            <FindingsLink framework={row.original.framework} controlId={row.original.control_id}>
              {t('findingsCount', { count: row.original.findings })}
            </FindingsLink>
          ) : (
            <Text size="sm">—</Text>
          ),
      },
      {
        id: 'attestation',
        header: t('columns.attestation'),
        cell: ({ row }) => <AttestationCell status={row.original.attestation_status} expiresAt={row.original.attestation_expires_at} />,
      },
    ],
    [t],
  );

  return (
    <QueryView query={gaps} isEmpty={(data) => data.items.length === 0} empty={<EmptyState title={t('gapsEmpty')} />}>
      {(data) => (
        <>
          <DataTable data={data.items} columns={columns} getRowId={(row) => `${row.framework}:${row.control_id}`} caption={t('gapsCaption')} />
          <Pager page={page} perPage={perPage} total={data.total} onChange={setPaging} />
        </>
      )}
    </QueryView>
  );
}
