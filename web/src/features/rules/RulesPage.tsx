import { useMemo } from 'react';
import { Anchor, Box, Button, Group, Select, Stack, Text, TextInput } from '@mantine/core';
import { createColumnHelper } from '@tanstack/react-table';
import { Link } from 'react-router';
import { useTranslation } from 'react-i18next';
import { useSession } from '../../session/session';
import { DataTable } from '../../ui/DataTable';
import { PageHeader } from '../../ui/PageHeader';
import { Pager } from '../../ui/Pager';
import { EmptyState, QueryView } from '../../ui/QueryState';
import { SEVERITIES, SeverityBadge } from '../../ui/SeverityBadge';
import { useUrlState } from '../../ui/url-state';
import { FRAMEWORKS, useRules, type Framework, type Rule, type RuleFilter } from './queries';

const column = createColumnHelper<Rule>();

export function RulesPage() {
  const { t } = useTranslation('rules');
  const { t: common } = useTranslation();
  const { can } = useSession();
  const { get, getNumber, set } = useUrlState();
  const page = getNumber('page', 1);
  const perPage = getNumber('per_page', 50);
  const kind = get('builtin');
  const filter: RuleFilter = {
    page,
    per_page: perPage,
    search: get('search') || undefined,
    builtin: kind === 'true' ? true : kind === 'false' ? false : undefined,
    severity: (get('severity') || undefined) as RuleFilter['severity'],
    framework: (get('framework') || undefined) as RuleFilter['framework'],
  };
  const rules = useRules(filter);

  const columns = useMemo(
    () => [
      column.accessor('title', {
        header: t('columns.title'),
        cell: (info) => (
          <Stack gap={0}>
            <Anchor component={Link} to={`/rules/${encodeURIComponent(info.row.original.id)}`} size="sm">
              {info.getValue()}
            </Anchor>
            <Text size="xs" c="dimmed">
              {info.row.original.id}
            </Text>
          </Stack>
        ),
      }),
      column.accessor('severity', {
        header: t('columns.severity'),
        // A narrow column would cut the badge's word short.
        cell: (info) => (
          <Box miw={90}>
            <SeverityBadge severity={info.getValue().toLowerCase()} />
          </Box>
        ),
      }),
      column.accessor('resource_type', { header: t('columns.resource_type') }),
      column.display({
        id: 'control',
        header: t('columns.control'),
        cell: (info) => `${t(`frameworks.${info.row.original.framework}`)} ${info.row.original.control_id}`,
      }),
      column.accessor('builtin', {
        header: t('columns.kind'),
        cell: (info) => (
          <Text size="sm" fw={info.getValue() ? undefined : 600} style={{ whiteSpace: 'nowrap' }}>
            {info.getValue() ? t('kind.builtin') : t('kind.custom')}
          </Text>
        ),
      }),
      column.display({ id: 'state', header: t('columns.state'), cell: (info) => t(`state.${info.row.original.evaluation.state}`) }),
    ],
    [t],
  );

  return (
    <>
      <PageHeader
        title={t('title')}
        actions={
          can('rules:write') && (
            <Button component={Link} to="/rules/new">
              {t('newRule')}
            </Button>
          )
        }
      />
      <Group gap="sm" mb="sm" align="flex-end" wrap="wrap">
        <TextInput
          label={t('filters.search')}
          placeholder={t('filters.searchPlaceholder')}
          defaultValue={get('search')}
          onChange={(e) => set({ search: e.currentTarget.value })}
          w={260}
        />
        <Select
          label={t('filters.kind')}
          data={[
            { value: '', label: t('filters.all') },
            { value: 'true', label: t('filters.builtin') },
            { value: 'false', label: t('filters.custom') },
          ]}
          value={kind}
          onChange={(value) => set({ builtin: value })}
          allowDeselect={false}
          w={140}
        />
        <Select
          label={t('filters.severity')}
          data={[{ value: '', label: t('filters.any') }, ...SEVERITIES.map((s) => ({ value: s.toUpperCase(), label: common(`severity.${s}`) }))]}
          value={get('severity')}
          onChange={(value) => set({ severity: value })}
          allowDeselect={false}
          w={140}
        />
        <Select
          label={t('filters.framework')}
          data={[{ value: '', label: t('filters.any') }, ...FRAMEWORKS.map((f: Framework) => ({ value: f, label: t(`frameworks.${f}`) }))]}
          value={get('framework')}
          onChange={(value) => set({ framework: value })}
          allowDeselect={false}
          w={180}
        />
      </Group>
      <QueryView query={rules} isEmpty={(data) => data.items.length === 0} empty={<EmptyState>{t('empty')}</EmptyState>}>
        {(data) => (
          <>
            <DataTable data={data.items} columns={columns} getRowId={(rule) => rule.id} caption={t('caption')} />
            <Pager page={page} perPage={perPage} total={data.total} onChange={(next) => set({ page: next.page ?? page, per_page: next.perPage ?? perPage })} />
          </>
        )}
      </QueryView>
    </>
  );
}
