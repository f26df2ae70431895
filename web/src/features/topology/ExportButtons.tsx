import { useEffect, useRef, useState } from 'react';
import { Anchor, Button, Group, Loader, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../api/errors';
import { notifyError } from '../../ui/notify';
import { useSession } from '../../session/session';
import { exportDownloadUrl, useExportJob, useStartExport, type ExportKind } from './queries';

/**
 * Export buttons: each starts an export job of the whole graph, follows it to the end and then
 * downloads the file (a plain link: the session cookie goes with a GET).
 */
export function ExportButtons() {
  const { t } = useTranslation('topology');
  const { tenantId } = useSession();
  const start = useStartExport();
  const [jobId, setJobId] = useState<string | null>(null);
  const job = useExportJob(jobId);
  const link = useRef<HTMLAnchorElement>(null);
  const downloaded = useRef<string | null>(null);

  const run = (kind: ExportKind) =>
    start.mutate(kind, {
      onSuccess: (started) => {
        downloaded.current = null;
        setJobId(started.job_id);
      },
      onError: (error) => notifyError(errorMessage(error)),
    });

  const status = job.data?.status;
  useEffect(() => {
    if (status === 'succeeded' && job.data && downloaded.current !== job.data.job_id) {
      downloaded.current = job.data.job_id;
      link.current?.click();
    }
  }, [status, job.data]);

  const busy = start.isPending || status === 'queued' || status === 'running';
  return (
    <Group gap="sm" wrap="wrap">
      <Button variant="light" onClick={() => run('drawio')} disabled={busy}>
        {t('export.drawio')}
      </Button>
      <Button variant="light" onClick={() => run('png')} disabled={busy}>
        {t('export.png')}
      </Button>
      <div role="status" aria-live="polite">
        {job.isError && (
          <Text size="sm" c="red.9">
            {t('export.failed', { message: errorMessage(job.error) })}
          </Text>
        )}
        {busy && jobId && (
          <Group gap={6}>
            <Loader size="xs" />
            <Text size="sm">{status === 'running' ? t('export.running') : t('export.queued')}</Text>
          </Group>
        )}
        {status === 'failed' && (
          <Text size="sm" c="red.9">
            {t('export.failed', { message: job.data?.error ?? '' })}
          </Text>
        )}
        {status === 'expired' && <Text size="sm">{t('export.expired')}</Text>}
        {status === 'succeeded' && job.data && (
          <Anchor ref={link} href={exportDownloadUrl(tenantId, job.data)} download={job.data.file_name ?? true} size="sm">
            {t('export.download', { file: job.data.file_name ?? job.data.kind })}
          </Anchor>
        )}
      </div>
    </Group>
  );
}
