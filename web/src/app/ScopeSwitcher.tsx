import { Group, Select } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { notifyError } from '../ui/notify';
import { api } from '../api/client';
import { unwrap } from '../api/errors';
import { useSwitchScope } from '../session/queries';
import { useSession } from '../session/session';

/** Tenant and workspace of the session: switching replaces the session cookies (POST /auth/session/...). */
export function ScopeSwitcher() {
  const { t } = useTranslation();
  const { me } = useSession();
  const switchScope = useSwitchScope();
  const tenants = useQuery({
    queryKey: ['account', 'tenants'],
    queryFn: async () => unwrap(await api.GET('/api/v1/account/tenants', { params: { query: { per_page: 100 } } })).items,
    enabled: me.auth_type === 'jwt',
  });
  const workspaces = useQuery({
    queryKey: ['workspaces'],
    queryFn: async () => unwrap(await api.GET('/api/v1/workspaces', { params: { query: { per_page: 100 } } })).items,
  });
  const change = (target: { tenantId?: string; workspaceId?: string }) =>
    switchScope.mutate(target, { onError: (error) => notifyError(t('shell.switchFailed', { message: error.message })) });

  return (
    <Group gap="xs" wrap="nowrap">
      <Select
        size="xs"
        w={180}
        aria-label={t('shell.tenant')}
        data={(tenants.data ?? [{ id: me.tenant_id, name: me.tenant_id }]).map((tenant) => ({ value: tenant.id, label: tenant.name }))}
        value={me.tenant_id}
        onChange={(value) => value && value !== me.tenant_id && change({ tenantId: value })}
        allowDeselect={false}
        disabled={switchScope.isPending}
        searchable
      />
      <Select
        size="xs"
        w={160}
        aria-label={t('shell.workspace')}
        data={(workspaces.data ?? []).map((workspace) => ({ value: workspace.id, label: workspace.name }))}
        value={me.workspace_id}
        onChange={(value) => value && value !== me.workspace_id && change({ workspaceId: value })}
        allowDeselect={false}
        disabled={switchScope.isPending}
      />
    </Group>
  );
}
