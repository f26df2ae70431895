import { useMemo } from 'react';
import { Group, Select, Text } from '@mantine/core';
import type { ColumnDef } from '@tanstack/react-table';
import { useTranslation } from 'react-i18next';
import { formatNumber } from '../../i18n';
import { DataTable } from '../../ui/DataTable';
import { Pager } from '../../ui/Pager';
import { EmptyState, QueryView } from '../../ui/QueryState';
import { useUrlState } from '../../ui/url-state';
import { AttestationFilter } from './AttestationFilter';
import { controlIdentityColumns } from './columns';
import { AttestationCell, ControlStateBadge, controlState, FindingsLink } from './badges';
import { AUTOMATED_STATES, useControls, type AttestationStatus, type AutomatedState, type ControlRow, type Framework } from './queries';
import { useUrlPaging } from '../../ui/url-paging';

/** Every applicable control with its state, findings and attestation; filters in the URL. */
export function ControlsTable({ framework }: { framework?: Framework }) {
  const { t } = useTranslation('controls');
  const url = useUrlState();
  const automated = (url.get('state') || undefined) as AutomatedState | undefined;
  const attestation = (url.get('attestation') || undefined) as AttestationStatus | undefined;
  const { page, perPage, setPaging } = useUrlPaging();
  const controls = useControls({ framework, automated_state: automated, status: attestation, page, per_page: perPage });

  const columns = useMemo<ColumnDef<ControlRow>[]>(
    () => [
      ...controlIdentityColumns<ControlRow>({ control: t('columns.control'), title: t('columns.title') }),
      { id: 'family', header: t('columns.family'), cell: ({ row }) => <Text size="sm">{row.original.family}</Text> },
      {
        id: 'state',
        header: t('columns.state'),
        cell: ({ row }) => (
          <div>
            <ControlStateBadge state={controlState(row.original)} />
            {row.original.unknown_evaluations > 0 && (
              <Text size="xs" c="dimmed">
                {t('unknownEvaluations', { count: row.original.unknown_evaluations })}
              </Text>
            )}
          </div>
        ),
      },
      {
        id: 'findings',
        header: t('columns.findings'),
        cell: ({ row }) =>
          row.original.automated_state === 'not_automated' ? (
            <Text size="sm">—</Text>
          ) : (
            <FindingsLink framework={row.original.framework} controlId={row.original.control_id}>
              {t('findingsLink')}
            </FindingsLink>
          ),
      },
      {
        id: 'attestation',
        header: t('columns.attestation'),
        cell: ({ row }) => <AttestationCell status={row.original.attestation_status} expiresAt={row.original.attestation_expires_at} expiringSoon={row.original.expiring_soon} />,
      },
    ],
    [t],
  );

  return (
    <>
      <Group gap="sm" mb="sm" wrap="wrap">
        <Select
          label={t('filters.state')}
          size="sm"
          w={200}
          placeholder={t('filters.anyState')}
          data={AUTOMATED_STATES.map((value) => ({ value, label: t(`automated.${value}`) }))}
          value={automated ?? null}
          onChange={(value) => url.set({ state: value })}
          clearable
        />
        <AttestationFilter value={attestation} />
      </Group>
      <QueryView query={controls} isEmpty={(data) => data.controls.items.length === 0} empty={<EmptyState title={t('empty')} />}>
        {(data) => {
          const figures = framework ? data.by_framework[framework] : undefined;
          return (
            <>
              {figures && (
                <Text size="sm" mb="xs" data-testid="framework-summary">
                  {t('summary', {
                    failing: formatNumber(figures.failing_controls),
                    unknown: formatNumber(figures.unknown_controls),
                    notAttested: formatNumber(figures.not_attested_controls),
                    applicable: formatNumber(figures.applicable_controls),
                  })}
                </Text>
              )}
              <DataTable data={data.controls.items} columns={columns} getRowId={(row) => `${row.framework}:${row.control_id}`} caption={t('caption')} />
              <Pager page={page} perPage={perPage} total={data.controls.total} onChange={setPaging} />
            </>
          );
        }}
      </QueryView>
    </>
  );
}
