import { Badge } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import type { AssessmentStatus } from './queries';

const COLORS: Record<AssessmentStatus, string> = { assigned: 'gray', in_progress: 'blue', submitted: 'violet', changes_requested: 'orange', approved: 'teal' };

export function StatusBadge({ status }: { status: AssessmentStatus }) {
  const { t } = useTranslation('assessments');
  return (
    <Badge color={COLORS[status]} variant="dot" style={{ minWidth: 'max-content' }}>
      {t(`status.${status}`)}
    </Badge>
  );
}
