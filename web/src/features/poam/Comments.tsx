import { useState } from 'react';
import { Button, Group, Stack, Text, Textarea } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../api/errors';
import { formatDate } from '../../i18n';
import { notifyError, notifySuccess } from '../../ui/notify';
import { useAddComment, type PoamItem } from './queries';

/** The item's audit-trailed log (kept by the service), oldest first, and a new comment at its end. */
export function Comments({ item, editable }: { item: PoamItem; editable: boolean }) {
  const { t } = useTranslation('poam');
  const add = useAddComment();
  const [text, setText] = useState('');
  const submit = (event: React.FormEvent) => {
    event.preventDefault();
    if (!text.trim()) return;
    add.mutate(
      { id: item.id, text: text.trim() },
      {
        onSuccess: () => {
          notifySuccess(t('comments.added'));
          setText('');
        },
        onError: (error) => notifyError(errorMessage(error)),
      },
    );
  };
  return (
    <>
      <Text size="sm" c="dimmed" mb="sm">
        {t('comments.hint')}
      </Text>
      {item.comments.length === 0 ? (
        <Text size="sm" mb="sm">
          {t('comments.empty')}
        </Text>
      ) : (
        <Stack gap="xs" component="ol" p={0} m={0} mb="sm" style={{ listStyle: 'none' }}>
          {item.comments.map((comment, index) => (
            <li key={`${comment.at}-${index}`}>
              <Text size="xs" c="dimmed">
                <time dateTime={comment.at}>{formatDate(comment.at)}</time> · {comment.author}
                {comment.status_from && comment.status_to && <> · {t('comments.move', { from: t(`status.${comment.status_from}`), to: t(`status.${comment.status_to}`) })}</>}
              </Text>
              <Text size="sm" style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-word' }}>
                {comment.text}
              </Text>
            </li>
          ))}
        </Stack>
      )}
      {editable && (
        <form onSubmit={submit}>
          <Textarea label={t('comments.label')} value={text} onChange={(event) => setText(event.currentTarget.value)} autosize minRows={2} maxLength={10000} mb="xs" />
          <Group justify="flex-end">
            <Button type="submit" loading={add.isPending} disabled={!text.trim()}>
              {t('comments.add')}
            </Button>
          </Group>
        </form>
      )}
    </>
  );
}
