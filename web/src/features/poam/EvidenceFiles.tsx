import { useState } from 'react';
import { Alert, Anchor, Button, FileButton, Group, Table, Text, TextInput } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../api/errors';
import { formatDate, formatNumber } from '../../i18n';
import { useSession } from '../../session/session';
import { notifySuccess } from '../../ui/notify';
import { QueryView } from '../../ui/QueryState';
import { evidenceDownloadUrl, usePoamEvidence, useUploadEvidence, type PoamItem } from './queries';

/** The service's limit (src/modules/poam/evidence-service.ts), checked before a large file is sent. */
const MAX_EVIDENCE_BYTES = 50 * 1024 * 1024;

const sizeOf = (bytes: number): string =>
  bytes < 1024 ? `${formatNumber(bytes)} B` : bytes < 1024 * 1024 ? `${formatNumber(bytes / 1024, 1)} KiB` : `${formatNumber(bytes / 1024 / 1024, 1)} MiB`;

/** The item's evidence files with their downloads, and the upload (not once the item is closed). */
export function EvidenceFiles({ item, editable }: { item: PoamItem; editable: boolean }) {
  const { t } = useTranslation('poam');
  const { tenantId } = useSession();
  const evidence = usePoamEvidence(item.id);
  const upload = useUploadEvidence();
  const [description, setDescription] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const [sending, setSending] = useState<string | null>(null);

  const send = (file: File | null) => {
    if (!file) return;
    setProblem(null);
    if (file.size > MAX_EVIDENCE_BYTES) return setProblem(t('evidence.tooLarge', { name: file.name }));
    setSending(file.name);
    upload.mutate(
      { id: item.id, file, description: description.trim() || undefined },
      {
        onSuccess: () => {
          notifySuccess(t('evidence.done', { name: file.name }));
          setDescription('');
        },
        onError: (error) => setProblem(errorMessage(error)),
        onSettled: () => setSending(null),
      },
    );
  };

  return (
    <>
      <QueryView
        query={evidence}
        isEmpty={(data) => data.items.length === 0}
        empty={
          <Text size="sm" c="dimmed" mb="sm">
            {t('evidence.empty')}
          </Text>
        }
      >
        {(data) => (
          <Table.ScrollContainer minWidth={420} type="native">
            <Table verticalSpacing={4} mb="sm">
              <caption className="visually-hidden">{t('evidence.caption')}</caption>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>{t('evidence.file')}</Table.Th>
                  <Table.Th>{t('evidence.size')}</Table.Th>
                  <Table.Th>{t('evidence.uploadedBy')}</Table.Th>
                  <Table.Th>{t('evidence.uploaded')}</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {data.items.map((file) => (
                  <Table.Tr key={file.id}>
                    <Table.Td style={{ wordBreak: 'break-all' }}>
                      <Anchor
                        href={evidenceDownloadUrl(tenantId, item.id, file.id)}
                        download={file.filename}
                        size="sm"
                        aria-label={t('evidence.download', { name: file.filename })}
                      >
                        {file.filename}
                      </Anchor>
                      {file.description && (
                        <Text size="xs" c="dimmed">
                          {file.description}
                        </Text>
                      )}
                    </Table.Td>
                    <Table.Td>{sizeOf(file.size_bytes)}</Table.Td>
                    <Table.Td>{file.uploaded_by}</Table.Td>
                    <Table.Td>{formatDate(file.created_at)}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        )}
      </QueryView>
      {editable && (
        <Group align="flex-end" gap="sm" wrap="wrap">
          <TextInput
            label={t('evidence.description')}
            value={description}
            onChange={(event) => setDescription(event.currentTarget.value)}
            maxLength={4000}
            style={{ flex: 1, minWidth: 220 }}
          />
          <FileButton onChange={send}>
            {(props) => (
              <Button {...props} loading={upload.isPending}>
                {t('evidence.upload')}
              </Button>
            )}
          </FileButton>
        </Group>
      )}
      {editable && (
        <Text size="xs" c="dimmed" mt={4}>
          {t('evidence.limit')}
        </Text>
      )}
      <div role="status" aria-live="polite">
        {sending && <Text size="sm">{t('evidence.uploading', { name: sending })}</Text>}
      </div>
      {problem && (
        <Alert color="red" role="alert" mt="sm">
          {problem}
        </Alert>
      )}
    </>
  );
}
