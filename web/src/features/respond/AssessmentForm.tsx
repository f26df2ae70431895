import { Alert, Badge, Button, Group, List, Paper, Progress, Stack, Text, Title } from '@mantine/core';
import { useDebouncedCallback } from '@mantine/hooks';
import { useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ApiError, errorMessage } from '../../api/errors';
import { formatDate, formatDay } from '../../i18n';
import { FileEvidence } from './FileEvidence';
import { QuestionField } from './QuestionField';
import type { Evidence, FormAssessment, RespondentApi } from './respondent-api';

type SaveState = 'idle' | 'saving' | 'saved' | 'failed';

/** Per-question refusals of a save (400 details.errors) or a submit (400 details.missing). */
function questionErrors(error: unknown): Record<string, string> {
  const details = error instanceof ApiError ? (error.details as { errors?: Array<{ question_id: string; message: string }> } | null) : null;
  return Object.fromEntries((details?.errors ?? []).map((e) => [e.question_id, e.message]));
}

/**
 * An assessment to answer: every question by its type, saved as the person types (each changed
 * answer a second after the last keystroke), files uploaded per question, and a submit that names
 * what is still missing. Read-only once submitted or approved; after a change request the reviewer's
 * notes stand beside the questions they concern.
 */
export function AssessmentForm<A extends FormAssessment>({ assessment, api, onChanged }: { assessment: A; api: RespondentApi<A>; onChanged: (next: A) => void }) {
  const { t } = useTranslation('respond');
  const [answers, setAnswers] = useState<Record<string, string>>(() => Object.fromEntries(assessment.responses.map((r) => [r.question_id, r.answer])));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [saveState, setSaveState] = useState<SaveState>('idle');
  const [missing, setMissing] = useState<string[]>([]);
  const [submitting, setSubmitting] = useState(false);
  const [submitError, setSubmitError] = useState<string | null>(null);
  const dirty = useRef(new Set<string>());
  const readOnly = assessment.status === 'submitted' || assessment.status === 'approved';
  const gapsByQuestion = new Map(assessment.gaps.map((gap) => [gap.question_id, gap]));

  const flush = async (latest: Record<string, string>) => {
    const ids = [...dirty.current].filter((id) => latest[id]);
    dirty.current.clear();
    if (ids.length === 0) return;
    setSaveState('saving');
    try {
      onChanged(await api.save(ids.map((id) => ({ question_id: id, answer: latest[id]! }))));
      setErrors((current) => Object.fromEntries(Object.entries(current).filter(([id]) => !ids.includes(id))));
      setSaveState('saved');
    } catch (failure) {
      const byQuestion = questionErrors(failure);
      setErrors((current) => ({ ...current, ...(Object.keys(byQuestion).length ? byQuestion : Object.fromEntries(ids.map((id) => [id, errorMessage(failure)]))) }));
      setSaveState('failed');
    }
  };
  const saveSoon = useDebouncedCallback((latest: Record<string, string>) => void flush(latest), { delay: 1000, flushOnUnmount: true });

  const answer = (questionId: string, value: string) => {
    const next = { ...answers, [questionId]: value };
    setAnswers(next);
    dirty.current.add(questionId);
    saveSoon(next);
  };

  const uploaded = (questionId: string, evidence: Evidence) => {
    const ids = (answers[questionId] ?? '').split(',').filter(Boolean);
    const next = { ...answers, [questionId]: [...ids, evidence.id].join(',') };
    setAnswers(next);
    dirty.current.add(questionId);
    void flush(next);
  };

  const submit = async () => {
    setSubmitting(true);
    setSubmitError(null);
    setMissing([]);
    try {
      saveSoon.cancel();
      await flush(answers);
      onChanged(await api.submit());
    } catch (failure) {
      const details = failure instanceof ApiError ? (failure.details as { missing?: string[] } | null) : null;
      if (details?.missing?.length) setMissing(details.missing);
      else setSubmitError(errorMessage(failure));
    } finally {
      setSubmitting(false);
    }
  };

  const { progress } = assessment;
  const textOf = (id: string) => assessment.questions.find((q) => q.id === id)?.text ?? id;

  return (
    <Stack>
      <Stack gap={4}>
        <Title order={1}>{assessment.questionnaire_title}</Title>
        {assessment.link && (
          <Text size="sm" c="dimmed">
            {t('forName', { name: assessment.link.name, date: formatDay(assessment.link.expires_at) })}
          </Text>
        )}
        {assessment.due_date && (
          <Text size="sm" c={assessment.overdue ? 'red.9' : undefined}>
            {t(assessment.overdue ? 'overdue' : 'due', { date: formatDay(assessment.due_date) })}
          </Text>
        )}
      </Stack>
      <Stack gap={4}>
        <Text size="sm">{t('progress', { answered: progress.answered, total: progress.total, requiredAnswered: progress.required_answered, required: progress.required })}</Text>
        <Progress value={progress.total ? (100 * progress.answered) / progress.total : 0} aria-label={t('title')} />
      </Stack>
      {assessment.status === 'submitted' && <Alert color="blue">{t('submitted', { date: formatDate(assessment.submitted_at) })}</Alert>}
      {assessment.status === 'approved' && <Alert color="green">{t('approved')}</Alert>}
      {assessment.status === 'changes_requested' && (
        <Alert color="orange" title={t('changesRequested')}>
          {assessment.review_notes}
        </Alert>
      )}
      {assessment.questions.map((question, index) => {
        const label = (
          <>
            {index + 1}. {question.text}{' '}
            {question.required && (
              <Text span size="xs" c="dimmed">
                ({t('required')})
              </Text>
            )}
          </>
        );
        const gap = gapsByQuestion.get(question.id);
        return (
          <Paper key={question.id} withBorder p="md" component="section" aria-label={question.text}>
            <Stack gap="xs">
              {question.type === 'file_upload' ? (
                <FileEvidence
                  question={question}
                  files={assessment.evidence.filter((file) => file.question_id === question.id)}
                  api={api}
                  readOnly={readOnly}
                  label={label}
                  error={errors[question.id]}
                  onUploaded={(evidence) => uploaded(question.id, evidence)}
                />
              ) : (
                <QuestionField
                  question={question}
                  value={answers[question.id] ?? ''}
                  onChange={(value) => answer(question.id, value)}
                  readOnly={readOnly}
                  error={errors[question.id]}
                  label={label}
                />
              )}
              {gap && (
                <Alert color="orange" p="xs" title={t('reviewerNote')}>
                  <Group gap="xs">
                    <Badge color="orange" variant="light">
                      {gap.severity}
                    </Badge>
                    <Text size="sm">{gap.notes}</Text>
                  </Group>
                </Alert>
              )}
            </Stack>
          </Paper>
        );
      })}
      {!readOnly && (
        <Stack>
          {missing.length > 0 && (
            <Alert color="red" title={t('missingTitle')} role="alert">
              <List size="sm">
                {missing.map((id) => (
                  <List.Item key={id}>{textOf(id)}</List.Item>
                ))}
              </List>
            </Alert>
          )}
          {submitError && (
            <Alert color="red" role="alert">
              {submitError}
            </Alert>
          )}
          <Group justify="space-between">
            <Text size="sm" c={saveState === 'failed' ? 'red.9' : 'dimmed'} aria-live="polite">
              {saveState === 'saving' ? t('saving') : saveState === 'saved' ? t('saved') : saveState === 'failed' ? t('saveFailed') : ''}
            </Text>
            <Button onClick={() => void submit()} loading={submitting}>
              {t('submit')}
            </Button>
          </Group>
        </Stack>
      )}
    </Stack>
  );
}
