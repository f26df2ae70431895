import { Anchor, Badge, Group, List, Paper, Stack, Table, Text, Title } from '@mantine/core';
import { Link } from 'react-router';
import { useTranslation } from 'react-i18next';
import { formatDate, formatDay } from '../../i18n';
import { QueryView } from '../../ui/QueryState';
import { SeverityDot } from '../../ui/SeverityBadge';
import { useSession } from '../../session/session';
import { useExpiringAttestations, useLastAudit, useLastDiscovery, useLiveAcceptances, useNewestCritical } from './queries';

const DAY_MS = 86_400_000;

export const RUN_COLORS: Record<string, string> = {
  queued: 'gray',
  pending: 'gray',
  running: 'blue',
  succeeded: 'teal',
  completed: 'teal',
  failed: 'red',
  cancelled: 'gray',
};

/** The newest open critical findings, each a link to its page. */
export function CriticalFindings() {
  const { t } = useTranslation('overview');
  const findings = useNewestCritical();
  return (
    <Paper withBorder p="md" mb="md" component="section" aria-labelledby="critical-title">
      <Group justify="space-between" mb="sm">
        <Title order={2} size="h4" id="critical-title">
          {t('critical.title')}
        </Title>
        <Anchor component={Link} to="/findings?severity=CRITICAL&sort=-first_seen" size="sm">
          {t('critical.all')}
        </Anchor>
      </Group>
      <QueryView query={findings} isEmpty={(data) => data.items.length === 0} empty={<Text size="sm">{t('critical.empty')}</Text>}>
        {(data) => (
          <Table.ScrollContainer minWidth={560} type="native">
            <Table verticalSpacing="xs">
              <caption className="visually-hidden">{t('critical.caption')}</caption>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th scope="col">{t('critical.finding')}</Table.Th>
                  <Table.Th scope="col">{t('critical.resource')}</Table.Th>
                  <Table.Th scope="col">{t('critical.firstSeen')}</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {data.items.map((finding) => (
                  <Table.Tr key={finding.id}>
                    <Table.Td>
                      <Group gap="xs" wrap="nowrap">
                        <SeverityDot severity={finding.severity} />
                        <Anchor component={Link} to={`/findings/${encodeURIComponent(finding.id)}`} size="sm">
                          {finding.title}
                        </Anchor>
                      </Group>
                    </Table.Td>
                    <Table.Td>
                      <Text size="sm">{finding.resource_name || finding.resource_id}</Text>
                    </Table.Td>
                    <Table.Td>
                      <Text size="sm">{formatDate(finding.first_seen)}</Text>
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        )}
      </QueryView>
    </Paper>
  );
}

/** Live risk acceptances ending within 30 days, and attestations ending within 7. */
export function ExpiringSection() {
  const { t } = useTranslation('overview');
  const { can } = useSession();
  const acceptances = useLiveAcceptances();
  const attestations = useExpiringAttestations(can('assessment:read'));
  return (
    <Paper withBorder p="md" component="section" aria-labelledby="expiring-title">
      <Title order={2} size="h4" id="expiring-title" mb="sm">
        {t('expiring.title')}
      </Title>
      <Stack gap="md">
        <div>
          <Title order={3} size="h6" mb={4}>
            {t('expiring.acceptances')}
          </Title>
          <QueryView query={acceptances}>
            {(data) => {
              const horizon = Date.now() + 30 * DAY_MS;
              const soon = data.items
                .filter((item) => new Date(item.expires_at).getTime() <= horizon)
                .sort((a, b) => a.expires_at.localeCompare(b.expires_at))
                .slice(0, 5);
              if (soon.length === 0) return <Text size="sm">{t('expiring.acceptancesEmpty')}</Text>;
              return (
                <List size="sm" spacing={4}>
                  {soon.map((item) => (
                    <List.Item key={item.id}>
                      <Anchor component={Link} to={`/risk-acceptances/${item.id}`} size="sm">
                        {t('expiring.acceptance', { label: item.group_label ?? item.finding_id ?? item.group_id, owner: item.owner })}
                      </Anchor>{' '}
                      <Text span size="sm">
                        {t('expiring.expires', { date: formatDay(item.expires_at) })}
                      </Text>
                    </List.Item>
                  ))}
                </List>
              );
            }}
          </QueryView>
          <Anchor component={Link} to="/risk-acceptances?state=active" size="sm">
            {t('expiring.allAcceptances')}
          </Anchor>
        </div>
        {can('assessment:read') && (
          <div>
            <Title order={3} size="h6" mb={4}>
              {t('expiring.attestations')}
            </Title>
            <QueryView query={attestations} isEmpty={(data) => data.items.length === 0} empty={<Text size="sm">{t('expiring.attestationsEmpty')}</Text>}>
              {(data) => (
                <List size="sm" spacing={4}>
                  {data.items.map((item) => (
                    <List.Item key={`${item.framework}:${item.control_id}`}>
                      <Text span size="sm" fw={600}>
                        {item.framework} {item.control_id}
                      </Text>{' '}
                      <Text span size="sm">
                        {item.title} — {t('expiring.expires', { date: formatDay(item.expires_at) })}
                      </Text>
                    </List.Item>
                  ))}
                </List>
              )}
            </QueryView>
          </div>
        )}
      </Stack>
    </Paper>
  );
}

function RunLine({ label, status, started, finished }: { label: string; status: string; started: string | null; finished: string | null }) {
  const { t } = useTranslation('overview');
  return (
    <Group gap="sm" wrap="wrap" data-testid={`last-run-${label}`}>
      <Text fw={600} size="sm" w={80}>
        {label}
      </Text>
      <Badge color={RUN_COLORS[status] ?? 'gray'} variant="dot">
        {t(`runs.status.${status}`, { defaultValue: status })}
      </Badge>
      {started && <Text size="sm">{t('runs.started', { date: formatDate(started) })}</Text>}
      {finished && <Text size="sm">{t('runs.finished', { date: formatDate(finished) })}</Text>}
    </Group>
  );
}

/** The last audit and the last discovery job, with their state. */
export function RunsSection() {
  const { t } = useTranslation('overview');
  const { can } = useSession();
  const audit = useLastAudit();
  const discovery = useLastDiscovery(can('jobs:read'));
  return (
    <Paper withBorder p="md" component="section" aria-labelledby="runs-title">
      <Title order={2} size="h4" id="runs-title" mb="sm">
        {t('runs.title')}
      </Title>
      <Stack gap="sm">
        <QueryView query={audit}>
          {(run) =>
            run ? (
              <RunLine label={t('runs.audit')} status={run.status} started={run.started_at} finished={run.finished_at} />
            ) : (
              <Text size="sm">
                {t('runs.audit')}: {t('runs.none')}
              </Text>
            )
          }
        </QueryView>
        {can('jobs:read') && (
          <QueryView query={discovery}>
            {(job) =>
              job ? (
                <RunLine label={t('runs.discovery')} status={job.status} started={job.started_at ?? job.created_at} finished={job.completed_at} />
              ) : (
                <Text size="sm">
                  {t('runs.discovery')}: {t('runs.none')}
                </Text>
              )
            }
          </QueryView>
        )}
      </Stack>
    </Paper>
  );
}
