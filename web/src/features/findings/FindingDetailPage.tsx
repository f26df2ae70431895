import { useState } from 'react';
import { Alert, Anchor, Badge, Button, Group, SimpleGrid, Stack, Table, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Link, useParams } from 'react-router';
import { errorMessage } from '../../api/errors';
import { formatDate, formatDay } from '../../i18n';
import { useSession } from '../../session/session';
import { Field, Section } from '../../ui/DetailSection';
import { PageHeader } from '../../ui/PageHeader';
import { QueryView } from '../../ui/QueryState';
import { SeverityBadge } from '../../ui/SeverityBadge';
import { notifyError, notifySuccess } from '../../ui/notify';
import { AcceptRiskModal, type AcceptTarget } from './components/AcceptRiskModal';
import { StatusBadge } from './components/FindingsTable';
import { Remediation } from './components/Remediation';
import { TerraformPatch } from './components/TerraformPatch';
import { useAcceptanceOf, useCreatePoamItem, useFinding, usePoamItemOf, useRemediation, useResolveFinding, useRevokeAcceptance, type Finding } from './queries';

/** One finding: what, where, which controls, its history, how to fix it, and what can be done about it. */
export function FindingDetailPage() {
  const { findingId = '' } = useParams();
  const query = useFinding(findingId);
  return <QueryView query={query}>{(finding) => <FindingDetail finding={finding} />}</QueryView>;
}

function FindingDetail({ finding }: { finding: Finding }) {
  const { t } = useTranslation('findings');
  const { can } = useSession();
  const remediation = useRemediation(finding.id);
  const acceptance = useAcceptanceOf(finding);
  const resolve = useResolveFinding();
  const revoke = useRevokeAcceptance();
  const poam = useCreatePoamItem();
  const [acceptTarget, setAcceptTarget] = useState<AcceptTarget | null>(null);
  const tracking = usePoamItemOf(finding.id, can('poam:read'));
  const [created, setCreated] = useState<string | null>(null);
  const poamId = tracking.data?.id ?? created;
  const live = acceptance.data ?? null;

  const run = async (action: () => Promise<unknown>, done: string) => {
    try {
      await action();
      notifySuccess(done);
    } catch (error) {
      notifyError(errorMessage(error));
    }
  };

  const actions = (
    <>
      {can('findings:write') && finding.status !== 'resolved' && (
        <Button loading={resolve.isPending} onClick={() => void run(() => resolve.mutateAsync({ findingId: finding.id }), t('detail.resolved'))}>
          {t('detail.resolve')}
        </Button>
      )}
      {can('audit:run') && finding.status === 'open' && (
        <Button variant="default" onClick={() => setAcceptTarget({ kind: 'finding', findingId: finding.id, groupId: finding.group_id })}>
          {t('detail.accept')}
        </Button>
      )}
      {can('audit:run') && live && (
        <Button variant="default" color="red" loading={revoke.isPending} onClick={() => void run(() => revoke.mutateAsync(live), t('detail.revoked'))}>
          {live.scope === 'group' ? t('detail.revokeGroup') : t('detail.revoke')}
        </Button>
      )}
      {can('poam:write') && finding.status !== 'resolved' && !poamId && (
        <Button
          variant="light"
          loading={poam.isPending}
          onClick={() =>
            void run(async () => {
              const item = await poam.mutateAsync(finding.id);
              setCreated(item.id);
            }, t('detail.poamCreated'))
          }
        >
          {t('detail.poam')}
        </Button>
      )}
    </>
  );

  return (
    <>
      <Anchor component={Link} to="/findings" size="sm">
        {t('detail.back')}
      </Anchor>
      <PageHeader title={finding.title} actions={actions} />
      <Group gap="xs" mb="md">
        <SeverityBadge severity={finding.severity.toLowerCase()} />
        <StatusBadge status={finding.status} />
        {finding.severity !== finding.base_severity && (
          <Badge variant="outline" color="gray">
            {t('detail.baseSeverity', { severity: t(`common:severity.${finding.base_severity.toLowerCase()}`) })}
          </Badge>
        )}
        {finding.due_at && (
          <Badge variant="outline" color="gray">
            {t('detail.due', { date: formatDate(finding.due_at) })}
          </Badge>
        )}
      </Group>
      {poamId && (
        <Alert color="teal" mb="md">
          {t('detail.poamItem', { id: poamId })} {/* The alert's own text colour, underlined: the link blue lacks contrast on the teal alert. */}
          <Anchor component={Link} to={`/poam/${poamId}`} size="sm" c="inherit" fw={600} underline="always">
            {t('detail.poamOpen', { id: poamId })}
          </Anchor>
        </Alert>
      )}
      {live && (
        <Alert color="grape" mb="md" title={live.scope === 'group' ? t('detail.acceptedGroup') : t('detail.acceptedSingle')}>
          {t('detail.acceptance', { owner: live.owner, reason: live.reason, date: formatDay(live.expires_at) })}
        </Alert>
      )}
      <Stack gap="md">
        <Section title={t('detail.description')}>
          <Text size="sm" style={{ whiteSpace: 'pre-wrap' }}>
            {finding.description}
          </Text>
        </Section>
        <SimpleGrid cols={{ base: 1, md: 2 }} spacing="md">
          <Section title={t('detail.resource')}>
            <SimpleGrid cols={2} spacing="sm" component="dl" m={0}>
              <Field label={t('detail.resourceName')}>{finding.resource_name || '—'}</Field>
              <Field label={t('detail.resourceType')}>{finding.resource_type}</Field>
              <Field label={t('detail.resourceId')}>{finding.resource_id}</Field>
              <Field label={t('detail.account')}>{`${finding.account_id} · ${finding.region}`}</Field>
            </SimpleGrid>
          </Section>
          <Section title={t('detail.history')}>
            <SimpleGrid cols={2} spacing="sm" component="dl" m={0}>
              <Field label={t('detail.firstSeen')}>{formatDate(finding.first_seen)}</Field>
              <Field label={t('detail.lastSeen')}>{formatDate(finding.last_seen)}</Field>
              <Field label={t('detail.resolvedAt')}>
                {finding.resolved_at ? t('detail.resolvedBy', { date: formatDate(finding.resolved_at), by: finding.resolved_by ?? '—' }) : '—'}
              </Field>
              <Field label={t('detail.reopenedAt')}>
                {finding.reopened_at ? t('detail.reopenedTimes', { date: formatDate(finding.reopened_at), count: finding.reopen_count }) : '—'}
              </Field>
              <Field label={t('detail.updated')}>{formatDate(finding.updated_at)}</Field>
            </SimpleGrid>
          </Section>
        </SimpleGrid>
        <Section title={t('detail.controls')}>
          <Table.ScrollContainer minWidth={320} type="native">
            <Table verticalSpacing={4}>
              <caption className="visually-hidden">{t('detail.controlsCaption')}</caption>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>{t('detail.framework')}</Table.Th>
                  <Table.Th>{t('detail.control')}</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                <Table.Tr>
                  <Table.Td>{t(`frameworks.${finding.framework}`, { defaultValue: finding.framework })}</Table.Td>
                  <Table.Td>
                    {finding.control_id}{' '}
                    <Badge size="xs" variant="outline" color="dark">
                      {t('detail.primary')}
                    </Badge>
                  </Table.Td>
                </Table.Tr>
                {finding.framework_mappings
                  .filter((mapping) => !(mapping.framework === finding.framework && mapping.control_id === finding.control_id))
                  .map((mapping) => (
                    <Table.Tr key={`${mapping.framework}:${mapping.control_id}`}>
                      <Table.Td>{t(`frameworks.${mapping.framework}`, { defaultValue: mapping.framework })}</Table.Td>
                      <Table.Td>{mapping.control_id}</Table.Td>
                    </Table.Tr>
                  ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        </Section>
        <Section title={t('detail.remediation')}>
          <Remediation query={remediation} />
        </Section>
        {remediation.data?.terraform_patch_available && (
          <Section title={t('detail.terraform')}>
            <TerraformPatch findingId={finding.id} ruleId={finding.rule_id} />
          </Section>
        )}
      </Stack>
      <AcceptRiskModal target={acceptTarget} onClose={() => setAcceptTarget(null)} />
    </>
  );
}
