import { useState, type FormEvent } from 'react';
import { Alert, Button, Group, Modal, Radio, Stack, TextInput, Textarea } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../../api/errors';
import { formatDay } from '../../../i18n';
import { useSession } from '../../../session/session';
import { notifySuccess } from '../../../ui/notify';
import { useAcceptFinding, useAcceptGroup } from '../queries';

/** The API refuses an expiry more than 365 days out; the form says so before asking. */
export const MAX_ACCEPT_DAYS = 365;

/** YYYY-MM-DD of a local day `days` from today (what a date input takes). */
function dayFromToday(days: number): string {
  const date = new Date();
  date.setDate(date.getDate() + days);
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

export type AcceptTarget = { kind: 'finding'; findingId: string; groupId: string } | { kind: 'group'; groupId: string; label: string };

/**
 * Accept the risk of one finding or of its whole root-cause group: owner, reason and expiry (a date
 * from tomorrow to 365 days out, checked here and again by the API, whose refusal is shown as said).
 */
export function AcceptRiskModal({ target, onClose }: { target: AcceptTarget | null; onClose: () => void }) {
  const { t } = useTranslation('findings');
  const { me } = useSession();
  const acceptFinding = useAcceptFinding();
  const acceptGroup = useAcceptGroup();
  const [owner, setOwner] = useState(me.username ?? '');
  const [reason, setReason] = useState('');
  const [expires, setExpires] = useState(dayFromToday(90));
  const [scope, setScope] = useState<'finding' | 'group'>('finding');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [apiError, setApiError] = useState<string | null>(null);
  const min = dayFromToday(1);
  const max = dayFromToday(MAX_ACCEPT_DAYS);
  const pending = acceptFinding.isPending || acceptGroup.isPending;

  const close = () => {
    setErrors({});
    setApiError(null);
    setReason('');
    onClose();
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!target) return;
    const found: Record<string, string> = {};
    if (!owner.trim()) found.owner = t('accept.required');
    if (!reason.trim()) found.reason = t('accept.required');
    if (!expires) found.expires = t('accept.required');
    else if (expires < min) found.expires = t('accept.past');
    else if (expires > max) found.expires = t('accept.tooFar', { days: MAX_ACCEPT_DAYS, date: formatDay(`${max}T00:00:00`) });
    setErrors(found);
    setApiError(null);
    if (Object.keys(found).length) return;
    // Local midnight of the chosen day: inside the 365 days whatever the time now.
    const input = { owner: owner.trim(), reason: reason.trim(), expires_at: new Date(`${expires}T00:00:00`).toISOString() };
    try {
      if (target.kind === 'finding' && scope === 'finding') await acceptFinding.mutateAsync({ findingId: target.findingId, input });
      else await acceptGroup.mutateAsync({ groupId: target.groupId, input });
      notifySuccess(t('accept.done'));
      close();
    } catch (error) {
      setApiError(errorMessage(error));
    }
  };

  return (
    <Modal opened={target !== null} onClose={close} title={t('accept.title')}>
      <form onSubmit={(event) => void submit(event)} noValidate>
        <Stack gap="sm">
          {target?.kind === 'finding' ? (
            <Radio.Group label={t('accept.scope')} value={scope} onChange={(value) => setScope(value === 'group' ? 'group' : 'finding')}>
              <Stack gap={4} mt={4}>
                <Radio value="finding" label={t('accept.scopeFinding')} />
                <Radio value="group" label={t('accept.scopeGroup')} />
              </Stack>
            </Radio.Group>
          ) : (
            target && <Alert color="blue">{t('accept.groupNote', { label: target.label })}</Alert>
          )}
          <TextInput label={t('accept.owner')} value={owner} onChange={(event) => setOwner(event.currentTarget.value)} error={errors.owner} required />
          <Textarea label={t('accept.reason')} value={reason} onChange={(event) => setReason(event.currentTarget.value)} error={errors.reason} required autosize minRows={3} />
          <TextInput
            type="date"
            label={t('accept.expires')}
            description={t('accept.limit', { days: MAX_ACCEPT_DAYS, date: formatDay(`${max}T00:00:00`) })}
            value={expires}
            min={min}
            max={max}
            onChange={(event) => setExpires(event.currentTarget.value)}
            error={errors.expires}
            required
          />
          {apiError && (
            <Alert color="red" role="alert" title={t('accept.refused')}>
              {apiError}
            </Alert>
          )}
          <Group justify="flex-end">
            <Button variant="default" onClick={close}>
              {t('common:cancel')}
            </Button>
            <Button type="submit" loading={pending}>
              {t('accept.submit')}
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}
