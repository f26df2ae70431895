import { useState } from 'react';
import { Badge, Button, Group, Select, Stack, Text, Title } from '@mantine/core';
import type { ColumnDef } from '@tanstack/react-table';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../../api/errors';
import { DataTable } from '../../../ui/DataTable';
import { QueryView } from '../../../ui/QueryState';
import { useUrlState } from '../../../ui/url-state';
import { notifyError, notifySuccess } from '../../../ui/notify';
import { formatDate } from '../../../i18n';
import { useSession } from '../../../session/session';
import { PagedTable } from '../PagedTable';
import { useUrlPaging } from '../../../ui/url-paging';
import { useDeliveries, useIntegrations, useRedeliver, useTestIntegration } from '../queries';
import { IntegrationFormModal } from '../integrations/IntegrationForm';
import type { Integration } from '../integrations/form-values';
const STATUS_COLORS: Record<string, string> = { active: 'teal', disabled: 'gray', pending: 'blue', succeeded: 'teal', failed: 'red' };

interface Delivery {
  id: string;
  event_type: string;
  status: string;
  attempt_count: number;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  completed_at: string | null;
}

/** Integrations (webhooks and the others) and each one's delivery history, with redeliver. */
export function IntegrationsTab() {
  const { t } = useTranslation('admin');
  const { can } = useSession();
  const url = useUrlState();
  const { page, perPage } = useUrlPaging();
  const selected = url.get('integration') || null;
  const integrations = useIntegrations({ page, per_page: perPage });
  const test = useTestIntegration();
  const write = can('tenant:update');
  // The dialog: null closed, 'new' to create, or the integration being changed.
  const [form, setForm] = useState<Integration | 'new' | null>(null);

  const columns: ColumnDef<Integration>[] = [
    { id: 'name', header: t('integrations.name'), cell: ({ row }) => row.original.name },
    { id: 'type', header: t('integrations.type'), cell: ({ row }) => t(`integrations.kinds.${row.original.type}`, { defaultValue: row.original.type }) },
    {
      id: 'status',
      header: t('integrations.status'),
      cell: ({ row }) => (
        <Badge color={STATUS_COLORS[row.original.status] ?? 'gray'} variant="light" autoContrast title={row.original.disabled_reason ?? undefined}>
          {t(`integrations.statuses.${row.original.status}`, { defaultValue: row.original.status })}
        </Badge>
      ),
    },
    { id: 'events', header: t('integrations.events'), cell: ({ row }) => (Array.isArray(row.original.config.events) ? (row.original.config.events as string[]).join(', ') : '—') },
    {
      id: 'actions',
      header: t('actions'),
      cell: ({ row }) => (
        <Group gap="xs" wrap="nowrap">
          <Button size="xs" variant="light" aria-label={t('integrations.showDeliveriesOf', { name: row.original.name })} onClick={() => url.set({ integration: row.original.id })}>
            {t('integrations.showDeliveries')}
          </Button>
          {write && (
            <Button size="xs" variant="light" aria-label={t('integrations.editOf', { name: row.original.name })} onClick={() => setForm(row.original)}>
              {t('integrations.edit')}
            </Button>
          )}
          {write && (
            <Button
              size="xs"
              variant="subtle"
              aria-label={t('integrations.testOf', { name: row.original.name })}
              onClick={() =>
                test.mutate(row.original.id, {
                  onSuccess: () => {
                    notifySuccess(t('integrations.testQueued'));
                    url.set({ integration: row.original.id });
                  },
                  onError: (error) => notifyError(errorMessage(error)),
                })
              }
            >
              {t('integrations.test')}
            </Button>
          )}
        </Group>
      ),
    },
  ];

  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2} size="h3">
          {t('integrations.title')}
        </Title>
        {write && <Button onClick={() => setForm('new')}>{t('integrations.add')}</Button>}
      </Group>
      {form && <IntegrationFormModal integration={form === 'new' ? null : form} onClose={() => setForm(null)} />}
      <PagedTable
        query={integrations}
        columns={columns}
        getRowId={(item) => item.id}
        caption={t('integrations.caption')}
        empty={<Text c="dimmed">{t('integrations.empty')}</Text>}
        after={(data) => selected && <Deliveries integration={(data.items as Integration[]).find((item) => item.id === selected) ?? null} integrationId={selected} />}
      />
    </Stack>
  );
}

function Deliveries({ integrationId, integration }: { integrationId: string; integration: Integration | null }) {
  const { t } = useTranslation('admin');
  const { can } = useSession();
  const url = useUrlState();
  const status = url.get('delivery_status');
  const deliveries = useDeliveries(integrationId, { per_page: 100, ...(status ? { status: status as 'pending' | 'succeeded' | 'failed' } : {}) });
  const redeliver = useRedeliver();

  const columns: ColumnDef<Delivery>[] = [
    { id: 'created_at', header: t('integrations.created'), cell: ({ row }) => formatDate(row.original.created_at) },
    { id: 'event_type', header: t('integrations.event'), cell: ({ row }) => row.original.event_type },
    {
      id: 'status',
      header: t('integrations.status'),
      cell: ({ row }) => (
        <Badge color={STATUS_COLORS[row.original.status] ?? 'gray'} variant="light" autoContrast>
          {t(`integrations.statuses.${row.original.status}`, { defaultValue: row.original.status })}
        </Badge>
      ),
    },
    { id: 'attempts', header: t('integrations.attempts'), cell: ({ row }) => row.original.attempt_count },
    {
      id: 'last',
      header: t('integrations.lastResult'),
      cell: ({ row }) => [row.original.last_status_code, row.original.last_error].filter((part) => part !== null && part !== '').join(' — ') || '—',
    },
  ];
  if (can('tenant:update')) {
    columns.push({
      id: 'actions',
      header: t('actions'),
      cell: ({ row }) =>
        row.original.status === 'pending' ? null : (
          <Button
            size="xs"
            variant="light"
            aria-label={t('integrations.redeliverOf', { event: row.original.event_type, time: formatDate(row.original.created_at) })}
            onClick={() =>
              redeliver.mutate(
                { integrationId, deliveryId: row.original.id },
                { onSuccess: () => notifySuccess(t('integrations.redelivered')), onError: (error) => notifyError(errorMessage(error)) },
              )
            }
          >
            {t('integrations.redeliver')}
          </Button>
        ),
    });
  }

  return (
    <Stack gap="xs" mt="md">
      <Group justify="space-between">
        <Title order={3} size="h4">
          {t('integrations.deliveriesOf', { name: integration?.name ?? integrationId })}
        </Title>
        <Group>
          <Select
            aria-label={t('integrations.deliveryStatus')}
            placeholder={t('integrations.deliveryStatus')}
            data={['pending', 'succeeded', 'failed'].map((value) => ({ value, label: t(`integrations.statuses.${value}`) }))}
            value={status || null}
            onChange={(value) => url.set({ delivery_status: value })}
            clearable
            w={180}
          />
          <Button variant="subtle" onClick={() => url.set({ integration: null, delivery_status: null })}>
            {t('common:close')}
          </Button>
        </Group>
      </Group>
      <QueryView query={deliveries} isEmpty={(data) => data.items.length === 0} empty={<Text c="dimmed">{t('integrations.noDeliveries')}</Text>}>
        {(data) => <DataTable data={data.items as Delivery[]} columns={columns} getRowId={(item) => item.id} caption={t('integrations.deliveriesCaption')} />}
      </QueryView>
    </Stack>
  );
}
