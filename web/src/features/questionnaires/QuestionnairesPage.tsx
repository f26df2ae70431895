import { Anchor, Button, Group, Select, Stack, Table, Title } from '@mantine/core';
import { Link, useSearchParams } from 'react-router';
import { useTranslation } from 'react-i18next';
import { useSession } from '../../session/session';
import { PageHeader } from '../../ui/PageHeader';
import { Pager } from '../../ui/Pager';
import { QueryView } from '../../ui/QueryState';
import { formatDate } from '../../i18n';
import { useQuestionnaires, type QuestionnaireStatus } from './queries';
import { StatusBadge } from './StatusBadge';
import { TemplatesTable } from './TemplatesTable';

const STATUSES: QuestionnaireStatus[] = ['draft', 'published', 'archived'];

/** /questionnaires: the workspace's questionnaires with their status, and the templates to start from. */
export function QuestionnairesPage() {
  const { t } = useTranslation('questionnaires');
  const { can } = useSession();
  const [params, setParams] = useSearchParams();
  const status = (STATUSES as string[]).includes(params.get('status') ?? '') ? (params.get('status') as QuestionnaireStatus) : undefined;
  const page = Math.max(1, Number(params.get('page')) || 1);
  const perPage = Number(params.get('per_page')) || 50;
  const list = useQuestionnaires({ status, page, per_page: perPage });
  /** Filter and page live in the URL (defaults left out); a new filter starts at page 1. */
  const setUrl = (next: { status?: string; page?: number; per_page?: number }) => {
    const values = { status: next.status ?? status ?? '', page: next.page ?? page, per_page: next.per_page ?? perPage };
    const search = new URLSearchParams();
    if (values.status) search.set('status', values.status);
    if (values.page !== 1) search.set('page', String(values.page));
    if (values.per_page !== 50) search.set('per_page', String(values.per_page));
    setParams(search, { replace: true });
  };

  const writable = can('questionnaire:write');

  return (
    <>
      <PageHeader
        title={t('title')}
        actions={
          writable && (
            <Button component={Link} to="/questionnaires/new">
              {t('new')}
            </Button>
          )
        }
      />
      <Stack gap="xl">
        <section aria-labelledby="questionnaires-list">
          <Group justify="space-between" mb="sm">
            <Title order={2} size="h3" id="questionnaires-list">
              {t('list.title')}
            </Title>
            <Select
              label={t('list.status')}
              data={[{ value: '', label: t('list.all') }, ...STATUSES.map((s) => ({ value: s, label: t(`status.${s}`) }))]}
              value={status ?? ''}
              onChange={(value) => setUrl({ status: value ?? '', page: 1 })}
              allowDeselect={false}
              w={200}
            />
          </Group>
          <QueryView query={list} isEmpty={(data) => data.items.length === 0} empty={<EmptyList />}>
            {(data) => (
              <>
                <Table striped>
                  <caption className="visually-hidden">{t('list.caption')}</caption>
                  <Table.Thead>
                    <Table.Tr>
                      <Table.Th>{t('list.columns.title')}</Table.Th>
                      <Table.Th>{t('list.columns.version')}</Table.Th>
                      <Table.Th>{t('list.columns.status')}</Table.Th>
                      <Table.Th>{t('list.columns.questions')}</Table.Th>
                      <Table.Th>{t('list.columns.frameworks')}</Table.Th>
                      <Table.Th>{t('list.columns.updated')}</Table.Th>
                    </Table.Tr>
                  </Table.Thead>
                  <Table.Tbody>
                    {data.items.map((q) => (
                      <Table.Tr key={q.id}>
                        <Table.Td>
                          <Anchor component={Link} to={`/questionnaires/${q.id}`}>
                            {q.title}
                          </Anchor>
                        </Table.Td>
                        <Table.Td>{q.version}</Table.Td>
                        <Table.Td>
                          <StatusBadge status={q.status} />
                        </Table.Td>
                        <Table.Td>{q.question_count}</Table.Td>
                        <Table.Td>{q.frameworks.join(', ')}</Table.Td>
                        <Table.Td>
                          <time dateTime={q.updated_at}>{formatDate(q.updated_at)}</time>
                        </Table.Td>
                      </Table.Tr>
                    ))}
                  </Table.Tbody>
                </Table>
                <Pager page={page} perPage={perPage} total={data.total} onChange={(next) => setUrl({ page: next.page, per_page: next.perPage })} />
              </>
            )}
          </QueryView>
        </section>
        <TemplatesTable writable={writable} />
      </Stack>
    </>
  );
}

function EmptyList() {
  const { t } = useTranslation('questionnaires');
  return (
    <Stack align="center" py="md">
      {t('list.empty')}
    </Stack>
  );
}
