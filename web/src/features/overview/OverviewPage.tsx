import { Button, SimpleGrid } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../api/errors';
import { useSession } from '../../session/session';
import { notifyError } from '../../ui/notify';
import { PageHeader } from '../../ui/PageHeader';
import { useUrlState } from '../../ui/url-state';
import { AuditRunPanel } from './AuditRunPanel';
import { CriticalFindings, ExpiringSection, RunsSection } from './ActivitySections';
import { useRunAudit } from './queries';
import { HistorySection, ScoresSection, SeveritySection } from './StatusSections';

/**
 * The first screen: where compliance stands (scores, findings by severity, the trend), what needs
 * attention (new critical findings, acceptances and attestations about to end) and the last runs.
 * The run an audit started here is in the URL (?run=), so a reload keeps following it.
 */
export function OverviewPage() {
  const { t } = useTranslation('overview');
  const { can } = useSession();
  const url = useUrlState();
  const runId = url.get('run');
  const runAudit = useRunAudit();

  const start = () =>
    runAudit.mutate(undefined, {
      onSuccess: (run) => url.set({ run: run.job_id }),
      onError: (error) => notifyError(errorMessage(error)),
    });

  return (
    <>
      <PageHeader
        title={t('title')}
        actions={
          can('audit:run') && (
            <Button onClick={start} loading={runAudit.isPending}>
              {t('runAudit')}
            </Button>
          )
        }
      />
      {runId && <AuditRunPanel jobId={runId} onDismiss={() => url.set({ run: null })} />}
      <ScoresSection />
      <SimpleGrid cols={{ base: 1, md: 2 }} mb="md">
        <SeveritySection />
        <HistorySection />
      </SimpleGrid>
      <CriticalFindings />
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        <ExpiringSection />
        <RunsSection />
      </SimpleGrid>
    </>
  );
}
