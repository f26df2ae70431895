import { Anchor, Button, Group, List, Modal, Paper, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { Link, useParams } from 'react-router';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../api/errors';
import { formatDate } from '../../i18n';
import { useSession } from '../../session/session';
import { notifyError, notifySuccess } from '../../ui/notify';
import { PageHeader } from '../../ui/PageHeader';
import { QueryView } from '../../ui/QueryState';
import { subjectOf } from './RiskAcceptancesPage';
import { StateBadge } from './StateBadge';
import { useAcceptance, useRevokeAcceptance, type Acceptance } from './queries';

function Field({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <div>
      <Text size="xs" c="dimmed" fw={600}>
        {label}
      </Text>
      <Text size="sm" component="div" style={{ wordBreak: 'break-word' }}>
        {children}
      </Text>
    </div>
  );
}

function SnapshotList({ title, items, link }: { title: string; items: string[]; link?: (item: string) => string }) {
  const { t } = useTranslation('risk');
  return (
    <div>
      <Title order={3} size="h6" mb={4}>
        {title}
      </Title>
      {items.length === 0 ? (
        <Text size="sm">{t('detail.none')}</Text>
      ) : (
        <List size="sm" spacing={2} style={{ wordBreak: 'break-all' }}>
          {items.map((item) => (
            <List.Item key={item}>
              {link ? (
                <Anchor component={Link} to={link(item)} size="sm">
                  {item}
                </Anchor>
              ) : (
                item
              )}
            </List.Item>
          ))}
        </List>
      )}
    </div>
  );
}

function RevokeAction({ acceptance }: { acceptance: Acceptance }) {
  const { t } = useTranslation('risk');
  const [opened, { open, close }] = useDisclosure(false);
  const revoke = useRevokeAcceptance();
  const confirm = () =>
    revoke.mutate(acceptance, {
      onSuccess: () => {
        close();
        notifySuccess(t('revoke.done'));
      },
      onError: (error) => notifyError(errorMessage(error)),
    });
  return (
    <>
      <Button color="red" onClick={open}>
        {t('revoke.action')}
      </Button>
      <Modal opened={opened} onClose={close} title={t('revoke.title')}>
        <Text size="sm" mb="md">
          {t('revoke.body')}
        </Text>
        <Group justify="flex-end">
          <Button variant="default" onClick={close}>
            {t('cancel', { ns: 'common' })}
          </Button>
          <Button color="red" onClick={confirm} loading={revoke.isPending}>
            {t('revoke.confirm')}
          </Button>
        </Group>
      </Modal>
    </>
  );
}

/** One acceptance: who accepted what, why and until when, the snapshot it covered, and revoke. */
export function RiskAcceptanceDetailPage() {
  const { t } = useTranslation('risk');
  const { acceptanceId = '' } = useParams();
  const { can } = useSession();
  const acceptance = useAcceptance(acceptanceId);
  const live = acceptance.data && (acceptance.data.state === 'active' || acceptance.data.state === 'partial');

  return (
    <>
      <Anchor component={Link} to="/risk-acceptances" size="sm">
        {t('detail.back')}
      </Anchor>
      <PageHeader title={t('detailTitle')} actions={live && can('audit:run') && acceptance.data ? <RevokeAction acceptance={acceptance.data} /> : null} />
      <QueryView query={acceptance}>
        {(data) => (
          <Stack gap="md">
            <Paper withBorder p="md">
              <SimpleGrid cols={{ base: 1, sm: 2, md: 3 }} spacing="md">
                <Field label={data.scope === 'finding' ? t('detail.finding') : t('detail.group')}>
                  {data.finding_id ? (
                    <Anchor component={Link} to={`/findings/${encodeURIComponent(data.finding_id)}`} size="sm">
                      {data.finding_id}
                    </Anchor>
                  ) : (
                    subjectOf(data)
                  )}
                </Field>
                <Field label={t('columns.state')}>
                  <StateBadge acceptance={data} />
                </Field>
                <Field label={t('detail.owner')}>{data.owner}</Field>
                <Field label={t('detail.createdBy')}>{data.created_by}</Field>
                <Field label={t('detail.createdAt')}>{formatDate(data.created_at)}</Field>
                <Field label={t('detail.expiresAt')}>{formatDate(data.expires_at)}</Field>
                {data.revoked_at && <Field label={t('detail.revokedAt')}>{formatDate(data.revoked_at)}</Field>}
                {data.revoked_by && <Field label={t('detail.revokedBy')}>{data.revoked_by}</Field>}
              </SimpleGrid>
              <Field label={t('detail.reason')}>{data.reason}</Field>
            </Paper>
            <Paper withBorder p="md" component="section" aria-labelledby="snapshot-title">
              <Title order={2} size="h4" id="snapshot-title">
                {t('detail.snapshot')}
              </Title>
              <Text size="sm" mb="sm">
                {t('detail.snapshotHint')}
              </Text>
              <SimpleGrid cols={{ base: 1, md: 3 }} spacing="md">
                <SnapshotList
                  title={t('detail.findings', { count: data.snapshot.finding_ids.length })}
                  items={data.snapshot.finding_ids}
                  link={(id) => `/findings/${encodeURIComponent(id)}`}
                />
                <SnapshotList title={t('detail.resources', { count: data.snapshot.resource_ids.length })} items={data.snapshot.resource_ids} />
                <SnapshotList title={t('detail.controls', { count: data.snapshot.controls.length })} items={data.snapshot.controls} />
              </SimpleGrid>
            </Paper>
          </Stack>
        )}
      </QueryView>
    </>
  );
}
