import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { api, type Paths } from '../../api/client';
import { unwrap } from '../../api/errors';
import { useSession } from '../../session/session';

export type Assessment = Paths['/api/v1/tenants/{tenantID}/assessments/{aID}']['get']['responses'][200]['content']['application/json'];
export type AssessmentSummary = Paths['/api/v1/tenants/{tenantID}/assessments/mine']['get']['responses'][200]['content']['application/json']['items'][number];
export type AssessmentStatus = Assessment['status'];
export type AssessmentEvidence = Assessment['evidence'][number];
export type ReviewBody = NonNullable<Paths['/api/v1/tenants/{tenantID}/assessments/{aID}/review']['post']['requestBody']>['content']['application/json'];

export const assessmentsKey = ['assessments'] as const;

export interface Page {
  page: number;
  per_page: number;
}

/** The signed-in user's own assessments (the respondent view), newest first. */
export function useMyAssessments(page: Page) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: [...assessmentsKey, 'mine', tenantId, page],
    placeholderData: keepPreviousData,
    queryFn: async () => unwrap(await api.GET('/api/v1/tenants/{tenantID}/assessments/mine', { params: { path: { tenantID: tenantId }, query: page } })),
  });
}

/** Submitted assessments the user may review, oldest submission first. */
export function useReviewQueue(page: Page) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: [...assessmentsKey, 'review-queue', tenantId, page],
    placeholderData: keepPreviousData,
    queryFn: async () => unwrap(await api.GET('/api/v1/tenants/{tenantID}/assessments/review-queue', { params: { path: { tenantID: tenantId }, query: page } })),
  });
}

/** An assessment is read in the console's language (its questionnaire where the template has it), so the language is in the key. */
export const assessmentKey = (tenantId: string, id: string, lang: string) => [...assessmentsKey, 'one', tenantId, id, lang] as const;

export function useAssessment(id: string) {
  const { tenantId } = useSession();
  const lang = useTranslation().i18n.resolvedLanguage ?? 'en';
  return useQuery({
    queryKey: assessmentKey(tenantId, id, lang),
    queryFn: async () => unwrap(await api.GET('/api/v1/tenants/{tenantID}/assessments/{aID}', { params: { path: { tenantID: tenantId, aID: id }, query: { lang } } })),
  });
}

/**
 * Approve (attests the mapped controls) or request changes (notes required). The lists, the
 * assessment and every control screen change with it, so everything but the session goes stale.
 */
export function useReview(id: string) {
  const { tenantId } = useSession();
  const lang = useTranslation().i18n.resolvedLanguage ?? 'en';
  const client = useQueryClient();
  return useMutation({
    mutationFn: async (body: ReviewBody) =>
      unwrap(await api.POST('/api/v1/tenants/{tenantID}/assessments/{aID}/review', { params: { path: { tenantID: tenantId, aID: id }, query: { lang } }, body })),
    onSuccess: (next) => {
      client.setQueryData(assessmentKey(tenantId, id, lang), next);
      void client.invalidateQueries({ predicate: (query) => query.queryKey[0] !== 'me' && !(query.queryKey[2] === tenantId && query.queryKey[3] === id) });
    },
  });
}
