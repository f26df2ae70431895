import { Anchor, Badge, Group, Text } from '@mantine/core';
import { Link } from 'react-router';
import { useTranslation } from 'react-i18next';
import { formatDay } from '../../i18n';
import type { AttestationStatus, ControlRow } from './queries';

export type ControlState = 'passing' | 'failing' | 'unknown' | 'attested' | 'not_attested';

const STATE_COLORS: Record<ControlState, string> = { passing: 'teal', failing: 'red', unknown: 'yellow', attested: 'blue', not_attested: 'gray' };

/** One state per control: what the rules say, or for a control no rule checks, its attestation. */
export function controlState(row: Pick<ControlRow, 'automated_state' | 'attestation_status'>): ControlState {
  if (row.automated_state !== 'not_automated') return row.automated_state;
  return row.attestation_status === 'attested' ? 'attested' : 'not_attested';
}

export function ControlStateBadge({ state }: { state: ControlState }) {
  const { t } = useTranslation('controls');
  return (
    <Badge color={STATE_COLORS[state]} variant="dot" style={{ minWidth: 'max-content' }}>
      {t(`state.${state}`)}
    </Badge>
  );
}

export function AttestationCell({ status, expiresAt, expiringSoon }: { status: AttestationStatus; expiresAt: string | null; expiringSoon?: boolean }) {
  const { t } = useTranslation('controls');
  return (
    <Group gap={4} wrap="wrap">
      <Text size="sm">{t(`attestation.${status}`)}</Text>
      {expiresAt && (
        <Text size="xs" c="dimmed">
          {t('attestation.until', { date: formatDay(expiresAt) })}
        </Text>
      )}
      {expiringSoon && (
        <Badge color="orange" variant="dot" size="sm">
          {t('attestation.expiringSoon')}
        </Badge>
      )}
    </Group>
  );
}

/** The findings screen filtered to one control (GET /findings' own parameter names). */
export function findingsHref(framework: string, controlId: string): string {
  return `/findings?${new URLSearchParams({ control_id: controlId, framework }).toString()}`;
}

export function FindingsLink({ framework, controlId, children }: { framework: string; controlId: string; children: React.ReactNode }) {
  const { t } = useTranslation('controls');
  return (
    <Anchor component={Link} to={findingsHref(framework, controlId)} size="sm" aria-label={t('findingsLinkLabel', { control: `${framework} ${controlId}` })}>
      {children}
    </Anchor>
  );
}
