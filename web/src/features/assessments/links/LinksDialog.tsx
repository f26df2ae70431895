import { Button, Modal, Stack, Text, Title } from '@mantine/core';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { CreateLinkForm } from './CreateLinkForm';
import { LinksTable } from './LinksTable';

/**
 * A reviewer's way to send an assessment to someone without an account (a supplier): a link that opens
 * only this assessment's respondent view, mailed or shown once to copy, listed with its uses and
 * revocable. A submitted or approved assessment takes no new link (the service answers 409).
 */
export function LinksButton({ assessmentId, who, open: answerable }: { assessmentId: string; who: string; open: boolean }) {
  const { t } = useTranslation('assessments');
  const [opened, setOpened] = useState(false);
  return (
    <>
      <Button size="xs" variant="light" onClick={() => setOpened(true)} aria-label={t('links.openNamed', { who })}>
        {t('links.open')}
      </Button>
      <Modal opened={opened} onClose={() => setOpened(false)} title={t('links.title', { who })} size="xl" closeButtonProps={{ 'aria-label': t('links.close') }}>
        <Stack gap="md">
          <Text size="sm">{t('links.intro')}</Text>
          {answerable ? <CreateLinkForm assessmentId={assessmentId} /> : <Text size="sm">{t('links.closedAssessment')}</Text>}
          <Title order={3} size="h4">
            {t('links.listTitle')}
          </Title>
          <LinksTable assessmentId={assessmentId} />
        </Stack>
      </Modal>
    </>
  );
}
