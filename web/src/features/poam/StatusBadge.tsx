import { Badge } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { STATUS_COLORS, type PoamStatus } from './model';

/** The item's status as a dot badge (readable text at any size, its colour beside it). */
export function StatusBadge({ status }: { status: PoamStatus }) {
  const { t } = useTranslation('poam');
  return (
    <Badge color={STATUS_COLORS[status]} variant="dot" style={{ minWidth: 'max-content' }}>
      {t(`status.${status}`)}
    </Badge>
  );
}
