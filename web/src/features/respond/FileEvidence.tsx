import { Alert, Box, Button, FileButton, Group, Progress, Stack, Text } from '@mantine/core';
import { useState, type DragEvent, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../api/errors';
import { formatNumber } from '../../i18n';
import { MAX_UPLOAD_BYTES, type Evidence, type Question, type RespondentApi } from './respondent-api';

const MIB = 1024 * 1024;

/** A file's size for people: bytes under 1 KiB, then KiB and MiB. */
function sizeOf(bytes: number): string {
  if (bytes < 1024) return `${formatNumber(bytes)} B`;
  return bytes < MIB ? `${formatNumber(bytes / 1024, 1)} KiB` : `${formatNumber(bytes / MIB, 1)} MiB`;
}

/** The extension as the service compares it (".pdf"), from a file name. */
function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot < 0 ? '' : name.slice(dot).toLowerCase();
}

/**
 * A file question: its uploads, and a drop zone that says the accepted types and the 50 MiB limit
 * before anything is sent, refuses what the service would refuse without uploading it, and shows the
 * progress of a large file. Each upload is added to the question's answer (the evidence ids).
 */
export function FileEvidence({
  question,
  files,
  api,
  readOnly,
  label,
  error,
  onUploaded,
}: {
  question: Question;
  files: Evidence[];
  api: RespondentApi;
  readOnly: boolean;
  label: ReactNode;
  error?: string;
  onUploaded: (evidence: Evidence) => void;
}) {
  const { t } = useTranslation('respond');
  const [progress, setProgress] = useState<{ name: string; fraction: number } | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [over, setOver] = useState(false);
  const types = question.accepted_types ?? [];
  const size = `${formatNumber(MAX_UPLOAD_BYTES / MIB)} MiB`;

  const upload = async (file: File | null) => {
    if (!file) return;
    setProblem(null);
    if (file.size > MAX_UPLOAD_BYTES) return setProblem(t('files.tooLarge', { name: file.name, size }));
    if (types.length && !types.includes(extensionOf(file.name))) return setProblem(t('files.wrongType', { name: file.name, types: types.join(', ') }));
    setProgress({ name: file.name, fraction: 0 });
    try {
      onUploaded(await api.upload(question.id, file, (fraction) => setProgress({ name: file.name, fraction })));
    } catch (failure) {
      setProblem(errorMessage(failure));
    } finally {
      setProgress(null);
    }
  };

  const drop = (event: DragEvent<HTMLDivElement>) => {
    event.preventDefault();
    setOver(false);
    if (!readOnly && !progress) void upload(event.dataTransfer.files[0] ?? null);
  };

  return (
    <Stack gap="xs">
      <Text size="sm" fw={500}>
        {label}
      </Text>
      {question.help && (
        <Text size="xs" c="dimmed">
          {question.help}
        </Text>
      )}
      {files.length > 0 && (
        <Box component="ul" m={0} pl="md" aria-label={t('files.uploaded')}>
          {files.map((file) => (
            <li key={file.id}>
              <Text size="sm">
                {file.filename} ({sizeOf(file.size_bytes)})
              </Text>
            </li>
          ))}
        </Box>
      )}
      {!readOnly && (
        <Box
          onDragOver={(event) => {
            event.preventDefault();
            setOver(true);
          }}
          onDragLeave={() => setOver(false)}
          onDrop={drop}
          p="md"
          bd={`1px dashed ${over ? 'var(--mantine-primary-color-filled)' : 'var(--mantine-color-default-border)'}`}
          style={{ borderRadius: 'var(--mantine-radius-md)' }}
        >
          <Group justify="space-between" wrap="wrap">
            <Stack gap={2}>
              <Text size="sm">{t('files.drop')}</Text>
              <Text size="xs" c="dimmed">
                {t('files.accepted', { types: types.join(', '), size })}
              </Text>
            </Stack>
            <FileButton onChange={(file) => void upload(file)} accept={types.join(',')} disabled={Boolean(progress)}>
              {(props) => (
                <Button variant="default" size="xs" {...props}>
                  {t('files.choose')}
                </Button>
              )}
            </FileButton>
          </Group>
          {progress && (
            <Stack gap={4} mt="sm">
              <Text size="xs">{t('files.uploading', { name: progress.name })}</Text>
              <Progress value={Math.round(progress.fraction * 100)} aria-label={t('files.uploading', { name: progress.name })} />
            </Stack>
          )}
        </Box>
      )}
      {(problem || error) && (
        <Alert color="red" p="xs" role="alert">
          {problem ?? error}
        </Alert>
      )}
      {files.length === 0 && readOnly && (
        <Text size="sm" c="dimmed">
          —
        </Text>
      )}
    </Stack>
  );
}
