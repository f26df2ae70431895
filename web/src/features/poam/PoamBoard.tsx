import { Anchor, Badge, Group, Paper, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { Link } from 'react-router';
import { useTranslation } from 'react-i18next';
import { formatDay, formatNumber } from '../../i18n';
import { useSession } from '../../session/session';
import { QueryView } from '../../ui/QueryState';
import { SeverityDot } from '../../ui/SeverityBadge';
import { MoveMenu } from './MoveStatus';
import { POAM_STATUSES, type PoamStatus } from './model';
import { usePoamItems, type PoamItem } from './queries';

/** The board shows at most this many cards per column; the list pages through the rest. */
const PER_COLUMN = 100;

function Card({ item }: { item: PoamItem }) {
  const { t } = useTranslation('poam');
  const { can } = useSession();
  return (
    <Paper withBorder p="xs" component="li" aria-label={`${item.id}: ${item.weakness_name}`}>
      <Group justify="space-between" gap={4} wrap="nowrap" mb={4}>
        <Anchor component={Link} to={`/poam/${item.id}`} size="sm" fw={600}>
          {item.id}
        </Anchor>
        {can('poam:write') && <MoveMenu id={item.id} status={item.status} />}
      </Group>
      <Text size="sm" lineClamp={3} mb={4}>
        {item.weakness_name}
      </Text>
      <Group gap={4}>
        <SeverityDot severity={item.severity} />
        {item.overdue && (
          <Badge color="red" variant="outline" size="sm">
            {t('overdueBadge')}
          </Badge>
        )}
      </Group>
      <Text size="xs" c="dimmed" mt={4}>
        {t('board.due', { date: formatDay(item.scheduled_completion) })}
      </Text>
    </Paper>
  );
}

function Column({ status }: { status: PoamStatus }) {
  const { t } = useTranslation('poam');
  const items = usePoamItems({ status, sort: 'scheduled_completion', page: 1, per_page: PER_COLUMN });
  const headingId = `poam-column-${status}`;
  return (
    <Paper withBorder p="sm" bg="var(--mantine-color-gray-0)" component="section" aria-labelledby={headingId}>
      <Title order={2} size="h5" mb="sm" id={headingId}>
        {t('board.column', { status: t(`status.${status}`), count: formatNumber(items.data?.total ?? 0) })}
      </Title>
      <QueryView
        query={items}
        isEmpty={(data) => data.items.length === 0}
        empty={
          <Text size="sm" c="dimmed">
            {t('board.emptyColumn')}
          </Text>
        }
      >
        {(data) => (
          <>
            <Stack gap="xs" component="ul" p={0} m={0} style={{ listStyle: 'none' }}>
              {data.items.map((item) => (
                <Card key={item.id} item={item} />
              ))}
            </Stack>
            {data.total > data.items.length && (
              <Text size="xs" c="dimmed" mt="xs">
                {t('board.more', { shown: formatNumber(data.items.length), total: formatNumber(data.total) })}
              </Text>
            )}
          </>
        )}
      </QueryView>
    </Paper>
  );
}

/** Four columns, one per status; each card has a menu of the moves its status allows. */
export function PoamBoard() {
  const { t } = useTranslation('poam');
  return (
    <SimpleGrid cols={{ base: 1, sm: 2, lg: 4 }} spacing="sm" role="group" aria-label={t('board.label')}>
      {POAM_STATUSES.map((status) => (
        <Column key={status} status={status} />
      ))}
    </SimpleGrid>
  );
}
