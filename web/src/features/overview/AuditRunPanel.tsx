import { Alert, Button, Group, Paper, Progress, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { formatNumber } from '../../i18n';
import { QueryError } from '../../ui/QueryState';
import { isFinished, useAuditRun, type AuditRun } from './queries';

/** How far along a run is: the API reports states, not a percentage. */
const PROGRESS: Record<AuditRun['status'], number> = { queued: 15, running: 60, succeeded: 100, failed: 100 };

/** The run started from this page, followed live until it finishes, then its counts. */
export function AuditRunPanel({ jobId, onDismiss }: { jobId: string; onDismiss: () => void }) {
  const { t } = useTranslation('overview');
  const run = useAuditRun(jobId);
  if (run.isError) return <QueryError error={run.error} onRetry={() => void run.refetch()} />;
  const data = run.data;
  const status = data?.status ?? 'queued';
  const finished = isFinished(status);

  return (
    <Paper withBorder p="md" mb="md" aria-labelledby="audit-run-title">
      <Group justify="space-between" mb="xs">
        <Title order={2} size="h4" id="audit-run-title">
          {t('audit.title')}
        </Title>
        {finished && (
          <Button size="xs" variant="subtle" onClick={onDismiss}>
            {t('audit.dismiss')}
          </Button>
        )}
      </Group>
      <Stack gap="sm">
        <Progress
          value={PROGRESS[status]}
          animated={!finished}
          striped={!finished}
          color={status === 'failed' ? 'red' : status === 'succeeded' ? 'teal' : 'blue'}
          aria-label={t('audit.progressLabel')}
          size="lg"
        />
        <div role="status" aria-live="polite">
          {status === 'failed' ? (
            <Alert color="red" title={t('audit.failed', { error: data?.error ?? '' })} />
          ) : (
            <Text fw={600} data-testid="audit-run-state">
              {t(`audit.${status}`)}
            </Text>
          )}
        </div>
        {data && status === 'succeeded' && (
          <SimpleGrid cols={{ base: 2, sm: 3, md: 6 }}>
            {(
              [
                ['created', data.stats.findings_created],
                ['resolved', data.stats.findings_resolved],
                ['reopened', data.stats.findings_reopened],
                ['evaluations', data.stats.evaluations],
                ['resources', data.stats.resources_evaluated],
                ['unknown', data.stats.unknown],
              ] as const
            ).map(([key, value]) => (
              <div key={key}>
                <Text size="xs" c="dimmed">
                  {t(`audit.${key}`)}
                </Text>
                <Text fw={700} size="lg">
                  {formatNumber(value)}
                </Text>
              </div>
            ))}
          </SimpleGrid>
        )}
      </Stack>
    </Paper>
  );
}
