import { Anchor, Badge, Group, SimpleGrid, Stack, Text } from '@mantine/core';
import { Link, useParams } from 'react-router';
import { useTranslation } from 'react-i18next';
import { formatDate, formatDay } from '../../i18n';
import { useSession } from '../../session/session';
import { Field, Section } from '../../ui/DetailSection';
import { PageHeader } from '../../ui/PageHeader';
import { QueryView } from '../../ui/QueryState';
import { SeverityDot } from '../../ui/SeverityBadge';
import { Comments } from './Comments';
import { EvidenceFiles } from './EvidenceFiles';
import { Milestones } from './Milestones';
import { MoveButtons } from './MoveStatus';
import { StatusBadge } from './StatusBadge';
import { usePoamItem, type PoamItem } from './queries';

function ItemDetail({ item }: { item: PoamItem }) {
  const { t } = useTranslation('poam');
  const { can } = useSession();
  const writable = can('poam:write');
  // Closed items are kept as they were closed: the service refuses changes to them.
  const editable = writable && item.status !== 'closed';
  return (
    <Stack gap="md">
      <Group gap="xs">
        <StatusBadge status={item.status} />
        <SeverityDot severity={item.severity} />
        {item.overdue && (
          <Badge color="red" variant="outline">
            {t('overdueBadge')}
          </Badge>
        )}
      </Group>
      <Section title={t('detail.description')}>
        <Text size="sm" style={{ whiteSpace: 'pre-wrap' }} mb="md">
          {item.weakness_description}
        </Text>
        <SimpleGrid cols={{ base: 1, sm: 2, md: 3 }} spacing="sm" component="dl" m={0}>
          <Field label={t('detail.contact')}>{item.point_of_contact}</Field>
          <Field label={t('detail.due')}>{formatDay(item.scheduled_completion)}</Field>
          <Field label={t('detail.controls')}>{item.control_ids.join(', ')}</Field>
          <Field label={t('detail.source')}>{item.source}</Field>
          {item.finding_id && (
            <Field label={t('detail.finding')}>
              <Anchor component={Link} to={`/findings/${encodeURIComponent(item.finding_id)}`} size="sm" style={{ wordBreak: 'break-all' }}>
                {item.finding_id}
              </Anchor>
            </Field>
          )}
          <Field label={t('detail.created')}>{`${formatDate(item.created_at)} · ${item.created_by}`}</Field>
          {item.closed_at && <Field label={t('detail.closed')}>{formatDate(item.closed_at)}</Field>}
          <Field label={t('detail.vendor')}>{item.vendor_dependency ? t('detail.yes') : t('detail.no')}</Field>
        </SimpleGrid>
      </Section>
      {writable && (
        <Section title={t('detail.moves')}>
          <MoveButtons id={item.id} status={item.status} />
        </Section>
      )}
      <Section title={t('milestones.title')}>
        <Milestones item={item} editable={editable} />
      </Section>
      <Section title={t('evidence.title')}>
        <EvidenceFiles item={item} editable={editable} />
      </Section>
      <Section title={t('comments.title')}>
        <Comments item={item} editable={writable} />
      </Section>
    </Stack>
  );
}

/** One item: what and where, its status moves, milestones, evidence and its log. */
export function PoamItemPage() {
  const { t } = useTranslation('poam');
  const { poamId = '' } = useParams();
  const item = usePoamItem(poamId);
  return (
    <>
      <Anchor component={Link} to="/poam" size="sm">
        {t('detail.back')}
      </Anchor>
      <PageHeader title={item.data ? `${item.data.id}: ${item.data.weakness_name}` : poamId} />
      <QueryView query={item}>{(data) => <ItemDetail item={data} />}</QueryView>
    </>
  );
}
