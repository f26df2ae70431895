import { useState } from 'react';
import { Alert, Button, Group, PasswordInput, Select, Stack, TextInput, Title } from '@mantine/core';
import type { ColumnDef } from '@tanstack/react-table';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../../api/errors';
import { DataTable } from '../../../ui/DataTable';
import { Pager } from '../../../ui/Pager';
import { QueryView } from '../../../ui/QueryState';
import { notifySuccess } from '../../../ui/notify';
import { formatDate } from '../../../i18n';
import { useSession } from '../../../session/session';
import { AdminForm } from '../AdminForm';
import { DangerRowButton, notifyOutcome } from '../RowAction';
import { useAddUser, useChangeRole, useRemoveUser, useResetUserMfa, useRoles, useTenantUsers } from '../queries';
import { useUrlPaging } from '../../../ui/url-paging';

interface User {
  id: string;
  username: string;
  role: string;
  created_at: string;
}

/** Members and their roles; role changes answer with the service's guard rails (not your own, not above yours). */
export function UsersTab() {
  const { t } = useTranslation('admin');
  const { can } = useSession();
  const { page, perPage, setPaging } = useUrlPaging();
  const users = useTenantUsers({ page, per_page: perPage });
  const manage = can('roles:manage');

  return (
    <Stack>
      <Title order={2} size="h3">
        {t('users.title')}
      </Title>
      {manage && <AddUser />}
      <QueryView query={users} isEmpty={(data) => data.items.length === 0}>
        {(data) => (
          <>
            <UserTable users={data.items} manage={manage} />
            <Pager page={page} perPage={perPage} total={data.total} onChange={setPaging} />
          </>
        )}
      </QueryView>
    </Stack>
  );
}

function UserTable({ users, manage }: { users: User[]; manage: boolean }) {
  const { t } = useTranslation('admin');
  const { me } = useSession();
  const roles = useRoles();
  const change = useChangeRole();
  const remove = useRemoveUser();
  const resetMfa = useResetUserMfa();
  const [refusal, setRefusal] = useState<string | null>(null);
  const roleNames = roles.data?.map((role) => role.role) ?? [];

  const columns: ColumnDef<User>[] = [
    { id: 'username', header: t('users.username'), cell: ({ row }) => row.original.username },
    {
      id: 'role',
      header: t('users.role'),
      cell: ({ row }) =>
        manage ? (
          <Select
            aria-label={t('users.roleOf', { username: row.original.username })}
            size="xs"
            w={180}
            data={roleNames.length ? roleNames : [row.original.role]}
            value={row.original.role}
            allowDeselect={false}
            onChange={(role) => {
              if (!role || role === row.original.role) return;
              setRefusal(null);
              change.mutate(
                { userId: row.original.id, role },
                {
                  onSuccess: (result) => notifySuccess(t('users.roleChanged', { username: result.username, role: result.role })),
                  onError: (error) => setRefusal(t('users.refused', { message: errorMessage(error) })),
                },
              );
            }}
          />
        ) : (
          row.original.role
        ),
    },
    { id: 'created_at', header: t('users.added'), cell: ({ row }) => formatDate(row.original.created_at) },
  ];
  if (manage) {
    columns.push({
      id: 'actions',
      header: t('actions'),
      cell: ({ row }) =>
        row.original.id === me.user_id ? null : (
          <Group gap="xs" wrap="nowrap">
            <DangerRowButton
              label={t('users.resetMfa')}
              ariaLabel={t('users.resetMfaOf', { username: row.original.username })}
              confirm={t('users.confirmResetMfa', { username: row.original.username })}
              onClick={() => resetMfa.mutate(row.original.id, notifyOutcome(t('users.mfaReset', { username: row.original.username })))}
            />
            <DangerRowButton
              label={t('users.remove')}
              ariaLabel={t('users.removeUser', { username: row.original.username })}
              confirm={t('users.confirmRemove', { username: row.original.username })}
              onClick={() => remove.mutate(row.original.id, notifyOutcome(t('users.removed', { username: row.original.username })))}
            />
          </Group>
        ),
    });
  }
  return (
    <Stack gap="xs">
      {refusal && (
        <Alert color="red" role="alert" withCloseButton closeButtonLabel={t('common:close')} onClose={() => setRefusal(null)}>
          {refusal}
        </Alert>
      )}
      <DataTable data={users} columns={columns} getRowId={(user) => user.id} caption={t('users.caption')} />
    </Stack>
  );
}

function AddUser() {
  const { t } = useTranslation('admin');
  const roles = useRoles();
  const add = useAddUser();
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [role, setRole] = useState<string | null>('read-only');
  const [error, setError] = useState<string | null>(null);

  return (
    <AdminForm
      title={t('users.addTitle')}
      error={error}
      onSubmit={() => {
        setError(null);
        add.mutate(
          { username: username.trim(), role: role ?? 'read-only', ...(password ? { password } : {}) },
          {
            onSuccess: (result) => {
              notifySuccess(result.created ? t('users.created', { username: username.trim() }) : t('users.invited', { username: username.trim() }));
              setUsername('');
              setPassword('');
            },
            onError: (failure) => setError(errorMessage(failure)),
          },
        );
      }}
    >
      <TextInput label={t('users.username')} value={username} onChange={(e) => setUsername(e.currentTarget.value)} required autoComplete="off" />
      <PasswordInput
        label={t('users.password')}
        description={t('users.passwordHelp')}
        value={password}
        onChange={(e) => setPassword(e.currentTarget.value)}
        autoComplete="new-password"
        w={260}
      />
      <Select label={t('users.role')} data={roles.data?.map((r) => r.role) ?? ['read-only']} value={role} onChange={setRole} allowDeselect={false} w={180} />
      <Button type="submit" loading={add.isPending} disabled={!username.trim()}>
        {t('users.add')}
      </Button>
    </AdminForm>
  );
}
