import { Alert, Button, Group, NumberInput, Stack, Text, TextInput } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../../api/errors';
import { CopyText } from '../../../ui/CopyText';
import { linkAddress, useCreateLink, type CreatedLink } from './queries';

/** The service's default and longest lifetime of a link (src/modules/questionnaires/respondent-links.ts). */
const DEFAULT_DAYS = 14;
const MAX_DAYS = 90;

/** What became of a new link: mailed, or its address shown this once to copy (and why it was not mailed). */
function Created({ created }: { created: CreatedLink }) {
  const { t } = useTranslation('assessments');
  const address = linkAddress(created);
  return (
    <Alert color="teal" title={created.delivery === 'email' ? t('links.mailed', { email: created.link.recipient_email }) : t('links.copyTitle')} role="status">
      {created.email_error && (
        <Text size="sm" mb="xs">
          {t('links.notMailed', { reason: created.email_error })}
        </Text>
      )}
      {address && (
        <Stack gap={4}>
          <Text size="sm">{t('links.copyOnce')}</Text>
          <CopyText value={address} label={t('links.address')} />
        </Stack>
      )}
    </Alert>
  );
}

/** Sends the assessment to someone without an account: who it is for, an optional e-mail, how long it works. */
export function CreateLinkForm({ assessmentId }: { assessmentId: string }) {
  const { t } = useTranslation('assessments');
  const create = useCreateLink(assessmentId);
  const [name, setName] = useState('');
  const [email, setEmail] = useState('');
  const [days, setDays] = useState<number | string>(DEFAULT_DAYS);
  const [nameError, setNameError] = useState<string | null>(null);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!name.trim()) {
      setNameError(t('links.nameRequired'));
      return;
    }
    setNameError(null);
    create.mutate(
      { name: name.trim(), ...(email.trim() ? { recipient_email: email.trim() } : {}), expires_in_days: Number(days) || DEFAULT_DAYS },
      { onSuccess: () => (setName(''), setEmail('')) },
    );
  };

  return (
    <Stack gap="sm">
      <form onSubmit={submit} noValidate aria-label={t('links.formLabel')}>
        <Stack gap="xs">
          <TextInput label={t('links.name')} description={t('links.nameHelp')} value={name} onChange={(e) => setName(e.currentTarget.value)} error={nameError} required />
          <TextInput label={t('links.email')} description={t('links.emailHelp')} type="email" value={email} onChange={(e) => setEmail(e.currentTarget.value)} />
          <NumberInput label={t('links.days')} min={1} max={MAX_DAYS} value={days} onChange={setDays} w={200} />
          <Group>
            <Button type="submit" loading={create.isPending}>
              {t('links.create')}
            </Button>
          </Group>
        </Stack>
      </form>
      {create.isError && (
        <Alert color="red" title={t('links.refused')} role="alert">
          {errorMessage(create.error)}
        </Alert>
      )}
      {create.data && <Created created={create.data} />}
    </Stack>
  );
}
