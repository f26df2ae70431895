import { Anchor, Image, Paper, Stack, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import type { AssessmentEvidence } from './queries';

const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif'];

/** How the page can show a file: the service serves PDF and these images inline, nothing else. */
export function previewKind(file: Pick<AssessmentEvidence, 'content_type'>): 'pdf' | 'image' | null {
  if (file.content_type === 'application/pdf') return 'pdf';
  return IMAGE_TYPES.includes(file.content_type) ? 'image' : null;
}

/**
 * One evidence file shown in the page. The console's CSP allows frames and images from its own
 * origin only (no blob: frames, no <object>), so the preview loads the download route itself with
 * disposition=inline, which the service honours for PDF and images alone; anything else is a download.
 */
export function EvidencePreview({ file }: { file: AssessmentEvidence }) {
  const { t } = useTranslation('assessments');
  const kind = previewKind(file);
  const inline = `${file.download_url}?disposition=inline`;
  return (
    <Stack gap="xs">
      <Text size="sm" fw={500}>
        {file.filename}
      </Text>
      <Text size="xs" c="dimmed">
        {t('evidence.uploadedBy', { name: file.uploaded_by_name })}
      </Text>
      {kind === 'pdf' && (
        <Paper withBorder style={{ overflow: 'hidden' }}>
          <iframe src={inline} title={t('evidence.previewOf', { name: file.filename })} style={{ width: '100%', height: '70vh', border: 0, display: 'block' }} />
        </Paper>
      )}
      {kind === 'image' && <Image src={inline} alt={t('evidence.previewOf', { name: file.filename })} fit="contain" mah="70vh" radius="sm" />}
      {!kind && <Text size="sm">{t('evidence.noPreview')}</Text>}
      <Anchor href={file.download_url} download={file.filename} size="sm">
        {t('evidence.download', { name: file.filename })}
      </Anchor>
    </Stack>
  );
}
