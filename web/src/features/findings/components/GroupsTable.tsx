import { Button, Code, Group, Stack, Text } from '@mantine/core';
import { createColumnHelper, type ColumnDef } from '@tanstack/react-table';
import { useTranslation } from 'react-i18next';
import { DataTable } from '../../../ui/DataTable';
import { SeverityBadge } from '../../../ui/SeverityBadge';
import { formatDate, formatNumber } from '../../../i18n';
import type { FindingGroup } from '../queries';

const column = createColumnHelper<FindingGroup>();
const SHOWN = 5;

/** Root causes with their resources; each leads to its findings, and can have its risk accepted. */
export function GroupsTable({
  groups,
  onShowFindings,
  onAccept,
}: {
  groups: FindingGroup[];
  onShowFindings: (group: FindingGroup) => void;
  onAccept?: (group: FindingGroup) => void;
}) {
  const { t } = useTranslation('findings');
  const columns: ColumnDef<FindingGroup, any>[] = [
    column.accessor('severity', { header: t('columns.severity'), enableSorting: false, cell: (info) => <SeverityBadge severity={info.getValue().toLowerCase()} /> }),
    column.accessor('label', {
      header: t('columns.rootCause'),
      enableSorting: false,
      cell: (info) => (
        <Stack gap={0}>
          <Text size="sm" fw={600}>
            {info.getValue()}
          </Text>
          <Text size="xs" c="dimmed">
            {info.row.original.cause ?? t('groups.noCause', { account: info.row.original.account_id, region: info.row.original.region })}
          </Text>
        </Stack>
      ),
    }),
    column.accessor('findings', { header: t('columns.findings'), enableSorting: false, cell: (info) => formatNumber(info.getValue()) }),
    column.accessor('resource_ids', {
      header: t('columns.resources'),
      enableSorting: false,
      cell: (info) => {
        const ids = info.getValue();
        return (
          <Stack gap={2}>
            {ids.slice(0, SHOWN).map((id: string) => (
              <Code key={id} fz="xs">
                {id}
              </Code>
            ))}
            {info.row.original.findings > SHOWN && (
              <Text size="xs" c="dimmed">
                {t('groups.more', { count: info.row.original.findings - SHOWN })}
              </Text>
            )}
          </Stack>
        );
      },
    }),
    column.accessor('last_seen', { header: t('columns.lastSeen'), enableSorting: false, cell: (info) => formatDate(info.getValue()) }),
    column.display({
      id: 'actions',
      header: t('columns.actions'),
      cell: (info) => (
        <Group gap="xs" wrap="nowrap">
          <Button size="xs" variant="light" onClick={() => onShowFindings(info.row.original)} aria-label={t('groups.showFindingsOf', { label: info.row.original.label })}>
            {t('groups.showFindings')}
          </Button>
          {onAccept && (
            <Button size="xs" variant="default" onClick={() => onAccept(info.row.original)} aria-label={t('groups.acceptOf', { label: info.row.original.label })}>
              {t('groups.accept')}
            </Button>
          )}
        </Group>
      ),
    }),
  ];
  return <DataTable data={groups} columns={columns} getRowId={(group) => group.group_id} caption={t('captionGrouped')} />;
}
