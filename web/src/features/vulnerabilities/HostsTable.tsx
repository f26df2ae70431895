import { useMemo } from 'react';
import { Anchor, Text, TextInput } from '@mantine/core';
import type { ColumnDef } from '@tanstack/react-table';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { formatDate } from '../../i18n';
import { DataTable } from '../../ui/DataTable';
import { Pager } from '../../ui/Pager';
import { EmptyState, QueryView } from '../../ui/QueryState';
import { useUrlState } from '../../ui/url-state';
import { useUrlSearch } from '../../ui/url-search';
import { useHosts, type HostRow } from './queries';

/** The hosts agents report, each leading to its packages and their CVEs. */
export function HostsTable() {
  const { t } = useTranslation('vulnerabilities');
  const url = useUrlState();
  const { typed: search, setTyped: setSearch, applied: current } = useUrlSearch();
  const { set } = url;
  const page = url.getNumber('page', 1);
  const perPage = url.getNumber('per_page', 50);
  const hosts = useHosts({ search: current || undefined, page, per_page: perPage });

  const columns = useMemo<ColumnDef<HostRow>[]>(
    () => [
      {
        id: 'name',
        header: t('hosts.name'),
        cell: ({ row }) => (
          <Anchor component={Link} to={`/vulnerabilities/hosts/${encodeURIComponent(row.original.id)}`} size="sm">
            {row.original.name}
          </Anchor>
        ),
      },
      { id: 'region', header: t('hosts.region'), cell: ({ row }) => <Text size="sm">{row.original.region}</Text> },
      { id: 'updated', header: t('hosts.updated'), cell: ({ row }) => <Text size="sm">{formatDate(row.original.updated_at)}</Text> },
    ],
    [t],
  );

  return (
    <>
      <TextInput label={t('hosts.search')} w={280} size="sm" mb="sm" value={search} onChange={(event) => setSearch(event.currentTarget.value)} />
      <QueryView query={hosts} isEmpty={(data) => data.items.length === 0} empty={<EmptyState title={t('hosts.empty')}>{t('hosts.emptyHint')}</EmptyState>}>
        {(data) => (
          <>
            <DataTable data={data.items} columns={columns} getRowId={(row) => row.id} caption={t('hosts.caption')} />
            <Pager page={page} perPage={perPage} total={data.total} onChange={(next) => set({ page: next.page ?? 1, per_page: next.perPage ?? perPage })} />
          </>
        )}
      </QueryView>
    </>
  );
}
