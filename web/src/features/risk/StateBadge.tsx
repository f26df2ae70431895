import { Badge, Group } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import type { Acceptance } from './queries';

const COLORS: Record<string, string> = { active: 'teal', partial: 'yellow', expired: 'gray', revoked: 'red', orphaned: 'grape' };

/** The acceptance's state, and "orphaned" beside it when none of its findings is open any more. */
export function StateBadge({ acceptance }: { acceptance: Pick<Acceptance, 'state' | 'orphaned'> }) {
  const { t } = useTranslation('risk');
  return (
    <Group gap={4} wrap="nowrap">
      <Badge color={COLORS[acceptance.state]} variant="dot" style={{ minWidth: 'max-content' }}>
        {t(`state.${acceptance.state}`)}
      </Badge>
      {acceptance.orphaned && (
        <Badge color={COLORS.orphaned} variant="dot" title={t('orphanedHint')}>
          {t('state.orphaned')}
        </Badge>
      )}
    </Group>
  );
}
