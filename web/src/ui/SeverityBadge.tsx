import { Badge } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { LightBadge } from './LightBadge';

/** Colours by severity, shared by every list, chart and the topology's badges. */
export const SEVERITY_COLORS: Record<string, string> = {
  critical: 'red',
  high: 'orange',
  medium: 'yellow',
  low: 'blue',
  info: 'gray',
};

export const SEVERITIES = ['critical', 'high', 'medium', 'low', 'info'] as const;

export function SeverityBadge({ severity }: { severity: string }) {
  const { t } = useTranslation();
  // Never cut to "CRITI…": the badge keeps its whole word and the column widens to fit it.
  return <LightBadge color={SEVERITY_COLORS[severity] ?? 'gray'}>{t(`severity.${severity}`, { defaultValue: severity })}</LightBadge>;
}

/**
 * The same, as a dot of the severity's colour beside plain text: readable at any size (the light
 * badges' orange and yellow text stays under 4.5:1 on its background).
 */
export function SeverityDot({ severity }: { severity: string }) {
  const { t } = useTranslation();
  const key = severity.toLowerCase();
  return (
    <Badge color={SEVERITY_COLORS[key] ?? 'gray'} variant="dot" style={{ minWidth: 'max-content' }}>
      {t(`severity.${key}`, { defaultValue: severity })}
    </Badge>
  );
}
