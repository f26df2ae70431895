import { useState, type FormEvent } from 'react';
import { Anchor, Button, Stack, Textarea, TextInput } from '@mantine/core';
import { Link, useNavigate } from 'react-router';
import { useTranslation } from 'react-i18next';
import { ApiError, errorMessage } from '../../api/errors';
import { useSession } from '../../session/session';
import { notifySuccess } from '../../ui/notify';
import { PageHeader } from '../../ui/PageHeader';
import { QueryError } from '../../ui/QueryState';
import { useCreateQuestionnaire } from './queries';

/** /questionnaires/new: a questionnaire from scratch (a draft without questions; they are added next). */
export function NewQuestionnairePage() {
  const { t } = useTranslation('questionnaires');
  const { can } = useSession();
  const create = useCreateQuestionnaire();
  const navigate = useNavigate();
  const [title, setTitle] = useState('');
  const [description, setDescription] = useState('');
  const [error, setError] = useState<{ field: 'title' | 'description'; message: string } | null>(null);
  if (!can('questionnaire:write')) return <QueryError error={new ApiError(403, 'FORBIDDEN', 'questionnaire:write')} />;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!title.trim()) return setError({ field: 'title', message: t('form.missing') });
    create.mutate(
      { title: title.trim(), ...(description.trim() ? { description: description.trim() } : {}) },
      {
        onSuccess: (created) => {
          notifySuccess(t('newPage.created', { title: created.title }));
          void navigate(`/questionnaires/${created.id}`);
        },
        // The service names the field it refuses (e.g. "body/title must NOT have more than 500 characters").
        onError: (e) => setError({ field: /description/.test(errorMessage(e)) ? 'description' : 'title', message: errorMessage(e) }),
      },
    );
  };

  return (
    <>
      <Anchor component={Link} to="/questionnaires" size="sm">
        {t('back')}
      </Anchor>
      <PageHeader title={t('newPage.title')} />
      <form onSubmit={submit} noValidate>
        <Stack gap="sm" maw={720}>
          <TextInput
            label={t('newPage.name')}
            value={title}
            onChange={(e) => {
              setTitle(e.currentTarget.value);
              setError(null);
            }}
            error={error?.field === 'title' ? error.message : undefined}
            required
          />
          <Textarea
            label={t('newPage.description')}
            value={description}
            onChange={(e) => setDescription(e.currentTarget.value)}
            error={error?.field === 'description' ? error.message : undefined}
            autosize
            minRows={3}
          />
          <Button type="submit" loading={create.isPending} w="fit-content">
            {t('newPage.submit')}
          </Button>
        </Stack>
      </form>
    </>
  );
}
