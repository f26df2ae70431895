import { Badge, Table, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { formatDay } from '../../i18n';
import { QueryView } from '../../ui/QueryState';
import { useSession } from '../../session/session';
import { LinksButton } from '../assessments/links/LinksDialog';
import { useQuestionnaireAssessments } from './queries';

/** The assessments this questionnaire was assigned as, with assignee, reviewer, status and due date. */
export function AssessmentsSection({ questionnaireId }: { questionnaireId: string }) {
  const { t } = useTranslation('questionnaires');
  const assessments = useQuestionnaireAssessments(questionnaireId);
  // Links for outside respondents are the reviewer's to give (assessment:review).
  const mayLink = useSession().can('assessment:review');
  return (
    <section aria-labelledby="assessments-title">
      <Title order={2} size="h3" id="assessments-title" mb="sm">
        {t('assessments.title')}
      </Title>
      <QueryView query={assessments} isEmpty={(data) => data.items.length === 0} empty={t('assessments.empty')}>
        {(data) => (
          <Table striped>
            <caption className="visually-hidden">{t('assessments.caption')}</caption>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('assessments.columns.assignee')}</Table.Th>
                <Table.Th>{t('assessments.columns.reviewer')}</Table.Th>
                <Table.Th>{t('assessments.columns.status')}</Table.Th>
                <Table.Th>{t('assessments.columns.due')}</Table.Th>
                <Table.Th>{t('assessments.columns.progress')}</Table.Th>
                {mayLink && (
                  <Table.Th>
                    <span className="visually-hidden">{t('assessments.columns.actions')}</span>
                  </Table.Th>
                )}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {data.items.map((a) => (
                <Table.Tr key={a.id}>
                  <Table.Td>{a.assignee ?? a.assignee_id}</Table.Td>
                  <Table.Td>{a.reviewer ?? '—'}</Table.Td>
                  <Table.Td>
                    <Badge variant="light" c="dark">
                      {t(`assessments.status.${a.status}`)}
                    </Badge>
                  </Table.Td>
                  <Table.Td>{a.due_date ? <time dateTime={a.due_date}>{formatDay(a.due_date)}</time> : '—'}</Table.Td>
                  <Table.Td>{t('assessments.progress', { answered: a.progress.answered, total: a.progress.total })}</Table.Td>
                  {mayLink && (
                    <Table.Td>
                      <LinksButton assessmentId={a.id} who={a.assignee ?? a.assignee_id} open={a.status !== 'submitted' && a.status !== 'approved'} />
                    </Table.Td>
                  )}
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
      </QueryView>
    </section>
  );
}
