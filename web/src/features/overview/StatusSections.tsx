import { useMemo } from 'react';
import { Anchor, Card, Group, Paper, Progress, RingProgress, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { Link } from 'react-router';
import { useTranslation } from 'react-i18next';
import { formatDay, formatNumber } from '../../i18n';
import { EChart, mantineHex, severityHex, type EChartOption } from '../../ui/EChart';
import { QueryView } from '../../ui/QueryState';
import { SeverityDot, SEVERITIES } from '../../ui/SeverityBadge';
import { useControlsStatus, useScoreHistory, type ControlsStatus } from './queries';

const scoreColor = (score: number) => (score >= 80 ? 'teal' : score >= 50 ? 'yellow' : 'red');

/** The overall score and each enabled framework's, with a link to its controls. */
export function ScoresSection() {
  const { t } = useTranslation('overview');
  const status = useControlsStatus();
  return (
    <Paper withBorder p="md" mb="md" component="section" aria-labelledby="scores-title">
      <Title order={2} size="h4" id="scores-title" mb="sm">
        {t('scores.title')}
      </Title>
      <QueryView query={status}>
        {(data) => (
          <Group align="stretch" gap="md" wrap="wrap">
            <Stack align="center" gap={0} data-testid="overall-score">
              <RingProgress
                size={120}
                thickness={12}
                sections={[{ value: data.overall_score, color: scoreColor(data.overall_score) }]}
                label={
                  <Text ta="center" fw={700} size="xl">
                    {t('scores.percent', { value: formatNumber(data.overall_score) })}
                  </Text>
                }
              />
              <Text size="sm">{t('scores.overall')}</Text>
            </Stack>
            <SimpleGrid cols={{ base: 1, sm: 2, lg: 4 }} style={{ flex: 1 }}>
              {Object.entries(data.by_framework).map(([framework, figures]) => (
                <Card key={framework} withBorder padding="sm" data-testid={`framework-score-${framework}`}>
                  <Text fw={600}>{framework}</Text>
                  <Text fw={700} size="xl">
                    {t('scores.percent', { value: formatNumber(figures.score) })}
                  </Text>
                  <Progress value={figures.score} color={scoreColor(figures.score)} size="sm" mb={4} aria-label={t('scores.frameworkBar', { framework })} />
                  <Text size="sm">{t('scores.passing', { passing: formatNumber(figures.passing_controls), applicable: formatNumber(figures.applicable_controls) })}</Text>
                  <Text size="sm">{t('scores.failing', { count: figures.failing_controls })}</Text>
                  <Anchor component={Link} to={`/controls?framework=${encodeURIComponent(framework)}`} size="sm">
                    {t('scores.controlsLink', { framework })}
                  </Anchor>
                </Card>
              ))}
            </SimpleGrid>
          </Group>
        )}
      </QueryView>
    </Paper>
  );
}

function severityCounts(data: ControlsStatus) {
  return SEVERITIES.map((severity) => ({ severity, count: data.by_severity[severity.toUpperCase()] ?? data.by_severity[severity] ?? 0 }));
}

/** Active findings by severity: a doughnut, and the counts as links to the findings. */
export function SeveritySection() {
  const { t } = useTranslation('overview');
  const { t: common } = useTranslation();
  const status = useControlsStatus();
  return (
    <Paper withBorder p="md" component="section" aria-labelledby="severity-title">
      <Title order={2} size="h4" id="severity-title" mb="sm">
        {t('severity.title')}
      </Title>
      <QueryView query={status}>
        {(data) => {
          const counts = severityCounts(data);
          const option: EChartOption = {
            tooltip: { trigger: 'item' },
            series: [
              {
                type: 'pie',
                radius: ['45%', '75%'],
                label: { show: false },
                data: counts.map(({ severity, count }) => ({ name: common(`severity.${severity}`), value: count, itemStyle: { color: severityHex(severity) } })),
              },
            ],
          };
          return (
            <Group align="center" wrap="nowrap" gap="md">
              <div style={{ flex: 1, minWidth: 160 }}>
                <EChart option={option} height={200} label={t('severity.chartLabel')} summary={<SeverityTable counts={counts} />} />
              </div>
              <Stack gap={6}>
                <Text size="sm" fw={600} data-testid="total-findings">
                  {t('severity.total', { count: data.total_findings })}
                </Text>
                {counts.map(({ severity, count }) => (
                  <Group key={severity} gap="xs" wrap="nowrap">
                    <SeverityDot severity={severity} />
                    <Anchor
                      component={Link}
                      to={`/findings?severity=${severity.toUpperCase()}`}
                      aria-label={t('severity.link', { severity: common(`severity.${severity}`), count })}
                      data-testid={`severity-count-${severity}`}
                      fw={700}
                    >
                      {formatNumber(count)}
                    </Anchor>
                  </Group>
                ))}
              </Stack>
            </Group>
          );
        }}
      </QueryView>
    </Paper>
  );
}

function SeverityTable({ counts }: { counts: { severity: string; count: number }[] }) {
  const { t } = useTranslation('overview');
  const { t: common } = useTranslation();
  return (
    <table>
      <caption>{t('severity.caption')}</caption>
      <thead>
        <tr>
          <th scope="col">{t('severity.severity')}</th>
          <th scope="col">{t('severity.count')}</th>
        </tr>
      </thead>
      <tbody>
        {counts.map(({ severity, count }) => (
          <tr key={severity}>
            <td>{common(`severity.${severity}`)}</td>
            <td>{formatNumber(count)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The overall score per day, from the history the service keeps. */
export function HistorySection() {
  const { t } = useTranslation('overview');
  const history = useScoreHistory();
  return (
    <Paper withBorder p="md" component="section" aria-labelledby="history-title">
      <Title order={2} size="h4" id="history-title" mb="sm">
        {t('history.title')}
      </Title>
      <QueryView query={history} isEmpty={(data) => data.items.length === 0} empty={<Text size="sm">{t('history.empty')}</Text>}>
        {(data) => <HistoryChart points={data.items.map((item) => ({ at: item.at, score: item.frameworks.overall?.score ?? null }))} />}
      </QueryView>
    </Paper>
  );
}

function HistoryChart({ points }: { points: { at: string; score: number | null }[] }) {
  const { t } = useTranslation('overview');
  const option = useMemo<EChartOption>(
    () => ({
      tooltip: { trigger: 'axis' },
      grid: { left: 40, right: 16, top: 16, bottom: 32 },
      xAxis: { type: 'category', data: points.map((point) => formatDay(point.at)) },
      yAxis: { type: 'value', min: 0, max: 100 },
      series: [{ type: 'line', data: points.map((point) => point.score), itemStyle: { color: mantineHex('blue', 8) }, showSymbol: points.length < 20 }],
    }),
    [points],
  );
  return (
    <EChart
      option={option}
      height={200}
      label={t('history.chartLabel')}
      summary={
        <Table>
          <caption>{t('history.caption')}</caption>
          <Table.Thead>
            <Table.Tr>
              <Table.Th scope="col">{t('history.day')}</Table.Th>
              <Table.Th scope="col">{t('history.score')}</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {points.map((point) => (
              <Table.Tr key={point.at}>
                <Table.Td>{formatDay(point.at)}</Table.Td>
                <Table.Td>{formatNumber(point.score)}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      }
    />
  );
}
