import { useState } from 'react';
import { Alert, Button, Group, Menu, Modal, Text, Textarea } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../api/errors';
import { notifySuccess } from '../../ui/notify';
import { isBackward, TRANSITIONS, type PoamStatus } from './model';
import { useChangeStatus } from './queries';

interface Target {
  id: string;
  from: PoamStatus;
}

/**
 * The move dialog: a comment (required to go back, as the service demands), and the service's refusal
 * in its own words when it says no (closing without evidence).
 */
export function MoveDialog({ target, to, onClose }: { target: Target; to: PoamStatus | null; onClose: () => void }) {
  const { t } = useTranslation('poam');
  const change = useChangeStatus();
  const [comment, setComment] = useState('');
  const backward = to !== null && isBackward(target.from, to);
  const close = () => {
    change.reset();
    setComment('');
    onClose();
  };
  const confirm = () => {
    if (!to) return;
    change.mutate(
      { id: target.id, status: to, comment: comment.trim() || undefined },
      {
        onSuccess: () => {
          notifySuccess(t('move.done', { id: target.id, status: t(`status.${to}`) }));
          close();
        },
      },
    );
  };
  return (
    <Modal
      opened={to !== null}
      onClose={close}
      closeButtonProps={{ 'aria-label': t('common:close') }}
      title={to ? t('move.title', { id: target.id, status: t(`status.${to}`) }) : ''}
    >
      {to === 'closed' && (
        <Text size="sm" mb="sm">
          {t('move.closeHint')}
        </Text>
      )}
      <Textarea
        label={t('move.comment')}
        description={backward ? t('move.commentRequired') : t('move.commentOptional')}
        required={backward}
        value={comment}
        onChange={(event) => setComment(event.currentTarget.value)}
        autosize
        minRows={2}
        mb="md"
      />
      {change.isError && (
        <Alert color="red" title={t('move.refused')} role="alert" mb="md">
          {errorMessage(change.error)}
        </Alert>
      )}
      <Group justify="flex-end">
        <Button variant="default" onClick={close}>
          {t('cancel', { ns: 'common' })}
        </Button>
        <Button onClick={confirm} loading={change.isPending} disabled={backward && !comment.trim()}>
          {t('move.confirm')}
        </Button>
      </Group>
    </Modal>
  );
}

/** A menu of the moves the item's status allows (keyboard accessible: Mantine's menu is a real button and menu). */
export function MoveMenu({ id, status }: { id: string; status: PoamStatus }) {
  const { t } = useTranslation('poam');
  const [to, setTo] = useState<PoamStatus | null>(null);
  const moves = TRANSITIONS[status];
  if (moves.length === 0) return null;
  return (
    <>
      <Menu position="bottom-end" withinPortal>
        <Menu.Target>
          <Button size="compact-xs" variant="light" aria-label={t('move.menu', { id })}>
            {t('move.confirm')}
          </Button>
        </Menu.Target>
        <Menu.Dropdown>
          {moves.map((next) => (
            <Menu.Item key={next} onClick={() => setTo(next)}>
              {t('move.to', { status: t(`status.${next}`) })}
            </Menu.Item>
          ))}
        </Menu.Dropdown>
      </Menu>
      <MoveDialog target={{ id, from: status }} to={to} onClose={() => setTo(null)} />
    </>
  );
}

/** The moves as buttons, for the item's page. */
export function MoveButtons({ id, status }: { id: string; status: PoamStatus }) {
  const { t } = useTranslation('poam');
  const [to, setTo] = useState<PoamStatus | null>(null);
  const moves = TRANSITIONS[status];
  if (moves.length === 0) return <Text size="sm">{t('move.none')}</Text>;
  return (
    <>
      <Group gap="sm">
        {moves.map((next) => (
          <Button key={next} variant={isBackward(status, next) ? 'default' : 'filled'} onClick={() => setTo(next)}>
            {t('move.to', { status: t(`status.${next}`) })}
          </Button>
        ))}
      </Group>
      <MoveDialog target={{ id, from: status }} to={to} onClose={() => setTo(null)} />
    </>
  );
}
