import { useTranslation } from 'react-i18next';
import { PageHeader } from '../../ui/PageHeader';
import { Pager } from '../../ui/Pager';
import { EmptyState, QueryView } from '../../ui/QueryState';
import { AssessmentsTable } from './AssessmentsTable';
import { useMyAssessments } from './queries';
import { useUrlPaging } from '../../ui/url-paging';

const linkTo = (id: string) => `/assessments/mine/${id}`;

/** The respondent view's list: the assessments assigned to the signed-in user. */
export function MyAssessmentsPage() {
  const { t } = useTranslation('assessments');
  const { page, perPage, setPaging } = useUrlPaging();
  const mine = useMyAssessments({ page, per_page: perPage });
  return (
    <>
      <PageHeader title={t('mine.title')} />
      <QueryView query={mine} isEmpty={(data) => data.total === 0} empty={<EmptyState title={t('mine.empty')}>{t('mine.emptyHint')}</EmptyState>}>
        {(data) => (
          <>
            <AssessmentsTable items={data.items} linkTo={linkTo} person="reviewer" caption={t('mine.caption')} />
            <Pager page={page} perPage={perPage} total={data.total} onChange={setPaging} />
          </>
        )}
      </QueryView>
    </>
  );
}
