import { Tabs } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useSession } from '../../session/session';
import { PageHeader } from '../../ui/PageHeader';
import { useUrlState } from '../../ui/url-state';
import { ApplicationsList, AssetGroupsList, ServicesList } from './ListTabs';

/** Business services, applications and asset groups, each with its health roll-up; the tab in the URL. */
export function ServicesPage() {
  const { t } = useTranslation('services');
  const { can } = useSession();
  const url = useUrlState();
  const mayReadNodes = can('nodes:read');
  const requested = url.get('tab', 'services');
  const tab = requested === 'asset-groups' && !mayReadNodes ? 'services' : requested;
  return (
    <>
      <PageHeader title={t('title')} />
      <Tabs value={tab} onChange={(value) => url.set({ tab: value === 'services' ? null : value, search: null })} keepMounted={false}>
        <Tabs.List aria-label={t('tabs.label')} mb="md">
          <Tabs.Tab value="services">{t('tabs.services')}</Tabs.Tab>
          <Tabs.Tab value="applications">{t('tabs.applications')}</Tabs.Tab>
          {mayReadNodes && <Tabs.Tab value="asset-groups">{t('tabs.assetGroups')}</Tabs.Tab>}
        </Tabs.List>
        <Tabs.Panel value="services">
          <ServicesList />
        </Tabs.Panel>
        <Tabs.Panel value="applications">
          <ApplicationsList />
        </Tabs.Panel>
        {mayReadNodes && (
          <Tabs.Panel value="asset-groups">
            <AssetGroupsList />
          </Tabs.Panel>
        )}
      </Tabs>
    </>
  );
}
