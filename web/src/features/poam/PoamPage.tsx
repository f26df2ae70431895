import { Group, Paper, SimpleGrid, Tabs, Text, UnstyledButton } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { formatNumber } from '../../i18n';
import { useSession } from '../../session/session';
import { PageHeader } from '../../ui/PageHeader';
import { EmptyState, QueryView } from '../../ui/QueryState';
import { useUrlState } from '../../ui/url-state';
import { DraftFromAssessment } from './DraftFromAssessment';
import { ExportMenu } from './ExportMenu';
import { PoamBoard } from './PoamBoard';
import { PoamList } from './PoamList';
import { POAM_STATUSES } from './model';
import { usePoamSummary, type PoamSummary } from './queries';

/** The counts of GET /poam/summary; each opens the list filtered to it. */
function SummaryCounts({ summary }: { summary: PoamSummary }) {
  const { t } = useTranslation('poam');
  const url = useUrlState();
  const cells = [
    { key: 'total', label: t('summary.total'), count: summary.total, filter: { view: 'list', status: null, overdue: null } },
    ...POAM_STATUSES.map((status) => ({ key: status, label: t(`status.${status}`), count: summary.by_status[status] ?? 0, filter: { view: 'list', status, overdue: null } })),
    { key: 'overdue', label: t('summary.overdue'), count: summary.overdue, filter: { view: 'list', status: null, overdue: 'true' } },
  ];
  return (
    <SimpleGrid cols={{ base: 2, sm: 3, md: 6 }} mb="md" role="group" aria-label={t('summary.label')}>
      {cells.map((cell) => (
        <UnstyledButton key={cell.key} onClick={() => url.set(cell.filter)} aria-label={`${cell.label}: ${formatNumber(cell.count)}`}>
          <Paper withBorder p="sm">
            <Text size="sm">{cell.label}</Text>
            <Text fw={700} size="xl" data-testid={`poam-count-${cell.key}`}>
              {formatNumber(cell.count)}
            </Text>
          </Paper>
        </UnstyledButton>
      ))}
    </SimpleGrid>
  );
}

/** The POA&M: its counts, the board by status or the filtered list, the exports and drafting from assessments. */
export function PoamPage() {
  const { t } = useTranslation('poam');
  const { can } = useSession();
  const url = useUrlState();
  const view = url.get('view') === 'list' ? 'list' : 'board';
  const summary = usePoamSummary();
  return (
    <>
      <PageHeader
        title={t('title')}
        actions={
          <Group gap="sm">
            {can('poam:write') && <DraftFromAssessment />}
            <ExportMenu />
          </Group>
        }
      />
      <QueryView query={summary}>
        {(data) => (
          <>
            <SummaryCounts summary={data} />
            <Tabs value={view} onChange={(next) => url.set({ view: next === 'list' ? 'list' : null })} keepMounted={false}>
              <Tabs.List aria-label={t('views.label')} mb="md">
                <Tabs.Tab value="board">{t('views.board')}</Tabs.Tab>
                <Tabs.Tab value="list">{t('views.list')}</Tabs.Tab>
              </Tabs.List>
              <Tabs.Panel value="board">{view === 'board' && (data.total === 0 ? <EmptyState title={t('emptyAll')} /> : <PoamBoard />)}</Tabs.Panel>
              <Tabs.Panel value="list">{view === 'list' && <PoamList total={data.total} />}</Tabs.Panel>
            </Tabs>
          </>
        )}
      </QueryView>
    </>
  );
}
