import { useState } from 'react';
import { Badge, Button, Card, Group, Modal, Stack, Text, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../api/errors';
import { notifyError, notifySuccess } from '../../ui/notify';
import { EmptyState } from '../../ui/QueryState';
import { QuestionForm } from './QuestionForm';
import { useDeleteQuestion, useSaveQuestion, type Question, type Questionnaire } from './queries';

/** The questions in order; while a draft, each can be edited or removed and new ones added. */
export function QuestionsSection({ questionnaire, editable }: { questionnaire: Questionnaire; editable: boolean }) {
  const { t } = useTranslation('questionnaires');
  // undefined: closed; null: a new question; a question: editing it.
  const [editing, setEditing] = useState<Question | null | undefined>(undefined);
  const save = useSaveQuestion(questionnaire.id);
  const remove = useDeleteQuestion(questionnaire.id);

  return (
    <section aria-labelledby="questions-title">
      <Group justify="space-between" mb="sm">
        <Title order={2} size="h3" id="questions-title">
          {t('questions.title')}
        </Title>
        {editable && <Button onClick={() => setEditing(null)}>{t('questions.add')}</Button>}
      </Group>
      {questionnaire.questions.length === 0 && <EmptyState title={t('questions.empty')}>{editable ? t('questions.emptyHint') : undefined}</EmptyState>}
      <Stack gap="xs" component="ol" p={0} m={0} style={{ listStyle: 'none' }}>
        {questionnaire.questions.map((q, index) => (
          <Card key={q.id} withBorder component="li" padding="sm" aria-label={t('questions.item', { n: index + 1 })}>
            <Group justify="space-between" align="flex-start" wrap="nowrap">
              <Stack gap={4}>
                <Text fw={500}>
                  {index + 1}. {q.text}
                </Text>
                <Group gap="xs">
                  <Badge variant="outline" c="dark" color="gray">
                    {t(`types.${q.type}`)}
                  </Badge>
                  {q.required && (
                    <Badge variant="light" color="red" c="dark">
                      {t('questions.required')}
                    </Badge>
                  )}
                  {q.accepted_types && <Text size="xs">{t('questions.accepts', { types: q.accepted_types.join(', ') })}</Text>}
                </Group>
                {q.control_mappings.length > 0 && <Text size="xs">{t('questions.mappings', { mappings: q.control_mappings.join(', ') })}</Text>}
              </Stack>
              {editable && (
                <Group gap="xs" wrap="nowrap">
                  <Button size="xs" variant="light" onClick={() => setEditing(q)} aria-label={t('questions.editNamed', { n: index + 1 })}>
                    {t('questions.edit')}
                  </Button>
                  <Button
                    size="xs"
                    variant="subtle"
                    color="red"
                    loading={remove.isPending && remove.variables === q.id}
                    aria-label={t('questions.deleteNamed', { n: index + 1 })}
                    onClick={() =>
                      remove.mutate(q.id, {
                        onSuccess: () => notifySuccess(t('questions.deleted')),
                        onError: (e) => notifyError(errorMessage(e)),
                      })
                    }
                  >
                    {t('questions.delete')}
                  </Button>
                </Group>
              )}
            </Group>
          </Card>
        ))}
      </Stack>
      <Modal
        opened={editing !== undefined}
        onClose={() => setEditing(undefined)}
        closeButtonProps={{ 'aria-label': t('common:close') }}
        title={editing ? t('questions.editTitle') : t('questions.addTitle')}
        size="xl"
      >
        {editing !== undefined && (
          <QuestionForm
            key={editing?.id ?? 'new'}
            question={editing ?? undefined}
            saving={save.isPending}
            onCancel={() => setEditing(undefined)}
            onSave={(input) =>
              save.mutateAsync({ questionId: editing?.id, input }).then(() => {
                notifySuccess(editing ? t('questions.saved') : t('questions.added'));
                setEditing(undefined);
              })
            }
          />
        )}
      </Modal>
    </section>
  );
}
