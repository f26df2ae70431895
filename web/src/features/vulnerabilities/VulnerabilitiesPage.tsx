import { Tabs } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useSession } from '../../session/session';
import { PageHeader } from '../../ui/PageHeader';
import { useUrlState } from '../../ui/url-state';
import { CveLookup } from './CveLookup';
import { HostsTable } from './HostsTable';
import { ImportsTable } from './ImportsTable';
import { KevCatalog } from './KevCatalog';

const TABS = ['lookup', 'kev', 'hosts', 'imports'] as const;

/**
 * Vulnerabilities: a CVE looked up, the KEV catalog, the hosts with their packages and, for platform
 * operators (who alone may read them), the imports of the vulnerability store. The tab is in the URL.
 */
export function VulnerabilitiesPage() {
  const { t } = useTranslation('vulnerabilities');
  const { can } = useSession();
  const url = useUrlState();
  const visible = TABS.filter((tab) => (tab === 'imports' ? can('platform:admin') : tab === 'hosts' ? can('nodes:read') : true));
  const requested = url.get('tab', 'lookup') as (typeof TABS)[number];
  const tab = visible.includes(requested) ? requested : 'lookup';

  return (
    <>
      <PageHeader title={t('title')} />
      <Tabs
        value={tab}
        onChange={(value) =>
          url.set({ tab: value === 'lookup' ? null : value, search: null, cve: null, vendor: null, ransomware: null, from: null, sort: null, source: null, status: null })
        }
        keepMounted={false}
      >
        <Tabs.List aria-label={t('tabs.label')} mb="md">
          {visible.map((value) => (
            <Tabs.Tab key={value} value={value}>
              {t(`tabs.${value}`)}
            </Tabs.Tab>
          ))}
        </Tabs.List>
        <Tabs.Panel value="lookup">
          <CveLookup />
        </Tabs.Panel>
        <Tabs.Panel value="kev">
          <KevCatalog />
        </Tabs.Panel>
        {visible.includes('hosts') && (
          <Tabs.Panel value="hosts">
            <HostsTable />
          </Tabs.Panel>
        )}
        {visible.includes('imports') && (
          <Tabs.Panel value="imports">
            <ImportsTable />
          </Tabs.Panel>
        )}
      </Tabs>
    </>
  );
}
