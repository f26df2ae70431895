import { useTranslation } from 'react-i18next';
import { PageHeader } from '../../ui/PageHeader';
import { Pager } from '../../ui/Pager';
import { EmptyState, QueryView } from '../../ui/QueryState';
import { AssessmentsTable } from './AssessmentsTable';
import { useReviewQueue } from './queries';
import { useUrlPaging } from '../../ui/url-paging';

const linkTo = (id: string) => `/assessments/review/${id}`;

/** Submitted assessments waiting for the signed-in reviewer, oldest submission first. */
export function ReviewQueuePage() {
  const { t } = useTranslation('assessments');
  const { page, perPage, setPaging } = useUrlPaging();
  const queue = useReviewQueue({ page, per_page: perPage });
  return (
    <>
      <PageHeader title={t('queue.title')} />
      <QueryView query={queue} isEmpty={(data) => data.total === 0} empty={<EmptyState title={t('queue.empty')}>{t('queue.emptyHint')}</EmptyState>}>
        {(data) => (
          <>
            <AssessmentsTable items={data.items} linkTo={linkTo} person="assignee" caption={t('queue.caption')} />
            <Pager page={page} perPage={perPage} total={data.total} onChange={setPaging} />
          </>
        )}
      </QueryView>
    </>
  );
}
