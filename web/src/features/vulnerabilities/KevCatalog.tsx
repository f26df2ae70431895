import { useMemo } from 'react';
import { Anchor, Group, Select, Text, TextInput } from '@mantine/core';
import type { ColumnDef } from '@tanstack/react-table';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { formatDay, formatPercent } from '../../i18n';
import { DataTable } from '../../ui/DataTable';
import { LightBadge } from '../../ui/LightBadge';
import { Pager } from '../../ui/Pager';
import { EmptyState, QueryView } from '../../ui/QueryState';
import { useUrlState } from '../../ui/url-state';
import { useUrlSearch } from '../../ui/url-search';
import { useKev, type KevFilter, type KevRow } from './queries';

type Sort = NonNullable<KevFilter['sort']>;
type Ransomware = NonNullable<KevFilter['ransomware']>;

/** The CISA known-exploited catalog: search, vendor, ransomware use and date added as filters, sortable; all in the URL. */
export function KevCatalog() {
  const { t } = useTranslation('vulnerabilities');
  const url = useUrlState();
  const { typed: search, setTyped: setSearch, applied: current } = useUrlSearch();
  const vendor = url.get('vendor') || undefined;
  const ransomware = (url.get('ransomware') || undefined) as Ransomware | undefined;
  const from = url.get('from') || undefined;
  const sort = (url.get('sort') || '-date_added') as Sort;
  const page = url.getNumber('page', 1);
  const perPage = url.getNumber('per_page', 50);
  const { set } = url;

  const kev = useKev({ search: current || undefined, vendor, ransomware, date_added_from: from, sort, page, per_page: perPage });

  const columns = useMemo<ColumnDef<KevRow>[]>(
    () => [
      {
        id: 'cve_id',
        header: t('kev.cve'),
        cell: ({ row }) => (
          <Anchor component={Link} to={`/vulnerabilities?cve=${encodeURIComponent(row.original.cve_id)}`} size="sm" style={{ whiteSpace: 'nowrap' }}>
            {row.original.cve_id}
          </Anchor>
        ),
      },
      {
        id: 'vendor',
        header: t('kev.vendorProduct'),
        enableSorting: false,
        cell: ({ row }) => (
          <div>
            <Text size="sm">{row.original.vendor_project}</Text>
            <Text size="xs" c="dimmed">
              {row.original.product}
            </Text>
          </div>
        ),
      },
      { id: 'name', header: t('kev.name'), enableSorting: false, cell: ({ row }) => <Text size="sm">{row.original.vulnerability_name}</Text> },
      { id: 'date_added', header: t('kev.dateAdded'), cell: ({ row }) => <Text size="sm">{formatDay(row.original.date_added)}</Text> },
      { id: 'due_date', header: t('kev.dueDate'), cell: ({ row }) => <Text size="sm">{formatDay(row.original.due_date)}</Text> },
      {
        id: 'ransomware',
        header: t('kev.ransomware'),
        enableSorting: false,
        cell: ({ row }) =>
          row.original.known_ransomware_campaign_use === 'Known' ? <LightBadge color="red">{t('ransomware.Known')}</LightBadge> : <Text size="sm">{t('ransomware.Unknown')}</Text>,
      },
      { id: 'epss', header: t('kev.epss'), cell: ({ row }) => <Text size="sm">{formatPercent(row.original.epss_score)}</Text> },
    ],
    [t],
  );

  return (
    <>
      <Group gap="sm" mb="sm" wrap="wrap" align="flex-end">
        <TextInput label={t('kev.search')} w={260} size="sm" value={search} onChange={(event) => setSearch(event.currentTarget.value)} />
        <TextInput
          label={t('kev.vendor')}
          w={200}
          size="sm"
          defaultValue={vendor ?? ''}
          onBlur={(event) => set({ vendor: event.currentTarget.value.trim() || null })}
          onKeyDown={(event) => event.key === 'Enter' && set({ vendor: event.currentTarget.value.trim() || null })}
        />
        <Select
          label={t('kev.ransomware')}
          size="sm"
          w={200}
          placeholder={t('kev.anyRansomware')}
          data={(['known', 'unknown'] as const).map((value) => ({ value, label: t(`ransomware.${value === 'known' ? 'Known' : 'Unknown'}`) }))}
          value={ransomware ?? null}
          onChange={(value) => set({ ransomware: value })}
          clearable
        />
        <TextInput label={t('kev.addedFrom')} type="date" w={180} size="sm" value={from ?? ''} onChange={(event) => set({ from: event.currentTarget.value || null })} />
      </Group>
      <QueryView query={kev} isEmpty={(data) => data.items.length === 0} empty={<EmptyState title={t('kev.empty')} />}>
        {(data) => (
          <>
            <DataTable data={data.items} columns={columns} getRowId={(row) => row.cve_id} caption={t('kev.caption')} sort={sort} onSortChange={(next) => set({ sort: next })} />
            <Pager page={page} perPage={perPage} total={data.total} onChange={(next) => set({ page: next.page ?? 1, per_page: next.perPage ?? perPage })} />
          </>
        )}
      </QueryView>
    </>
  );
}
