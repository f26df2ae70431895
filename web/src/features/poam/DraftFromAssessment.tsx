import { useState } from 'react';
import { Button, Group, Modal, Select, Text } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../api/errors';
import { notifyError, notifySuccess } from '../../ui/notify';
import { QueryView } from '../../ui/QueryState';
import { useGappedAssessments, useGeneratePoam } from './queries';

/**
 * Drafts items from an assessment's gaps (POST /assessments/{id}/generate-poam). The console has no
 * assessment screen yet, so the assessment is chosen here among those the service would accept.
 */
export function DraftFromAssessment() {
  const { t } = useTranslation('poam');
  const [opened, { open, close }] = useDisclosure(false);
  const assessments = useGappedAssessments(opened);
  const generate = useGeneratePoam();
  const [chosen, setChosen] = useState<string | null>(null);
  const confirm = () => {
    if (!chosen) return;
    generate.mutate(chosen, {
      onSuccess: (result) => {
        notifySuccess(t('fromAssessment.done', { count: result.created, existing: result.existing }));
        setChosen(null);
        close();
      },
      onError: (error) => notifyError(errorMessage(error)),
    });
  };
  return (
    <>
      <Button variant="default" onClick={open}>
        {t('fromAssessment.action')}
      </Button>
      <Modal opened={opened} onClose={close} closeButtonProps={{ 'aria-label': t('common:close') }} title={t('fromAssessment.title')}>
        <Text size="sm" mb="sm">
          {t('fromAssessment.hint')}
        </Text>
        <QueryView query={assessments} isEmpty={(items) => items.length === 0} empty={<Text size="sm">{t('fromAssessment.none')}</Text>}>
          {(items) => (
            <Select
              label={t('fromAssessment.assessment')}
              data={items.map((assessment) => ({
                value: assessment.id,
                label: t('fromAssessment.option', {
                  title: assessment.questionnaire_title,
                  assignee: assessment.assignee ?? assessment.assignee_id,
                  status: t(`fromAssessment.statuses.${assessment.status}`),
                  gaps: assessment.gaps.length,
                }),
              }))}
              value={chosen}
              onChange={setChosen}
              mb="md"
            />
          )}
        </QueryView>
        <Group justify="flex-end">
          <Button variant="default" onClick={close}>
            {t('cancel', { ns: 'common' })}
          </Button>
          <Button onClick={confirm} disabled={!chosen} loading={generate.isPending}>
            {t('fromAssessment.confirm')}
          </Button>
        </Group>
      </Modal>
    </>
  );
}
