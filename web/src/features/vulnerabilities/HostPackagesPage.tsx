import { useMemo, useState } from 'react';
import { Anchor, Group, Stack, Switch, Text, TextInput } from '@mantine/core';
import type { ColumnDef } from '@tanstack/react-table';
import { useTranslation } from 'react-i18next';
import { Link, useParams } from 'react-router';
import { formatNumber } from '../../i18n';
import { useSession } from '../../session/session';
import { DataTable } from '../../ui/DataTable';
import { PageHeader } from '../../ui/PageHeader';
import { Pager } from '../../ui/Pager';
import { EmptyState, QueryView } from '../../ui/QueryState';
import { useUrlState } from '../../ui/url-state';
import { useHostPackages, type HostPackage } from './queries';
import { useUrlPaging } from '../../ui/url-paging';

/** One host: its packages (from its SBOM), the CVEs of each, only the vulnerable ones on demand; the SBOM to download. */
export function HostPackagesPage() {
  const { t } = useTranslation('vulnerabilities');
  const { nodeId = '' } = useParams();
  const { tenantId } = useSession();
  const url = useUrlState();
  const vulnerableOnly = url.get('vulnerable') === '1';
  const [search, setSearch] = useState('');
  const { page, perPage, setPaging } = useUrlPaging();
  const inventory = useHostPackages(nodeId);

  const columns = useMemo<ColumnDef<HostPackage>[]>(
    () => [
      {
        id: 'name',
        header: t('packages.name'),
        cell: ({ row }) => (
          <Text size="sm" fw={600}>
            {row.original.name}
          </Text>
        ),
      },
      { id: 'version', header: t('packages.version'), cell: ({ row }) => <Text size="sm">{row.original.version}</Text> },
      {
        id: 'cves',
        header: t('packages.cves'),
        cell: ({ row }) =>
          row.original.cves.length === 0 ? (
            <Text size="sm">—</Text>
          ) : (
            <Group gap={6} wrap="wrap">
              {row.original.cves.map((cve) => (
                <Anchor key={cve} component={Link} to={`/vulnerabilities?cve=${encodeURIComponent(cve)}`} size="sm">
                  {cve}
                </Anchor>
              ))}
            </Group>
          ),
      },
      {
        id: 'purl',
        header: t('packages.purl'),
        cell: ({ row }) => (
          <Text size="xs" c="dimmed" style={{ wordBreak: 'break-all' }}>
            {row.original.purl ?? '—'}
          </Text>
        ),
      },
    ],
    [t],
  );
  const sbomHref = `/api/v1/tenants/${tenantId}/nodes/${encodeURIComponent(nodeId)}/sbom`;

  return (
    <Stack gap="md">
      <Anchor component={Link} to="/vulnerabilities?tab=hosts" size="sm">
        {t('packages.back')}
      </Anchor>
      <QueryView query={inventory}>
        {(data) => {
          const needle = search.trim().toLowerCase();
          const rows = data.packages.filter((p) => (!vulnerableOnly || p.cves.length > 0) && (!needle || p.name.toLowerCase().includes(needle)));
          const vulnerable = data.packages.filter((p) => p.cves.length > 0).length;
          return (
            <>
              <PageHeader title={t('packages.title', { host: data.host })} />
              <Group justify="space-between" wrap="wrap">
                <Text size="sm" data-testid="host-summary">
                  {t('packages.summary', { packages: formatNumber(data.packages.length), vulnerable: formatNumber(vulnerable) })}
                </Text>
                <Anchor href={sbomHref} download={`${data.host}.cdx.json`} size="sm">
                  {t('packages.downloadSbom')}
                </Anchor>
              </Group>
              <Group gap="md" align="flex-end" wrap="wrap">
                <TextInput
                  label={t('packages.search')}
                  w={260}
                  size="sm"
                  value={search}
                  onChange={(event) => {
                    setSearch(event.currentTarget.value);
                    url.set({ page: null });
                  }}
                />
                <Switch
                  label={t('packages.vulnerableOnly')}
                  checked={vulnerableOnly}
                  onChange={(event) => url.set({ vulnerable: event.currentTarget.checked ? '1' : null })}
                  mb={6}
                />
              </Group>
              {rows.length === 0 ? (
                <EmptyState title={t('packages.empty')} />
              ) : (
                <>
                  <DataTable data={rows.slice((page - 1) * perPage, page * perPage)} columns={columns} getRowId={(row) => row.ref} caption={t('packages.caption')} />
                  <Pager page={page} perPage={perPage} total={rows.length} onChange={setPaging} />
                </>
              )}
            </>
          );
        }}
      </QueryView>
    </Stack>
  );
}
