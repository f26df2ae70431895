import { useState } from 'react';
import { Alert, Anchor, Button, Group, Tabs, Text } from '@mantine/core';
import { useCallbackRef } from '@mantine/hooks';
import { useTranslation } from 'react-i18next';
import { useSession } from '../../session/session';
import { PageHeader } from '../../ui/PageHeader';
import { Pager } from '../../ui/Pager';
import { EmptyState, QueryView } from '../../ui/QueryState';
import { notifyError, notifySuccess } from '../../ui/notify';
import { formatNumber } from '../../i18n';
import { AcceptRiskModal, type AcceptTarget } from './components/AcceptRiskModal';
import { FindingFilters } from './components/FindingFilters';
import { FindingsTable } from './components/FindingsTable';
import { GroupsTable } from './components/GroupsTable';
import { LiveCounter } from './components/LiveCounter';
import { useBulkResolve, useFindingGroups, useFindings, useScoredFindings } from './queries';
import { apiFilters, useFindingsUrl, VIEWS, type View } from './url';

/** Findings: the list, the scored view and the root-cause groups, every filter, sort and page in the URL. */
export function FindingsPage() {
  const { t } = useTranslation('findings');
  const { can } = useSession();
  const { url, set } = useFindingsUrl();
  const [selection, setSelection] = useState<Record<string, boolean>>({});
  const [acceptTarget, setAcceptTarget] = useState<AcceptTarget | null>(null);
  const bulkResolve = useBulkResolve();
  const filters = apiFilters(url);
  const list = useFindings({ ...filters, sort: url.sort }, url.view === 'list');
  const scored = useScoredFindings(filters, url.view === 'scored');
  const grouped = useFindingGroups(filters, url.view === 'grouped');
  const canResolve = can('findings:write');
  const selected = Object.keys(selection).filter((id) => selection[id]);

  const change = (changes: Record<string, string | number | null>) => {
    setSelection({});
    set(changes);
  };
  // Stable across renders, so the memoised table is left alone while a new page is on its way.
  const sortBy = useCallbackRef((sort: string) => change({ sort }));
  const pager = (total: number) => (
    <Pager page={url.page} perPage={url.perPage} total={total} onChange={(next) => change({ page: next.page ?? 1, per_page: next.perPage ?? url.perPage })} />
  );

  const resolveSelected = async () => {
    const outcome = await bulkResolve.mutateAsync(selected);
    setSelection({});
    if (outcome.failures.length === 0) notifySuccess(t('bulk.resolved', { count: outcome.succeeded }));
    else notifyError(t('bulk.partly', { succeeded: outcome.succeeded, failed: outcome.failures.length, message: outcome.failures[0]?.message ?? '' }));
  };

  const selectionProps = canResolve && url.status !== 'resolved' ? { selection, onSelectionChange: setSelection } : {};
  const empty = <EmptyState title={t('empty.title')}>{t('empty.body')}</EmptyState>;

  return (
    <>
      <PageHeader title={t('title')} actions={<LiveCounter />} />
      <FindingFilters url={url} onChange={change} />
      {url.groupId && (
        <Alert color="blue" mb="sm">
          <Group gap="sm">
            <Text size="sm">{t('groupFilter', { group: url.groupId })}</Text>
            <Anchor component="button" size="sm" onClick={() => change({ group_id: null })}>
              {t('clearGroup')}
            </Anchor>
          </Group>
        </Alert>
      )}
      <Tabs value={url.view} onChange={(view) => change({ view: view === 'list' ? null : (view as View) })} keepMounted={false}>
        <Tabs.List mb="sm">
          {VIEWS.map((view) => (
            <Tabs.Tab key={view} value={view}>
              {t(`views.${view}`)}
            </Tabs.Tab>
          ))}
        </Tabs.List>
        {selectionProps.selection && selected.length > 0 && (
          <Group mb="sm" gap="sm">
            <Text size="sm">{t('bulk.selected', { count: selected.length, formatted: formatNumber(selected.length) })}</Text>
            <Button size="xs" loading={bulkResolve.isPending} onClick={() => void resolveSelected()}>
              {t('bulk.resolve')}
            </Button>
            <Button size="xs" variant="default" onClick={() => setSelection({})}>
              {t('bulk.clear')}
            </Button>
          </Group>
        )}
        <Tabs.Panel value="list">
          <QueryView query={list} isEmpty={(data) => data.items.length === 0} empty={empty}>
            {(data) => (
              <>
                <FindingsTable rows={data.items} scored={false} sort={url.sort} onSortChange={sortBy} {...selectionProps} />
                {pager(data.total)}
              </>
            )}
          </QueryView>
        </Tabs.Panel>
        <Tabs.Panel value="scored">
          <QueryView query={scored} isEmpty={(data) => data.items.length === 0} empty={empty}>
            {(data) => (
              <>
                <Text size="sm" c="dimmed" mb="xs">
                  {t('scoredHint')}
                </Text>
                <FindingsTable rows={data.items} scored {...selectionProps} />
                {pager(data.total)}
              </>
            )}
          </QueryView>
        </Tabs.Panel>
        <Tabs.Panel value="grouped">
          <QueryView query={grouped} isEmpty={(data) => data.items.length === 0} empty={empty}>
            {(data) => (
              <>
                <GroupsTable
                  groups={data.items}
                  onShowFindings={(group) => change({ view: null, group_id: group.group_id })}
                  onAccept={can('audit:run') ? (group) => setAcceptTarget({ kind: 'group', groupId: group.group_id, label: group.label }) : undefined}
                />
                {pager(data.total)}
              </>
            )}
          </QueryView>
        </Tabs.Panel>
      </Tabs>
      {/* Mounted only while open: closed, its form's hooks were part of every first render of the list. */}
      {acceptTarget && <AcceptRiskModal target={acceptTarget} onClose={() => setAcceptTarget(null)} />}
    </>
  );
}
