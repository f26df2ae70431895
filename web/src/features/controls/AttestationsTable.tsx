import { useMemo } from 'react';
import { Badge, Group, Switch, Text } from '@mantine/core';
import type { ColumnDef } from '@tanstack/react-table';
import { useTranslation } from 'react-i18next';
import { formatDay, formatNumber } from '../../i18n';
import { DataTable } from '../../ui/DataTable';
import { Pager } from '../../ui/Pager';
import { EmptyState, QueryView } from '../../ui/QueryState';
import { useUrlState } from '../../ui/url-state';
import { AttestationFilter } from './AttestationFilter';
import { controlIdentityColumns } from './columns';
import { useAttestations, type AttestationRow, type AttestationStatus, type Framework } from './queries';
import { useUrlPaging } from '../../ui/url-paging';

/** The reminder stages the service sends before an attestation ends (days before expiry). */
const REMINDER_DAYS = [60, 30, 7] as const;
const WARNING_COLORS = { notice: 'blue', warning: 'orange', urgent: 'red' } as const;

/**
 * The controls questionnaires cover: attestation status, when it was attested and until when, which
 * of the 60/30/7-day reminders went out; "expiring soon" (within 7 days) as a filter. Filters in the URL.
 */
export function AttestationsTable({ framework }: { framework?: Framework }) {
  const { t } = useTranslation('controls');
  const url = useUrlState();
  const status = (url.get('attestation') || undefined) as AttestationStatus | undefined;
  const expiringSoon = url.get('expiring') === '1';
  const { page, perPage, setPaging } = useUrlPaging();
  const attestations = useAttestations({ framework, status, expiring_soon: expiringSoon || undefined, page, per_page: perPage });

  const columns = useMemo<ColumnDef<AttestationRow>[]>(
    () => [
      ...controlIdentityColumns<AttestationRow>({ control: t('columns.control'), title: t('columns.title') }),
      { id: 'status', header: t('columns.attestation'), cell: ({ row }) => <Text size="sm">{t(`attestation.${row.original.status}`)}</Text> },
      { id: 'attested', header: t('attestations.attestedAt'), cell: ({ row }) => <Text size="sm">{formatDay(row.original.attested_at)}</Text> },
      { id: 'expiry', header: t('attestations.expiresAt'), cell: ({ row }) => <ExpiryCell row={row.original} /> },
      { id: 'reminders', header: t('attestations.reminders'), cell: ({ row }) => <RemindersCell sent={row.original.reminder_sent_days} /> },
      { id: 'questionnaire', header: t('attestations.questionnaire'), cell: ({ row }) => <Text size="sm">{row.original.questionnaire_title ?? '—'}</Text> },
    ],
    [t],
  );

  return (
    <>
      <Group gap="md" mb="sm" wrap="wrap" align="flex-end">
        <AttestationFilter value={status} />
        <Switch label={t('attestations.expiringOnly')} checked={expiringSoon} onChange={(event) => url.set({ expiring: event.currentTarget.checked ? '1' : null })} mb={6} />
      </Group>
      <QueryView query={attestations} isEmpty={(data) => data.items.length === 0} empty={<EmptyState title={t('attestations.empty')} />}>
        {(data) => (
          <>
            <Text size="sm" mb="xs" data-testid="attestation-summary">
              {t('attestations.summary', { attested: formatNumber(data.counts.attested), expiring: formatNumber(data.counts.expiring_soon) })}
            </Text>
            <DataTable data={data.items} columns={columns} getRowId={(row) => `${row.framework}:${row.control_id}`} caption={t('attestations.caption')} />
            <Pager page={page} perPage={perPage} total={data.total} onChange={setPaging} />
          </>
        )}
      </QueryView>
    </>
  );
}

function ExpiryCell({ row }: { row: AttestationRow }) {
  const { t } = useTranslation('controls');
  if (!row.expires_at) return <Text size="sm">—</Text>;
  return (
    <Group gap={4} wrap="wrap">
      <Text size="sm">{formatDay(row.expires_at)}</Text>
      {row.days_until_expiry !== null && (
        <Text size="xs" c="dimmed">
          {t('attestations.daysLeft', { count: row.days_until_expiry })}
        </Text>
      )}
      {row.expiry_warning && (
        <Badge color={WARNING_COLORS[row.expiry_warning]} variant="dot" size="sm">
          {t(`attestations.warning.${row.expiry_warning}`)}
        </Badge>
      )}
    </Group>
  );
}

/**
 * The reminder job records the most urgent stage it sent; stages before it have passed (sent, or
 * passed over by a late run, which sends only the most urgent due one).
 */
function RemindersCell({ sent }: { sent: number | null }) {
  const { t } = useTranslation('controls');
  if (sent === null) return <Text size="sm">{t('attestations.noReminder')}</Text>;
  return (
    <div>
      <Text size="sm">{t('attestations.lastReminder', { days: sent })}</Text>
      <Text size="xs" c="dimmed">
        {t('attestations.stages', { stages: REMINDER_DAYS.filter((days) => days >= sent).join(' · ') })}
      </Text>
    </div>
  );
}
