import { useMemo } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { useParams } from 'react-router';
import { useTranslation } from 'react-i18next';
import { useSession } from '../../session/session';
import { QueryView } from '../../ui/QueryState';
import { AssessmentForm } from '../respond/AssessmentForm';
import { assigneeApi } from './assignee-api';
import { BackLink } from './BackLink';
import { assessmentKey, assessmentsKey, useAssessment, type Assessment } from './queries';

/**
 * One of the signed-in user's assessments to answer: the outside respondent's form over the
 * session's API. Every save returns the whole assessment, which replaces the cached one; the lists
 * (their progress and status) are refetched when next shown.
 */
export function MyAssessmentPage() {
  const { t, i18n } = useTranslation('assessments');
  const lang = i18n.resolvedLanguage ?? 'en';
  const { assessmentId = '' } = useParams();
  const { tenantId } = useSession();
  const client = useQueryClient();
  const assessment = useAssessment(assessmentId);
  const formApi = useMemo(() => assigneeApi(tenantId, assessmentId, lang), [tenantId, assessmentId, lang]);
  const changed = (next: Assessment) => {
    client.setQueryData(assessmentKey(tenantId, assessmentId, lang), next);
    void client.invalidateQueries({ queryKey: [...assessmentsKey, 'mine'] });
  };
  return (
    <>
      <BackLink to="/assessments/mine">{t('mine.title')}</BackLink>
      <QueryView query={assessment}>{(data) => <AssessmentForm key={data.id} assessment={data} api={formApi} onChanged={changed} />}</QueryView>
    </>
  );
}
