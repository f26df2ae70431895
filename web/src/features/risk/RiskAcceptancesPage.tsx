import { useMemo } from 'react';
import { Anchor, Group, Paper, Select, SimpleGrid, Text, UnstyledButton } from '@mantine/core';
import type { ColumnDef } from '@tanstack/react-table';
import { Link } from 'react-router';
import { useTranslation } from 'react-i18next';
import { formatDay, formatNumber } from '../../i18n';
import { DataTable } from '../../ui/DataTable';
import { PageHeader } from '../../ui/PageHeader';
import { Pager } from '../../ui/Pager';
import { EmptyState, QueryView } from '../../ui/QueryState';
import { useUrlState } from '../../ui/url-state';
import { StateBadge } from './StateBadge';
import { useAcceptances, type Acceptance, type AcceptanceScope, type AcceptanceStateFilter } from './queries';
import { useUrlPaging } from '../../ui/url-paging';

const COUNTS = ['total', 'active', 'expired', 'revoked', 'orphaned'] as const;

export const subjectOf = (acceptance: Pick<Acceptance, 'group_label' | 'finding_id' | 'group_id'>) => acceptance.finding_id ?? acceptance.group_label ?? acceptance.group_id;

/** The acceptances with the five counts; a count is also the filter to its state. */
export function RiskAcceptancesPage() {
  const { t } = useTranslation('risk');
  const url = useUrlState();
  const state = (url.get('state') || undefined) as AcceptanceStateFilter | undefined;
  const scope = (url.get('scope') || undefined) as AcceptanceScope | undefined;
  const { page, perPage, setPaging } = useUrlPaging();
  const acceptances = useAcceptances({ state, scope, page, per_page: perPage });

  const columns = useMemo<ColumnDef<Acceptance>[]>(
    () => [
      {
        id: 'subject',
        header: t('columns.subject'),
        cell: ({ row }) => (
          <Anchor component={Link} to={`/risk-acceptances/${row.original.id}`} size="sm" style={{ wordBreak: 'break-all' }}>
            {subjectOf(row.original)}
          </Anchor>
        ),
      },
      { id: 'scope', header: t('columns.scope'), cell: ({ row }) => <Text size="sm">{t(`scope.${row.original.scope}`)}</Text> },
      { id: 'owner', header: t('columns.owner'), cell: ({ row }) => <Text size="sm">{row.original.owner}</Text> },
      { id: 'state', header: t('columns.state'), cell: ({ row }) => <StateBadge acceptance={row.original} /> },
      { id: 'expires', header: t('columns.expires'), cell: ({ row }) => <Text size="sm">{formatDay(row.original.expires_at)}</Text> },
      {
        id: 'reason',
        header: t('columns.reason'),
        cell: ({ row }) => (
          <Text size="sm" lineClamp={2} maw={320}>
            {row.original.reason}
          </Text>
        ),
      },
    ],
    [t],
  );

  return (
    <>
      <PageHeader title={t('title')} />
      <QueryView query={acceptances}>
        {(data) => (
          <>
            <SimpleGrid cols={{ base: 2, sm: 5 }} mb="md" role="group" aria-label={t('counts.label')}>
              {COUNTS.map((name) => {
                const selected = name === 'total' ? !state : state === name;
                const count = data.counts[name];
                return (
                  <UnstyledButton
                    key={name}
                    onClick={() => url.set({ state: name === 'total' ? null : name })}
                    aria-pressed={selected}
                    aria-label={name === 'total' ? t('counts.showAll', { count }) : t('counts.filterBy', { state: t(`counts.${name}`), count })}
                  >
                    <Paper withBorder p="sm" bg={selected ? 'var(--mantine-primary-color-light)' : undefined}>
                      <Text size="sm">{t(`counts.${name}`)}</Text>
                      <Text fw={700} size="xl" data-testid={`count-${name}`}>
                        {formatNumber(count)}
                      </Text>
                    </Paper>
                  </UnstyledButton>
                );
              })}
            </SimpleGrid>
            <Group gap="sm" mb="sm">
              <Select
                label={t('filters.state')}
                size="sm"
                w={180}
                data={[
                  { value: '', label: t('filters.all') },
                  ...(['active', 'partial', 'expired', 'revoked', 'orphaned'] as const).map((value) => ({ value, label: t(`state.${value}`) })),
                ]}
                value={state ?? ''}
                onChange={(value) => url.set({ state: value })}
                allowDeselect={false}
              />
              <Select
                label={t('filters.scope')}
                size="sm"
                w={200}
                data={[{ value: '', label: t('filters.anyScope') }, ...(['finding', 'group'] as const).map((value) => ({ value, label: t(`scope.${value}`) }))]}
                value={scope ?? ''}
                onChange={(value) => url.set({ scope: value })}
                allowDeselect={false}
              />
            </Group>
            {data.items.length === 0 ? (
              <EmptyState title={data.counts.total === 0 ? t('emptyAll') : t('empty')} />
            ) : (
              <>
                <DataTable data={data.items} columns={columns} getRowId={(row) => row.id} caption={t('caption')} />
                <Pager page={page} perPage={perPage} total={data.total} onChange={setPaging} />
              </>
            )}
          </>
        )}
      </QueryView>
    </>
  );
}
