import { useMemo } from 'react';
import { Anchor, Group, Stack, Text } from '@mantine/core';
import type { ColumnDef } from '@tanstack/react-table';
import { useTranslation } from 'react-i18next';
import { Link, useParams } from 'react-router';
import { DataTable } from '../../ui/DataTable';
import { PageHeader } from '../../ui/PageHeader';
import { Pager } from '../../ui/Pager';
import { EmptyState, QueryView } from '../../ui/QueryState';
import { FindingCounts, HealthBadge } from './HealthBadge';
import { useApplication, useAssetGroup, useAssetGroupMembers, type MemberNode, type MemberResource } from './queries';
import { useUrlPaging } from '../../ui/url-paging';

function memberColumns<T extends MemberNode>(t: (key: string) => string): ColumnDef<T>[] {
  return [
    {
      id: 'name',
      header: t('columns.resource'),
      cell: ({ row }) => (
        <Text size="sm" fw={600}>
          {row.original.name}
        </Text>
      ),
    },
    { id: 'type', header: t('columns.type'), cell: ({ row }) => <Text size="sm">{row.original.type}</Text> },
    { id: 'region', header: t('columns.region'), cell: ({ row }) => <Text size="sm">{row.original.region}</Text> },
  ];
}

/** An application: its health roll-up and its member resources, each with its own. */
export function ApplicationPage() {
  const { t } = useTranslation('services');
  const { applicationId = '' } = useParams();
  const { page, perPage, setPaging } = useUrlPaging();
  const application = useApplication(applicationId, { page, per_page: perPage });
  const columns = useMemo<ColumnDef<MemberResource>[]>(
    () => [
      ...memberColumns<MemberResource>(t),
      { id: 'health', header: t('columns.health'), cell: ({ row }) => <HealthBadge health={row.original.health} /> },
      { id: 'findings', header: t('columns.findings'), cell: ({ row }) => <FindingCounts counts={row.original.findings_by_severity} /> },
    ],
    [t],
  );
  return (
    <Stack gap="md">
      <Anchor component={Link} to="/services?tab=applications" size="sm">
        {t('backApplications')}
      </Anchor>
      <QueryView query={application}>
        {(data) => (
          <>
            <PageHeader title={data.name} />
            <Group gap="lg">
              <HealthBadge health={data.health} />
              <FindingCounts counts={data.findings_by_severity} />
              <Text size="xs" ff="monospace">
                {data.filter}
              </Text>
            </Group>
            {data.resources.items.length === 0 ? (
              <EmptyState title={t('empty.resources')} />
            ) : (
              <>
                <DataTable data={data.resources.items} columns={columns} getRowId={(row) => row.id} caption={t('captions.resources')} />
                <Pager page={page} perPage={perPage} total={data.resources.total} onChange={setPaging} />
              </>
            )}
          </>
        )}
      </QueryView>
    </Stack>
  );
}

/** An asset group: its filter and the resources it matches now. */
export function AssetGroupPage() {
  const { t } = useTranslation('services');
  const { groupId = '' } = useParams();
  const { page, perPage, setPaging } = useUrlPaging();
  const group = useAssetGroup(groupId);
  const members = useAssetGroupMembers(groupId, { page, per_page: perPage });
  const columns = useMemo(() => memberColumns<MemberNode>(t), [t]);
  return (
    <Stack gap="md">
      <Anchor component={Link} to="/services?tab=asset-groups" size="sm">
        {t('backAssetGroups')}
      </Anchor>
      <QueryView query={group}>
        {(data) => (
          <>
            <PageHeader title={data.name} />
            <Text size="xs" ff="monospace">
              {data.filter}
            </Text>
          </>
        )}
      </QueryView>
      <QueryView query={members} isEmpty={(data) => data.items.length === 0} empty={<EmptyState title={t('empty.resources')} />}>
        {(data) => (
          <>
            <DataTable data={data.items} columns={columns} getRowId={(row) => row.id} caption={t('captions.members')} />
            <Pager page={page} perPage={perPage} total={data.total} onChange={setPaging} />
          </>
        )}
      </QueryView>
    </Stack>
  );
}
