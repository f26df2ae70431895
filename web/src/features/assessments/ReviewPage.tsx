import { useState } from 'react';
import { Alert, Box, Group, Paper, SimpleGrid, Stack, Text, TextInput, Title } from '@mantine/core';
import { useParams } from 'react-router';
import { useTranslation } from 'react-i18next';
import { formatDate, formatDay } from '../../i18n';
import { useSession } from '../../session/session';
import { QueryView } from '../../ui/QueryState';
import { AnswerView } from './AnswerView';
import { AttestedControls } from './AttestedControls';
import { BackLink } from './BackLink';
import { EvidencePreview, previewKind } from './EvidencePreview';
import { ReviewPanel } from './ReviewPanel';
import { StatusBadge } from './StatusBadge';
import { useAssessment, type Assessment } from './queries';

/** The assessment to review: its answers beside its evidence, and the decision below the answers. */
export function ReviewPage() {
  const { t } = useTranslation('assessments');
  const { assessmentId = '' } = useParams();
  const assessment = useAssessment(assessmentId);
  return (
    <>
      <BackLink to="/assessments/review">{t('queue.title')}</BackLink>
      <QueryView query={assessment}>{(data) => <ReviewBody key={data.id} assessment={data} />}</QueryView>
    </>
  );
}

function ReviewBody({ assessment }: { assessment: Assessment }) {
  const { t } = useTranslation('assessments');
  const { can } = useSession();
  const answers = new Map(assessment.responses.map((r) => [r.question_id, r.answer]));
  // The first file the page can show is open from the start; any other is one click away.
  const [selected, setSelected] = useState<string | null>(() => (assessment.evidence.find((file) => previewKind(file)) ?? assessment.evidence[0])?.id ?? null);
  const [questionNotes, setQuestionNotes] = useState<Record<string, string>>({});
  const reviewable = assessment.status === 'submitted' && can('assessment:review');
  const file = assessment.evidence.find((e) => e.id === selected);

  return (
    <Stack>
      <Stack gap={4}>
        <Group gap="sm">
          <Title order={1} size="h2">
            {assessment.questionnaire_title}
          </Title>
          <StatusBadge status={assessment.status} />
        </Group>
        <Text size="sm" c="dimmed">
          {t('review.byline', { name: assessment.assignee ?? '—', date: formatDate(assessment.submitted_at) })}
        </Text>
      </Stack>
      {assessment.status === 'approved' && (
        <Alert color="teal" title={t('review.approvedTitle', { date: formatDate(assessment.approved_at) })}>
          <Stack gap="xs">
            <Text size="sm">{t('review.attested', { count: assessment.controls.length, date: formatDay(assessment.attestation_expires_at) })}</Text>
            <AttestedControls controls={assessment.controls} label={t('review.controls')} />
          </Stack>
        </Alert>
      )}
      {assessment.status === 'changes_requested' && (
        <Alert color="orange" title={t('review.changesRequestedTitle')}>
          {assessment.review_notes}
        </Alert>
      )}
      <SimpleGrid cols={{ base: 1, md: 2 }} spacing="md">
        <Box>
          <Stack gap="sm" component="section" aria-label={t('review.answers')}>
            <Title order={2} size="h4">
              {t('review.answers')}
            </Title>
            {assessment.questions.map((question, index) => (
              <Paper key={question.id} withBorder p="sm" component="section" aria-label={question.text}>
                <Stack gap={6}>
                  <Text size="sm" fw={600}>
                    {index + 1}. {question.text}
                  </Text>
                  <AnswerView
                    question={question}
                    answer={answers.get(question.id)}
                    files={assessment.evidence.filter((e) => e.question_id === question.id)}
                    selected={selected}
                    onSelect={setSelected}
                  />
                  {reviewable && (
                    <TextInput
                      size="xs"
                      label={t('review.questionNote')}
                      value={questionNotes[question.id] ?? ''}
                      onChange={(event) => {
                        const value = event.currentTarget.value;
                        setQuestionNotes((current) => ({ ...current, [question.id]: value }));
                      }}
                    />
                  )}
                </Stack>
              </Paper>
            ))}
            {reviewable && <ReviewPanel assessment={assessment} questionNotes={questionNotes} />}
          </Stack>
        </Box>
        <Box>
          <Paper withBorder p="sm" component="section" aria-label={t('evidence.title')} style={{ position: 'sticky', top: 72 }}>
            <Stack gap="sm">
              <Title order={2} size="h4">
                {t('evidence.title')}
              </Title>
              {file ? (
                <EvidencePreview file={file} />
              ) : (
                <Text size="sm" c="dimmed">
                  {t('evidence.none')}
                </Text>
              )}
            </Stack>
          </Paper>
        </Box>
      </SimpleGrid>
    </Stack>
  );
}
