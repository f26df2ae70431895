import { Alert, Center, Container, Loader, Text } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { ApiError, errorMessage } from '../../api/errors';
import { AssessmentForm } from './AssessmentForm';
import { respondentApi, tokenFromLocation, type RespondentAssessment } from './respondent-api';

const LINK_ERRORS = ['LINK_EXPIRED', 'LINK_REVOKED', 'UNAUTHORIZED'];

/**
 * The page an outside respondent opens from their link (`/respond#cgr_…`): no sign-in, no console
 * shell, only the one assessment the link's token opens. The token stays in the fragment and goes to
 * the service only as the bearer of its /respond requests.
 */
export function RespondPage() {
  const { t, i18n } = useTranslation('respond');
  const lang = i18n.resolvedLanguage ?? 'en';
  const token = useMemo(() => tokenFromLocation(window.location.hash), []);
  const api = useMemo(() => (token ? respondentApi(token, lang) : null), [token, lang]);
  const client = useQueryClient();
  const key = ['respond', token, lang] as const;
  const assessment = useQuery({ queryKey: key, queryFn: () => api!.load(), enabled: Boolean(api), retry: false, staleTime: Infinity });

  let body;
  if (!api) body = <Alert color="red">{t('errors.noToken')}</Alert>;
  else if (assessment.isPending) {
    body = (
      <Center p="xl">
        <Loader aria-label={t('title')} />
      </Center>
    );
  } else if (assessment.isError) {
    const code = assessment.error instanceof ApiError ? assessment.error.code : '';
    body = <Alert color="red">{LINK_ERRORS.includes(code) ? t(`errors.${code}`) : t('errors.other', { message: errorMessage(assessment.error) })}</Alert>;
  } else {
    body = <AssessmentForm assessment={assessment.data} api={api} onChanged={(next: RespondentAssessment) => client.setQueryData(key, next)} />;
  }
  return (
    <Container size="md" py="xl" component="main">
      <Text size="sm" fw={700} mb="md">
        ControlGraph
      </Text>
      {body}
    </Container>
  );
}
