import { Alert, Anchor, Button, Group, Stack, Text } from '@mantine/core';
import { Link, useNavigate, useParams } from 'react-router';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../api/errors';
import { formatDay } from '../../i18n';
import { useSession } from '../../session/session';
import { notifySuccess } from '../../ui/notify';
import { PageHeader } from '../../ui/PageHeader';
import { QueryView } from '../../ui/QueryState';
import { AssessmentsSection } from './AssessmentsSection';
import { AssignForm } from './AssignForm';
import { useLifecycle, useQuestionnaire, type Lifecycle, type Questionnaire } from './queries';
import { QuestionsSection } from './QuestionsSection';
import { StatusBadge } from './StatusBadge';

/** /questionnaires/:id: its questions (editable while a draft), publish, archive, new version, assign. */
export function QuestionnairePage() {
  const { questionnaireId = '' } = useParams();
  const questionnaire = useQuestionnaire(questionnaireId);
  const { t } = useTranslation('questionnaires');
  return (
    <>
      <Anchor component={Link} to="/questionnaires" size="sm">
        {t('back')}
      </Anchor>
      <QueryView query={questionnaire}>{(data) => <QuestionnaireView key={data.id} questionnaire={data} />}</QueryView>
    </>
  );
}

function QuestionnaireView({ questionnaire: q }: { questionnaire: Questionnaire }) {
  const { t } = useTranslation('questionnaires');
  const { can } = useSession();
  const writable = can('questionnaire:write');
  const lifecycle = useLifecycle(q.id);
  const navigate = useNavigate();

  const run = (step: Lifecycle) =>
    lifecycle.mutate(step, {
      onSuccess: (result) => {
        notifySuccess(t(`lifecycle.done.${step}`, { version: result.version }));
        if (step === 'versions') void navigate(`/questionnaires/${result.id}`);
      },
    });

  const actions = writable && (
    <>
      {q.status === 'draft' && (
        <Button onClick={() => run('publish')} loading={lifecycle.isPending && lifecycle.variables === 'publish'}>
          {t('lifecycle.publish')}
        </Button>
      )}
      {q.status !== 'draft' && (
        <Button variant="light" onClick={() => run('versions')} loading={lifecycle.isPending && lifecycle.variables === 'versions'}>
          {t('lifecycle.versions')}
        </Button>
      )}
      {q.status !== 'archived' && (
        <Button variant="default" onClick={() => run('archive')} loading={lifecycle.isPending && lifecycle.variables === 'archive'}>
          {t('lifecycle.archive')}
        </Button>
      )}
    </>
  );

  return (
    <Stack gap="lg">
      <div>
        <PageHeader title={q.title} actions={actions} />
        <Group gap="md">
          <StatusBadge status={q.status} />
          <Text size="sm">{t('detail.version', { version: q.version })}</Text>
          <Text size="sm">{t('detail.questions', { count: q.question_count })}</Text>
          {q.frameworks.length > 0 && <Text size="sm">{t('detail.frameworks', { frameworks: q.frameworks.join(', ') })}</Text>}
          {q.published_at && <Text size="sm">{t('detail.published', { at: formatDay(q.published_at) })}</Text>}
        </Group>
        {q.description && (
          <Text size="sm" mt="xs">
            {q.description}
          </Text>
        )}
        {q.status === 'archived' && (
          <Text size="sm" mt="xs">
            {t('detail.archivedNote')}
          </Text>
        )}
      </div>
      {lifecycle.isError && (
        <Alert color="red" title={t('lifecycle.failed')} role="alert">
          {errorMessage(lifecycle.error)}
        </Alert>
      )}
      <QuestionsSection questionnaire={q} editable={writable && q.status === 'draft'} />
      {writable && q.status === 'published' && <AssignForm questionnaire={q} />}
      <AssessmentsSection questionnaireId={q.id} />
    </Stack>
  );
}
