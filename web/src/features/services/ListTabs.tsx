import { useMemo } from 'react';
import { Anchor, Text, TextInput } from '@mantine/core';
import type { UseQueryResult } from '@tanstack/react-query';
import type { ColumnDef } from '@tanstack/react-table';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { DataTable } from '../../ui/DataTable';
import { Pager } from '../../ui/Pager';
import { EmptyState, QueryView } from '../../ui/QueryState';
import { useUrlState } from '../../ui/url-state';
import { useUrlSearch } from '../../ui/url-search';
import { FindingCounts, HealthBadge } from './HealthBadge';
import { useApplications, useAssetGroups, useServices, type ApplicationRow, type AssetGroupRow, type ServiceRow } from './queries';

interface Page<T> {
  items: T[];
  total: number;
}

/** A searchable, paged list; search and page in the URL. */
function SearchedList<T>({
  useList,
  columns,
  caption,
  empty,
  rowId,
}: {
  useList: (filter: { search?: string; page: number; per_page: number }) => UseQueryResult<Page<T>>;
  columns: ColumnDef<T>[];
  caption: string;
  empty: string;
  rowId: (row: T) => string;
}) {
  const { t } = useTranslation('services');
  const url = useUrlState();
  const { typed: search, setTyped: setSearch, applied: current } = useUrlSearch();
  const { set } = url;
  const page = url.getNumber('page', 1);
  const perPage = url.getNumber('per_page', 50);
  const list = useList({ search: current || undefined, page, per_page: perPage });
  return (
    <>
      <TextInput label={t('search')} w={280} size="sm" mb="sm" value={search} onChange={(event) => setSearch(event.currentTarget.value)} />
      <QueryView query={list} isEmpty={(data) => data.items.length === 0} empty={<EmptyState title={empty} />}>
        {(data) => (
          <>
            <DataTable data={data.items} columns={columns} getRowId={rowId} caption={caption} />
            <Pager page={page} perPage={perPage} total={data.total} onChange={(next) => set({ page: next.page ?? 1, per_page: next.perPage ?? perPage })} />
          </>
        )}
      </QueryView>
    </>
  );
}

export function ServicesList() {
  const { t } = useTranslation('services');
  const columns = useMemo<ColumnDef<ServiceRow>[]>(
    () => [
      {
        id: 'name',
        header: t('columns.service'),
        cell: ({ row }) => (
          <Anchor component={Link} to={`/services/${row.original.id}`} size="sm">
            {row.original.name}
          </Anchor>
        ),
      },
      { id: 'criticality', header: t('columns.criticality'), cell: ({ row }) => <Text size="sm">{t(`criticality.${row.original.criticality}`)}</Text> },
      { id: 'health', header: t('columns.health'), cell: ({ row }) => <HealthBadge health={row.original.health} /> },
      { id: 'findings', header: t('columns.findings'), cell: ({ row }) => <FindingCounts counts={row.original.findings_by_severity} /> },
      { id: 'applications', header: t('columns.applications'), cell: ({ row }) => <Text size="sm">{row.original.application_count}</Text> },
      { id: 'resources', header: t('columns.resources'), cell: ({ row }) => <Text size="sm">{row.original.resource_count}</Text> },
      { id: 'owner', header: t('columns.owner'), cell: ({ row }) => <Text size="sm">{row.original.owner ?? '—'}</Text> },
    ],
    [t],
  );
  return <SearchedList useList={useServices} columns={columns} caption={t('captions.services')} empty={t('empty.services')} rowId={(row) => row.id} />;
}

export function ApplicationsList() {
  const { t } = useTranslation('services');
  const columns = useMemo<ColumnDef<ApplicationRow>[]>(
    () => [
      {
        id: 'name',
        header: t('columns.application'),
        cell: ({ row }) => (
          <div>
            <Anchor component={Link} to={`/services/applications/${row.original.id}`} size="sm">
              {row.original.name}
            </Anchor>
            {row.original.derived && (
              <Text size="xs" c="dimmed">
                {t('derived')}
              </Text>
            )}
          </div>
        ),
      },
      { id: 'health', header: t('columns.health'), cell: ({ row }) => <HealthBadge health={row.original.health} /> },
      { id: 'findings', header: t('columns.findings'), cell: ({ row }) => <FindingCounts counts={row.original.findings_by_severity} /> },
      { id: 'resources', header: t('columns.resources'), cell: ({ row }) => <Text size="sm">{row.original.resource_count}</Text> },
      { id: 'services', header: t('columns.services'), cell: ({ row }) => <Text size="sm">{row.original.services.map((s) => s.name).join(', ') || '—'}</Text> },
    ],
    [t],
  );
  return <SearchedList useList={useApplications} columns={columns} caption={t('captions.applications')} empty={t('empty.applications')} rowId={(row) => row.id} />;
}

export function AssetGroupsList() {
  const { t } = useTranslation('services');
  const columns = useMemo<ColumnDef<AssetGroupRow>[]>(
    () => [
      {
        id: 'name',
        header: t('columns.assetGroup'),
        cell: ({ row }) => (
          <Anchor component={Link} to={`/services/asset-groups/${row.original.id}`} size="sm">
            {row.original.name}
          </Anchor>
        ),
      },
      {
        id: 'filter',
        header: t('columns.filter'),
        cell: ({ row }) => (
          <Text size="xs" ff="monospace">
            {row.original.filter}
          </Text>
        ),
      },
      { id: 'members', header: t('columns.members'), cell: ({ row }) => <Text size="sm">{row.original.member_count}</Text> },
    ],
    [t],
  );
  return <SearchedList useList={useAssetGroups} columns={columns} caption={t('captions.assetGroups')} empty={t('empty.assetGroups')} rowId={(row) => row.id} />;
}
