import { Badge } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import type { QuestionnaireStatus } from './queries';

// Dark text on light fills keeps the contrast axe asks for.
const COLOR: Record<QuestionnaireStatus, string> = { draft: 'yellow', published: 'teal', archived: 'gray' };

export function StatusBadge({ status }: { status: QuestionnaireStatus }) {
  const { t } = useTranslation('questionnaires');
  return (
    <Badge color={COLOR[status]} variant="light" c="dark">
      {t(`status.${status}`)}
    </Badge>
  );
}
