import { Select, Tabs } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useSession } from '../../session/session';
import { PageHeader } from '../../ui/PageHeader';
import { useUrlState } from '../../ui/url-state';
import { AttestationsTable } from './AttestationsTable';
import { ControlsTable } from './ControlsTable';
import { FrameworkSettings } from './FrameworkSettings';
import { GapsTable } from './GapsTable';
import { useEnabledFrameworks, type Framework } from './queries';

/**
 * Controls per framework: all of them with their state, the gaps, and (for who may change it) which
 * frameworks are enabled. Tab, framework, filters and page live in the URL.
 */
export function ControlsPage() {
  const { t } = useTranslation('controls');
  const { can } = useSession();
  const url = useUrlState();
  const frameworks = useEnabledFrameworks();
  const mayConfigure = can('tenant:update');
  const mayReadAttestations = can('assessment:read');
  const requested = url.get('tab', 'controls');
  const tab = (requested === 'settings' && !mayConfigure) || (requested === 'attestations' && !mayReadAttestations) ? 'controls' : requested;
  const framework = (url.get('framework') || undefined) as Framework | undefined;

  return (
    <>
      <PageHeader title={t('title')} />
      <Tabs value={tab} onChange={(value) => url.set({ tab: value === 'controls' ? null : value, state: null, attestation: null, expiring: null })} keepMounted={false}>
        <Tabs.List aria-label={t('tabs.label')} mb="md">
          <Tabs.Tab value="controls">{t('tabs.controls')}</Tabs.Tab>
          <Tabs.Tab value="gaps">{t('tabs.gaps')}</Tabs.Tab>
          {mayReadAttestations && <Tabs.Tab value="attestations">{t('tabs.attestations')}</Tabs.Tab>}
          {mayConfigure && <Tabs.Tab value="settings">{t('tabs.settings')}</Tabs.Tab>}
        </Tabs.List>
        {tab !== 'settings' && (
          <Select
            label={t('filters.framework')}
            size="sm"
            w={260}
            mb="sm"
            placeholder={t('filters.allFrameworks')}
            data={(frameworks.data ?? []).map((value) => ({ value, label: value }))}
            value={framework ?? null}
            onChange={(value) => url.set({ framework: value })}
            clearable
          />
        )}
        <Tabs.Panel value="controls">
          <ControlsTable framework={framework} />
        </Tabs.Panel>
        <Tabs.Panel value="gaps">
          <GapsTable framework={framework} />
        </Tabs.Panel>
        {mayReadAttestations && (
          <Tabs.Panel value="attestations">
            <AttestationsTable framework={framework} />
          </Tabs.Panel>
        )}
        {mayConfigure && (
          <Tabs.Panel value="settings">
            <FrameworkSettings />
          </Tabs.Panel>
        )}
      </Tabs>
    </>
  );
}
