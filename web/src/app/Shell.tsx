import { Suspense } from 'react';
import { AppShell, Burger, Group, Menu, NavLink, Text, UnstyledButton } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { Link, Outlet, useLocation } from 'react-router';
import { useTranslation } from 'react-i18next';
import { useSignOut } from '../session/queries';
import { useSession } from '../session/session';
import { PageLoader } from '../ui/QueryState';
import { LanguageMenuItems } from './LanguageMenuItems';
import { ScopeSwitcher } from './ScopeSwitcher';

/** Navigation entries; each shows only when the role can read what it leads to. */
const NAV = [
  { to: '/', key: 'overview', permission: 'findings:read' },
  { to: '/findings', key: 'findings', permission: 'findings:read' },
  { to: '/controls', key: 'controls', permission: 'findings:read' },
  { to: '/risk-acceptances', key: 'risk', permission: 'findings:read' },
  { to: '/poam', key: 'poam', permission: 'poam:read' },
  { to: '/topology', key: 'topology', permission: 'nodes:read' },
  { to: '/rules', key: 'rules', permission: 'rules:read' },
  { to: '/questionnaires', key: 'questionnaires', permission: 'questionnaire:read' },
  { to: '/vulnerabilities', key: 'vulnerabilities', permission: 'findings:read' },
  { to: '/services', key: 'services', permission: 'findings:read' },
  { to: '/assessments/mine', key: 'myAssessments', permission: 'assessment:read' },
  { to: '/assessments/review', key: 'reviewQueue', permission: 'assessment:review' },
  { to: '/admin', key: 'admin', permission: 'tenant:read' },
] as const;

export function Shell() {
  const { t } = useTranslation();
  const [opened, { toggle, close }] = useDisclosure();
  const { me, can } = useSession();
  const location = useLocation();
  const signOut = useSignOut();

  const active = (to: string) => (to === '/' ? location.pathname === '/' : location.pathname.startsWith(to));

  return (
    <AppShell header={{ height: 56 }} navbar={{ width: 220, breakpoint: 'sm', collapsed: { mobile: !opened } }} padding="md">
      <a className="skip-link" href="#main">
        {t('shell.skipToContent')}
      </a>
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group gap="sm" wrap="nowrap">
            <Burger opened={opened} onClick={toggle} hiddenFrom="sm" size="sm" aria-label={t('shell.toggleNavigation')} />
            <Text fw={700} component={Link} to="/" c="inherit" td="none">
              {t('appName')}
            </Text>
          </Group>
          <Group gap="md" wrap="nowrap">
            <ScopeSwitcher />
            <Menu position="bottom-end" withinPortal>
              <Menu.Target>
                <UnstyledButton aria-label={t('shell.signedInAs', { username: me.username ?? me.api_key_id })}>
                  <Text size="sm" fw={600}>
                    {me.username ?? me.api_key_id}
                  </Text>
                  <Text size="xs" c="dimmed">
                    {t('shell.role', { role: me.role })}
                  </Text>
                </UnstyledButton>
              </Menu.Target>
              <Menu.Dropdown>
                <Menu.Item component={Link} to="/account/security">
                  {t('shell.security')}
                </Menu.Item>
                <Menu.Divider />
                <LanguageMenuItems />
                <Menu.Divider />
                {/* red.9: the default red (red.6) on white is 3.3:1, under the 4.5:1 text needs. */}
                <Menu.Item color="red.9" onClick={() => signOut.mutate()}>
                  {t('shell.signOut')}
                </Menu.Item>
              </Menu.Dropdown>
            </Menu>
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" component="nav" aria-label={t('nav.label')}>
        {NAV.filter((item) => can(item.permission)).map((item) => (
          <NavLink
            key={item.to}
            component={Link}
            to={item.to}
            label={t(`nav.${item.key}`)}
            active={active(item.to)}
            aria-current={active(item.to) ? 'page' : undefined}
            onClick={close}
          />
        ))}
      </AppShell.Navbar>
      <AppShell.Main id="main" tabIndex={-1}>
        <Suspense fallback={<PageLoader />}>
          <Outlet />
        </Suspense>
      </AppShell.Main>
    </AppShell>
  );
}
