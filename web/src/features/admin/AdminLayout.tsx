import { Stack, Tabs } from '@mantine/core';
import { Navigate, Outlet, useLocation, useNavigate } from 'react-router';
import { useTranslation } from 'react-i18next';
import { PageHeader } from '../../ui/PageHeader';
import { EmptyState } from '../../ui/QueryState';
import { useSession } from '../../session/session';
import { SECTIONS } from './sections';

/** Administration: one tab per section the role may read, the section itself in the URL. */
export function AdminLayout() {
  const { t } = useTranslation('admin');
  const { can } = useSession();
  const location = useLocation();
  const navigate = useNavigate();
  const visible = SECTIONS.filter((section) => can(section.permission));
  const current = location.pathname.replace(/^\/admin\/?/, '').split('/')[0] ?? '';

  if (!visible.length) {
    return (
      <Stack>
        <PageHeader title={t('title')} />
        <EmptyState title={t('nothing')} />
      </Stack>
    );
  }
  if (!visible.some((section) => section.path === current)) return <Navigate to={`/admin/${visible[0]!.path}`} replace />;

  return (
    <Stack>
      <PageHeader title={t('title')} />
      <Tabs value={current} onChange={(value) => value && void navigate(`/admin/${value}`)} keepMounted={false}>
        <Tabs.List aria-label={t('sections')}>
          {visible.map((section) => (
            <Tabs.Tab key={section.path} value={section.path}>
              {t(`tabs.${section.key}`)}
            </Tabs.Tab>
          ))}
        </Tabs.List>
        {visible.map((section) => (
          <Tabs.Panel key={section.path} value={section.path} pt="md">
            {section.path === current && <Outlet />}
          </Tabs.Panel>
        ))}
      </Tabs>
    </Stack>
  );
}
