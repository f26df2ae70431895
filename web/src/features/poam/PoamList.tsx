import { useMemo } from 'react';
import { Anchor, Badge, Group, Select, Text } from '@mantine/core';
import type { ColumnDef } from '@tanstack/react-table';
import { Link } from 'react-router';
import { useTranslation } from 'react-i18next';
import { formatDay } from '../../i18n';
import { DataTable } from '../../ui/DataTable';
import { Pager } from '../../ui/Pager';
import { EmptyState, QueryView } from '../../ui/QueryState';
import { SeverityDot } from '../../ui/SeverityBadge';
import { useUrlState } from '../../ui/url-state';
import { StatusBadge } from './StatusBadge';
import { POAM_SEVERITIES, POAM_STATUSES } from './model';
import { usePoamItems, type PoamItem } from './queries';
import { useUrlPaging } from '../../ui/url-paging';

/** The items, filtered by status, severity and overdue (all in the URL), sortable and paged. */
export function PoamList({ total }: { total: number }) {
  const { t } = useTranslation('poam');
  const url = useUrlState();
  const status = url.get('status') || undefined;
  const severity = url.get('severity') || undefined;
  const overdueParam = url.get('overdue');
  const overdue = overdueParam === 'true' ? true : overdueParam === 'false' ? false : undefined;
  const sort = url.get('sort') || 'number';
  const { page, perPage, setPaging } = useUrlPaging();
  const items = usePoamItems({ status, severity, overdue, sort, page, per_page: perPage });

  const columns = useMemo<ColumnDef<PoamItem>[]>(
    () => [
      {
        id: 'number',
        accessorFn: (row) => row.id,
        header: t('columns.id'),
        cell: ({ row }) => (
          <Anchor component={Link} to={`/poam/${row.original.id}`} size="sm" style={{ whiteSpace: 'nowrap' }}>
            {row.original.id}
          </Anchor>
        ),
      },
      {
        id: 'weakness',
        header: t('columns.weakness'),
        enableSorting: false,
        cell: ({ row }) => (
          <Text size="sm" lineClamp={2} maw={420}>
            {row.original.weakness_name}
          </Text>
        ),
      },
      { id: 'severity', accessorKey: 'severity', header: t('columns.severity'), cell: ({ row }) => <SeverityDot severity={row.original.severity} /> },
      { id: 'status', accessorKey: 'status', header: t('columns.status'), cell: ({ row }) => <StatusBadge status={row.original.status} /> },
      {
        id: 'scheduled_completion',
        accessorKey: 'scheduled_completion',
        header: t('columns.due'),
        cell: ({ row }) => (
          <Group gap={4} wrap="nowrap">
            <Text size="sm" component="time" dateTime={row.original.scheduled_completion}>
              {formatDay(row.original.scheduled_completion)}
            </Text>
            {row.original.overdue && (
              <Badge color="red" variant="outline" size="sm">
                {t('overdueBadge')}
              </Badge>
            )}
          </Group>
        ),
      },
      { id: 'contact', header: t('columns.contact'), enableSorting: false, cell: ({ row }) => <Text size="sm">{row.original.point_of_contact}</Text> },
    ],
    [t],
  );

  return (
    <>
      <Group gap="sm" mb="sm" wrap="wrap">
        <Select
          label={t('filters.status')}
          size="sm"
          w={180}
          data={[{ value: '', label: t('filters.all') }, ...POAM_STATUSES.map((value) => ({ value, label: t(`status.${value}`) }))]}
          value={status ?? ''}
          onChange={(value) => url.set({ status: value })}
          allowDeselect={false}
        />
        <Select
          label={t('filters.severity')}
          size="sm"
          w={180}
          data={[{ value: '', label: t('filters.all') }, ...POAM_SEVERITIES.map((value) => ({ value, label: t(`severity.${value}`) }))]}
          value={severity ?? ''}
          onChange={(value) => url.set({ severity: value })}
          allowDeselect={false}
        />
        <Select
          label={t('filters.overdue')}
          size="sm"
          w={180}
          data={[
            { value: '', label: t('filters.all') },
            { value: 'true', label: t('filters.onlyOverdue') },
            { value: 'false', label: t('filters.notOverdue') },
          ]}
          value={overdueParam}
          onChange={(value) => url.set({ overdue: value })}
          allowDeselect={false}
        />
      </Group>
      <QueryView query={items}>
        {(data) =>
          data.items.length === 0 ? (
            <EmptyState title={total === 0 ? t('emptyAll') : t('empty')} />
          ) : (
            <>
              <DataTable data={data.items} columns={columns} getRowId={(row) => row.id} caption={t('caption')} sort={sort} onSortChange={(next) => url.set({ sort: next })} />
              <Pager page={page} perPage={perPage} total={data.total} onChange={setPaging} />
            </>
          )
        }
      </QueryView>
    </>
  );
}
