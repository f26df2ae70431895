import { useState } from 'react';
import { Alert, Badge, Button, Group, Modal, MultiSelect, Stack, Text, TextInput, Title } from '@mantine/core';
import type { ColumnDef } from '@tanstack/react-table';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../../api/errors';
import { CopyText } from '../../../ui/CopyText';
import { formatDate } from '../../../i18n';
import { AdminForm } from '../AdminForm';
import { PagedTable } from '../PagedTable';
import { useUrlPaging } from '../../../ui/url-paging';
import { DangerRowButton, notifyOutcome } from '../RowAction';
import { useApiKeys, useCreateApiKey, useRevokeApiKey } from '../queries';

/** The permission names an API key takes (README, "API keys"); admin:* is what a tenant-admin has. */
const KEY_PERMISSIONS = ['nodes:read', 'nodes:write', 'findings:read', 'findings:write', 'jobs:read', 'jobs:write', 'reports:read', 'agents:write', 'admin:*'];

interface ApiKey {
  id: string;
  name: string;
  prefix: string;
  permissions: string[];
  created_at: string;
  last_used_at: string | null;
  expires_at: string | null;
  revoked_at: string | null;
}

/** API keys of the tenant: the value is shown once, right after creation, with a copy button. */
export function ApiKeysTab() {
  const { t } = useTranslation('admin');
  const { page, perPage } = useUrlPaging();
  const keys = useApiKeys({ page, per_page: perPage });
  const revoke = useRevokeApiKey();

  const columns: ColumnDef<ApiKey>[] = [
    { id: 'name', header: t('apiKeys.name'), cell: ({ row }) => row.original.name },
    {
      id: 'prefix',
      header: t('apiKeys.prefix'),
      cell: ({ row }) => (
        <Text ff="monospace" size="sm">
          {row.original.prefix}…
        </Text>
      ),
    },
    { id: 'permissions', header: t('apiKeys.permissions'), cell: ({ row }) => row.original.permissions.join(', ') },
    { id: 'created_at', header: t('apiKeys.created'), cell: ({ row }) => formatDate(row.original.created_at) },
    { id: 'last_used_at', header: t('apiKeys.lastUsed'), cell: ({ row }) => formatDate(row.original.last_used_at) },
    { id: 'expires_at', header: t('apiKeys.expires'), cell: ({ row }) => formatDate(row.original.expires_at) },
    {
      id: 'actions',
      header: t('actions'),
      cell: ({ row }) =>
        row.original.revoked_at ? (
          <Badge color="gray">{t('apiKeys.revoked')}</Badge>
        ) : (
          <DangerRowButton
            label={t('apiKeys.revoke')}
            ariaLabel={t('apiKeys.revokeKey', { name: row.original.name })}
            confirm={t('apiKeys.confirmRevoke', { name: row.original.name })}
            onClick={() => revoke.mutate(row.original.id, notifyOutcome(t('apiKeys.revokedDone', { name: row.original.name })))}
          />
        ),
    },
  ];

  return (
    <Stack>
      <Title order={2} size="h3">
        {t('apiKeys.title')}
      </Title>
      <CreateKey />
      <PagedTable query={keys} columns={columns} getRowId={(key) => key.id} caption={t('apiKeys.caption')} empty={<Text c="dimmed">{t('apiKeys.empty')}</Text>} />
    </Stack>
  );
}

function CreateKey() {
  const { t } = useTranslation('admin');
  const create = useCreateApiKey();
  const [name, setName] = useState('');
  const [permissions, setPermissions] = useState<string[]>(['findings:read']);
  const [expires, setExpires] = useState('');
  const [error, setError] = useState<string | null>(null);
  // The key value lives only here, until the dialog closes: the service never shows it again.
  const [created, setCreated] = useState<{ name: string; key: string } | null>(null);

  return (
    <>
      <AdminForm
        title={t('apiKeys.createTitle')}
        error={error}
        onSubmit={() => {
          setError(null);
          create.mutate(
            { name: name.trim(), permissions, ...(expires ? { expires_at: new Date(`${expires}T23:59:59Z`).toISOString() } : {}) },
            {
              onSuccess: (key) => {
                setCreated({ name: key.name, key: key.key });
                setName('');
              },
              onError: (failure) => setError(errorMessage(failure)),
            },
          );
        }}
      >
        <TextInput label={t('apiKeys.name')} value={name} onChange={(e) => setName(e.currentTarget.value)} required />
        <MultiSelect label={t('apiKeys.permissions')} data={KEY_PERMISSIONS} value={permissions} onChange={setPermissions} w={320} />
        <TextInput label={t('apiKeys.expiresOn')} type="date" value={expires} onChange={(e) => setExpires(e.currentTarget.value)} />
        <Button type="submit" loading={create.isPending} disabled={!name.trim() || permissions.length === 0}>
          {t('apiKeys.create')}
        </Button>
      </AdminForm>
      <Modal
        opened={created !== null}
        onClose={() => setCreated(null)}
        closeButtonProps={{ 'aria-label': t('common:close') }}
        title={t('apiKeys.createdTitle', { name: created?.name ?? '' })}
        size="lg"
      >
        {created && (
          <Stack>
            <Alert color="yellow">{t('apiKeys.shownOnce')}</Alert>
            <CopyText value={created.key} label={t('apiKeys.value')} />
            <Group justify="flex-end">
              <Button onClick={() => setCreated(null)}>{t('apiKeys.done')}</Button>
            </Group>
          </Stack>
        )}
      </Modal>
    </>
  );
}
