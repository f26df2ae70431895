import { Group, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { formatNumber } from '../../i18n';
import { SeverityBadge } from '../../ui/SeverityBadge';
import type { FindingSummary } from './queries';

/** A resource's open findings in a table cell: the worst severity and the count, or "none". */
export function NodeFindings({ findings }: { findings: FindingSummary | undefined }) {
  const { t } = useTranslation('topology');
  if (!findings) return t('noFindings');
  return (
    <Group gap={6}>
      <SeverityBadge severity={findings.severity.toLowerCase()} />
      <Text size="sm">{formatNumber(findings.count)}</Text>
    </Group>
  );
}
