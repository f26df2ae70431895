import type { ReactNode } from 'react';
import { Alert, Anchor, Badge, Button, Code, Group, List, Paper, Stack, Table, Text, Title } from '@mantine/core';
import { Link, useNavigate, useParams } from 'react-router';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../api/errors';
import { formatDate, formatNumber } from '../../i18n';
import { useSession } from '../../session/session';
import { notifyError, notifySuccess } from '../../ui/notify';
import { PageHeader } from '../../ui/PageHeader';
import { QueryView } from '../../ui/QueryState';
import { SeverityBadge } from '../../ui/SeverityBadge';
import { useDeleteRule, useRule, type Rule } from './queries';

export function RuleDetailPage() {
  const { ruleId } = useParams();
  const rule = useRule(ruleId);
  return <QueryView query={rule}>{(data) => <RuleDetail rule={data} />}</QueryView>;
}

function RuleDetail({ rule }: { rule: Rule }) {
  const { t } = useTranslation('rules');
  const { can } = useSession();
  const navigate = useNavigate();
  const remove = useDeleteRule();
  const editable = !rule.builtin && can('rules:write');
  const onDelete = () => {
    if (!window.confirm(t('detail.deleteConfirm', { id: rule.id }))) return;
    remove.mutate(rule.id, {
      onSuccess: () => {
        notifySuccess(t('detail.deleted', { id: rule.id }));
        void navigate('/rules');
      },
      onError: (error) => notifyError(errorMessage(error)),
    });
  };
  const last = rule.evaluation.last_run;

  return (
    <>
      <Anchor component={Link} to="/rules" size="sm">
        {t('detail.back')}
      </Anchor>
      <PageHeader
        title={rule.title}
        actions={
          editable && (
            <>
              <Button component={Link} to={`/rules/${encodeURIComponent(rule.id)}/edit`}>
                {t('detail.edit')}
              </Button>
              <Button variant="light" color="red" onClick={onDelete} loading={remove.isPending}>
                {t('detail.delete')}
              </Button>
            </>
          )
        }
      />
      <Stack gap="md">
        <Group gap="sm">
          <Code>{rule.id}</Code>
          <SeverityBadge severity={rule.severity.toLowerCase()} />
          <Badge variant="outline" color={rule.builtin ? 'gray' : 'grape'}>
            {rule.builtin ? t('kind.builtin') : t('kind.custom')}
          </Badge>
          <Badge variant="light" color={rule.evaluation.state === 'active' ? 'teal' : 'red'}>
            {t(`state.${rule.evaluation.state}`)}
          </Badge>
        </Group>
        {rule.builtin && (
          <Text size="sm" c="dimmed">
            {t('detail.readOnly')}
          </Text>
        )}
        {rule.evaluation.state === 'suspended' && <Alert color="red">{t('detail.suspended', { reason: rule.evaluation.suspended_reason ?? '' })}</Alert>}
        <Text>{rule.description}</Text>
        <Table withRowBorders={false} verticalSpacing={4} fz="sm" maw={900}>
          <caption className="visually-hidden">{rule.title}</caption>
          <Table.Tbody>
            <Row label={t('detail.resourceType')}>{rule.resource_type}</Row>
            <Row label={t('detail.findingTitle')}>{rule.finding_title}</Row>
            <Row label={t('detail.evaluation')}>
              {last
                ? t('detail.evaluations', { evaluations: formatNumber(last.evaluations), errors: formatNumber(last.errors), at: formatDate(last.at) })
                : t('detail.neverEvaluated')}
            </Row>
            {!rule.builtin && <Row label={t('detail.history')}>{t('detail.created', { at: formatDate(rule.created_at), updated: formatDate(rule.updated_at) })}</Row>}
          </Table.Tbody>
        </Table>
        <section aria-labelledby="rule-condition">
          <Title order={2} size="h4" id="rule-condition" mb={4}>
            {t('detail.condition')}
          </Title>
          <Text size="xs" c="dimmed" mb={4}>
            {t('detail.conditionHelp')}
          </Text>
          <Code block style={{ whiteSpace: 'pre-wrap' }}>
            {rule.condition}
          </Code>
        </section>
        <section aria-labelledby="rule-mappings">
          <Title order={2} size="h4" id="rule-mappings" mb={4}>
            {t('detail.mappings')}
          </Title>
          <Table striped maw={700} fz="sm">
            <caption className="visually-hidden">{t('detail.mappingsCaption')}</caption>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('detail.framework')}</Table.Th>
                <Table.Th>{t('detail.control')}</Table.Th>
                <Table.Th>{t('detail.role')}</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              <Table.Tr>
                <Table.Td>{t(`frameworks.${rule.framework}`)}</Table.Td>
                <Table.Td>{rule.control_id}</Table.Td>
                <Table.Td>{t('detail.primary')}</Table.Td>
              </Table.Tr>
              {rule.framework_mappings.map((m) => (
                <Table.Tr key={`m:${m.framework}:${m.control_id}`}>
                  <Table.Td>{t(`frameworks.${m.framework}`)}</Table.Td>
                  <Table.Td>{m.control_id}</Table.Td>
                  <Table.Td>{t('detail.mapped')}</Table.Td>
                </Table.Tr>
              ))}
              {rule.related_mappings.map((m) => (
                <Table.Tr key={`r:${m.framework}:${m.control_id}`}>
                  <Table.Td>{t(`frameworks.${m.framework}`)}</Table.Td>
                  <Table.Td>{m.control_id}</Table.Td>
                  <Table.Td>{t('detail.related')}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
          {rule.nist_controls.length > 0 && (
            <List size="sm" mt="xs">
              {rule.nist_controls.map((c) => (
                <List.Item key={`${c.control_id}:${c.source}`}>
                  {c.control_id} — {t('detail.nist', { source: c.source })}
                </List.Item>
              ))}
            </List>
          )}
        </section>
        <Paper withBorder p="md" component="section" aria-labelledby="rule-remediation" maw={900}>
          <Title order={2} size="h4" id="rule-remediation" mb={4}>
            {t('detail.remediation')}
          </Title>
          <Text size="sm">{rule.remediation.summary}</Text>
          {rule.remediation.steps.length > 0 && (
            <List type="ordered" size="sm" mt="xs">
              {rule.remediation.steps.map((step, index) => (
                <List.Item key={index}>
                  {step.action} {step.command && <Code>{step.command}</Code>}
                </List.Item>
              ))}
            </List>
          )}
        </Paper>
        <Anchor component={Link} to={`/findings?rule_id=${encodeURIComponent(rule.id)}`} size="sm">
          {t('detail.findings')}
        </Anchor>
      </Stack>
    </>
  );
}

function Row({ label, children }: { label: string; children: ReactNode }) {
  return (
    <Table.Tr>
      <Table.Th scope="row" w={180}>
        {label}
      </Table.Th>
      <Table.Td>{children}</Table.Td>
    </Table.Tr>
  );
}
