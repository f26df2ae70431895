import { useState } from 'react';
import { Badge, Button, Select, Stack, Text, TextInput, Title } from '@mantine/core';
import type { ColumnDef } from '@tanstack/react-table';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../../api/errors';
import { notifySuccess } from '../../../ui/notify';
import { formatDate } from '../../../i18n';
import { AdminForm } from '../AdminForm';
import { PagedTable } from '../PagedTable';
import { useUrlPaging } from '../../../ui/url-paging';
import { DangerRowButton, notifyOutcome } from '../RowAction';
import { useInvitations, useInvite, useRevokeInvitation, useRoles } from '../queries';

const STATUS_COLORS: Record<string, string> = { pending: 'blue', accepted: 'teal', declined: 'gray', revoked: 'gray', expired: 'orange' };

interface Invitation {
  id: string;
  username: string;
  role: string;
  status: string;
  invited_by: string;
  created_at: string;
  expires_at: string;
  responded_at: string | null;
}

/**
 * The tenant's invitations, newest first, in the state the service gives (an open one past its
 * expiry reads expired). The section is shown only with roles:manage, which inviting and withdrawing
 * need too.
 */
export function InvitationsTab() {
  const { t } = useTranslation('admin');
  const { page, perPage } = useUrlPaging();
  const invitations = useInvitations({ page, per_page: perPage });
  const revoke = useRevokeInvitation();

  const columns: ColumnDef<Invitation>[] = [
    { id: 'username', header: t('invitations.username'), cell: ({ row }) => row.original.username },
    { id: 'role', header: t('invitations.role'), cell: ({ row }) => row.original.role },
    {
      id: 'status',
      header: t('invitations.status'),
      cell: ({ row }) => (
        <Badge color={STATUS_COLORS[row.original.status] ?? 'gray'} variant="light" autoContrast>
          {t(`invitations.statuses.${row.original.status}`, { defaultValue: row.original.status })}
        </Badge>
      ),
    },
    { id: 'invited_by', header: t('invitations.invitedBy'), cell: ({ row }) => row.original.invited_by },
    { id: 'created_at', header: t('invitations.created'), cell: ({ row }) => formatDate(row.original.created_at) },
    {
      id: 'expires_at',
      header: t('invitations.expiresOrAnswered'),
      cell: ({ row }) => formatDate(row.original.responded_at ?? row.original.expires_at),
    },
    {
      id: 'actions',
      header: t('actions'),
      cell: ({ row }) =>
        row.original.status === 'pending' ? (
          <DangerRowButton
            label={t('invitations.revoke')}
            ariaLabel={t('invitations.revokeOf', { username: row.original.username })}
            confirm={t('invitations.confirmRevoke', { username: row.original.username })}
            onClick={() => revoke.mutate(row.original.id, notifyOutcome(t('invitations.revoked', { username: row.original.username })))}
          />
        ) : null,
    },
  ];

  return (
    <Stack>
      <Title order={2} size="h3">
        {t('invitations.title')}
      </Title>
      <Invite />
      <PagedTable query={invitations} columns={columns} getRowId={(item) => item.id} caption={t('invitations.caption')} empty={<Text c="dimmed">{t('invitations.empty')}</Text>} />
    </Stack>
  );
}

function Invite() {
  const { t } = useTranslation('admin');
  const roles = useRoles();
  const invite = useInvite();
  const [username, setUsername] = useState('');
  const [role, setRole] = useState<string | null>('read-only');
  const [error, setError] = useState<string | null>(null);
  return (
    <AdminForm
      title={t('invitations.inviteTitle')}
      error={error}
      onSubmit={() => {
        setError(null);
        const name = username.trim();
        invite.mutate(
          { username: name, role: role ?? 'read-only' },
          {
            // A system-admin links an existing user at once (201) rather than inviting.
            onSuccess: (result) => {
              notifySuccess(result.linked ? t('invitations.linked', { username: name }) : t('invitations.invited', { username: name }));
              setUsername('');
            },
            onError: (failure) => setError(errorMessage(failure)),
          },
        );
      }}
    >
      <TextInput label={t('invitations.username')} value={username} onChange={(e) => setUsername(e.currentTarget.value)} required autoComplete="off" />
      <Select label={t('invitations.role')} data={roles.data?.map((r) => r.role) ?? ['read-only']} value={role} onChange={setRole} allowDeselect={false} w={180} />
      <Button type="submit" loading={invite.isPending} disabled={!username.trim()}>
        {t('invitations.invite')}
      </Button>
    </AdminForm>
  );
}
