import { useTranslation } from 'react-i18next';
import { PageHeader } from '../../ui/PageHeader';
import { Pager } from '../../ui/Pager';
import { EmptyState, QueryView } from '../../ui/QueryState';
import { useUrlState } from '../../ui/url-state';
import { AssessmentsTable } from './AssessmentsTable';
import { useReviewQueue } from './queries';

const linkTo = (id: string) => `/assessments/review/${id}`;

/** Submitted assessments waiting for the signed-in reviewer, oldest submission first. */
export function ReviewQueuePage() {
  const { t } = useTranslation('assessments');
  const url = useUrlState();
  const page = url.getNumber('page', 1);
  const perPage = url.getNumber('per_page', 50);
  const queue = useReviewQueue({ page, per_page: perPage });
  return (
    <>
      <PageHeader title={t('queue.title')} />
      <QueryView query={queue} isEmpty={(data) => data.total === 0} empty={<EmptyState title={t('queue.empty')}>{t('queue.emptyHint')}</EmptyState>}>
        {(data) => (
          <>
            <AssessmentsTable items={data.items} linkTo={linkTo} person="assignee" caption={t('queue.caption')} />
            <Pager page={page} perPage={perPage} total={data.total} onChange={(next) => url.set({ page: next.page ?? 1, per_page: next.perPage ?? perPage })} />
          </>
        )}
      </QueryView>
    </>
  );
}
