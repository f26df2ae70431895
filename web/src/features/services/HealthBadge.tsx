import { Badge, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import type { Health, ServiceRow } from './queries';

const HEALTH_COLORS: Record<Health, string> = { Critical: 'red', Warning: 'orange', Healthy: 'teal' };

/** The health roll-up: Critical with any critical finding, Warning with high ones, else Healthy. */
export function HealthBadge({ health }: { health: Health }) {
  const { t } = useTranslation('services');
  return (
    <Badge color={HEALTH_COLORS[health]} variant="dot" style={{ minWidth: 'max-content' }}>
      {t(`health.${health}`)}
    </Badge>
  );
}

/** Active findings by severity, as one short line (critical · high · medium · low). */
export function FindingCounts({ counts }: { counts: ServiceRow['findings_by_severity'] }) {
  const { t } = useTranslation('services');
  return <Text size="sm">{t('findingCounts', { critical: counts.CRITICAL, high: counts.HIGH, medium: counts.MEDIUM, low: counts.LOW })}</Text>;
}
