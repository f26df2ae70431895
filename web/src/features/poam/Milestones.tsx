import { useState } from 'react';
import { Button, Checkbox, Group, Table, Text, TextInput } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../api/errors';
import { formatDay } from '../../i18n';
import { notifyError, notifySuccess } from '../../ui/notify';
import { useSaveMilestones, type PoamItem } from './queries';

/** The item's milestones; adding one or marking one done saves the whole list (the service's full update). */
export function Milestones({ item, editable }: { item: PoamItem; editable: boolean }) {
  const { t } = useTranslation('poam');
  const save = useSaveMilestones();
  const [date, setDate] = useState('');
  const [description, setDescription] = useState('');

  const store = (milestones: PoamItem['milestones'], done: string, after?: () => void) =>
    save.mutate(
      { item, milestones },
      {
        onSuccess: () => {
          notifySuccess(done);
          after?.();
        },
        onError: (error) => notifyError(errorMessage(error)),
      },
    );

  const add = (event: React.FormEvent) => {
    event.preventDefault();
    if (!date || !description.trim()) return;
    store([...item.milestones, { date, description: description.trim(), done: false }], t('milestones.added'), () => {
      setDate('');
      setDescription('');
    });
  };

  return (
    <>
      {item.milestones.length === 0 ? (
        <Text size="sm" c="dimmed" mb="sm">
          {t('milestones.empty')}
        </Text>
      ) : (
        <Table.ScrollContainer minWidth={360} type="native">
          <Table verticalSpacing={4} mb="sm">
            <caption className="visually-hidden">{t('milestones.caption')}</caption>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('milestones.date')}</Table.Th>
                <Table.Th>{t('milestones.description')}</Table.Th>
                <Table.Th>{t('milestones.done')}</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {item.milestones.map((milestone, index) => (
                <Table.Tr key={`${milestone.date}-${index}`}>
                  <Table.Td>
                    <time dateTime={milestone.date}>{formatDay(milestone.date)}</time>
                  </Table.Td>
                  <Table.Td style={{ wordBreak: 'break-word' }}>{milestone.description}</Table.Td>
                  <Table.Td>
                    <Checkbox
                      aria-label={t('milestones.markDone', { description: milestone.description })}
                      checked={milestone.done}
                      disabled={!editable || save.isPending}
                      onChange={(event) =>
                        store(
                          item.milestones.map((m, i) => (i === index ? { ...m, done: event.currentTarget.checked } : m)),
                          t('milestones.saved'),
                        )
                      }
                    />
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
      {editable && (
        <form onSubmit={add}>
          <Group align="flex-end" gap="sm" wrap="wrap">
            <TextInput type="date" label={t('milestones.date')} value={date} onChange={(event) => setDate(event.currentTarget.value)} required w={170} />
            <TextInput
              label={t('milestones.description')}
              value={description}
              onChange={(event) => setDescription(event.currentTarget.value)}
              required
              maxLength={4000}
              style={{ flex: 1, minWidth: 220 }}
            />
            <Button type="submit" loading={save.isPending} disabled={!date || !description.trim()}>
              {t('milestones.add')}
            </Button>
          </Group>
        </form>
      )}
    </>
  );
}
