import { useState } from 'react';
import { Alert, Button, Group, Paper, Stack, Text, Textarea, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../api/errors';
import { formatDay } from '../../i18n';
import { AttestedControls } from './AttestedControls';
import { useReview, type Assessment } from './queries';

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The reviewer's decision on a submitted assessment. Before approving it says what the approval
 * does: which controls it attests and until when (the questionnaire's validity from today, as the
 * service computes it). Requesting changes needs notes; the per-question notes from the answers
 * column go with them and stand beside those questions in the respondent's form.
 */
export function ReviewPanel({ assessment, questionNotes }: { assessment: Assessment; questionNotes: Record<string, string> }) {
  const { t } = useTranslation('assessments');
  const review = useReview(assessment.id);
  const [notes, setNotes] = useState('');
  const [notesMissing, setNotesMissing] = useState(false);
  const until = formatDay(new Date(Date.now() + assessment.attestation_validity_days * DAY_MS).toISOString());
  const count = assessment.controls.length;

  const approve = () => review.mutate({ review_status: 'approved', ...(notes.trim() ? { notes: notes.trim() } : {}) });
  const requestChanges = () => {
    if (!notes.trim()) return setNotesMissing(true);
    const gaps = Object.entries(questionNotes)
      .filter(([, note]) => note.trim())
      .map(([question_id, note]) => ({ question_id, notes: note.trim() }));
    review.mutate({ review_status: 'rejected', notes: notes.trim(), ...(gaps.length ? { gaps } : {}) });
  };

  return (
    <Paper withBorder p="md" component="section" aria-labelledby="review-title">
      <Stack gap="sm">
        <Title order={2} size="h4" id="review-title">
          {t('review.title')}
        </Title>
        <Text size="sm" data-testid="attestation-preview">
          {count ? t('review.willAttest', { count, date: until, days: assessment.attestation_validity_days }) : t('review.attestsNothing')}
        </Text>
        {count > 0 && <AttestedControls controls={assessment.controls} label={t('review.controls')} />}
        <Textarea
          label={t('review.notes')}
          description={t('review.notesHint')}
          autosize
          minRows={3}
          value={notes}
          onChange={(event) => {
            setNotes(event.currentTarget.value);
            setNotesMissing(false);
          }}
          error={notesMissing ? t('review.notesRequired') : undefined}
        />
        {review.isError && (
          <Alert color="red" role="alert">
            {errorMessage(review.error)}
          </Alert>
        )}
        <Group justify="flex-end">
          <Button
            variant="default"
            color="orange"
            onClick={requestChanges}
            loading={review.isPending && review.variables?.review_status === 'rejected'}
            disabled={review.isPending}
          >
            {t('review.requestChanges')}
          </Button>
          <Button onClick={approve} loading={review.isPending && review.variables?.review_status === 'approved'} disabled={review.isPending}>
            {t('review.approve')}
          </Button>
        </Group>
      </Stack>
    </Paper>
  );
}
