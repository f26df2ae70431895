import { useState, type FormEvent } from 'react';
import { Anchor, Badge, Button, Group, List, SimpleGrid, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { formatDate, formatDay, formatNumber, formatPercent } from '../../i18n';
import { EmptyState, QueryView } from '../../ui/QueryState';
import { useUrlState } from '../../ui/url-state';
import { Field, Section } from '../../ui/DetailSection';
import { CVE_PATTERN, useCve, type CveRecord } from './queries';

/** Looks up one CVE (?cve= in the URL): its KEV entry, EPSS score, NVD record, references and affected packages. */
export function CveLookup() {
  const { t } = useTranslation('vulnerabilities');
  const url = useUrlState();
  const cveId = url.get('cve').toUpperCase() || null;
  const [input, setInput] = useState(cveId ?? '');
  const [invalid, setInvalid] = useState(false);
  const cve = useCve(cveId);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const value = input.trim().toUpperCase();
    if (!CVE_PATTERN.test(value)) return setInvalid(true);
    setInvalid(false);
    url.set({ cve: value });
  };

  return (
    <Stack gap="md">
      <form onSubmit={submit} role="search" aria-label={t('lookup.label')}>
        <Group align="flex-end" gap="sm">
          <TextInput
            label={t('lookup.input')}
            placeholder="CVE-2021-44228"
            w={280}
            value={input}
            onChange={(event) => setInput(event.currentTarget.value)}
            error={invalid ? t('lookup.invalid') : undefined}
          />
          <Button type="submit">{t('lookup.submit')}</Button>
        </Group>
      </form>
      {!cveId ? (
        <Text size="sm" c="dimmed">
          {t('lookup.hint')}
        </Text>
      ) : (
        <QueryView query={cve} isEmpty={(data) => data === null} empty={<EmptyState title={t('lookup.unknown', { cve: cveId })} />}>
          {(record) => record && <CveDetail record={record} />}
        </QueryView>
      )}
    </Stack>
  );
}

function CveDetail({ record }: { record: CveRecord }) {
  const { t } = useTranslation('vulnerabilities');
  return (
    <Stack gap="md" data-testid="cve-detail">
      <Group gap="sm">
        <Title order={2} size="h3">
          {record.cve_id}
        </Title>
        {record.is_kev ? (
          <Badge color="red">{t('cve.inKev')}</Badge>
        ) : (
          <Badge color="gray" variant="light">
            {t('cve.notInKev')}
          </Badge>
        )}
        {record.cvss_v3_severity && <Badge variant="outline">{record.cvss_v3_severity}</Badge>}
      </Group>
      {record.description && <Text size="sm">{record.description}</Text>}
      <Text size="xs" c="dimmed">
        {t('cve.sources', { sources: record.sources.join(', ') })}
      </Text>
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        <Section title={t('cve.kev')}>
          {record.is_kev ? (
            <SimpleGrid cols={2} component="dl" spacing="sm">
              <Field label={t('cve.kevName')}>{record.kev_vulnerability_name ?? '—'}</Field>
              <Field label={t('cve.vendorProduct')}>{[record.vendor_project, record.product_name].filter(Boolean).join(' · ') || '—'}</Field>
              <Field label={t('cve.dateAdded')}>{formatDay(record.kev_date_added)}</Field>
              <Field label={t('cve.dueDate')}>{formatDay(record.kev_due_date)}</Field>
              <Field label={t('cve.ransomware')}>{record.known_ransomware_campaign_use ? t(`ransomware.${record.known_ransomware_campaign_use}`) : '—'}</Field>
              <Field label={t('cve.requiredAction')}>{record.kev_required_action ?? '—'}</Field>
            </SimpleGrid>
          ) : (
            <Text size="sm">{t('cve.kevNone')}</Text>
          )}
        </Section>
        <Section title={t('cve.epss')}>
          <SimpleGrid cols={2} component="dl" spacing="sm">
            <Field label={t('cve.epssScore')}>{formatPercent(record.epss_score)}</Field>
            <Field label={t('cve.epssPercentile')}>{formatPercent(record.epss_percentile)}</Field>
            <Field label={t('cve.epssModel')}>{record.epss_model_version ?? '—'}</Field>
            <Field label={t('cve.epssDate')}>{formatDay(record.epss_score_date)}</Field>
          </SimpleGrid>
        </Section>
        <Section title={t('cve.nvd')}>
          <SimpleGrid cols={2} component="dl" spacing="sm">
            <Field label={t('cve.cvss3')}>{record.cvss_v3_score === null ? '—' : `${formatNumber(record.cvss_v3_score, 1)} ${record.cvss_v3_severity ?? ''}`}</Field>
            <Field label={t('cve.cvss4')}>{record.cvss_v4_score === null ? '—' : `${formatNumber(record.cvss_v4_score, 1)} ${record.cvss_v4_severity ?? ''}`}</Field>
            <Field label={t('cve.vector')}>{record.cvss_v3_vector ?? '—'}</Field>
            <Field label={t('cve.status')}>{record.vuln_status ?? '—'}</Field>
            <Field label={t('cve.published')}>{formatDate(record.published)}</Field>
            <Field label={t('cve.modified')}>{formatDate(record.last_modified)}</Field>
            <Field label={t('cve.cwes')}>{record.cwes.join(', ') || '—'}</Field>
          </SimpleGrid>
        </Section>
        <Section title={t('cve.references')}>
          {record.references.length === 0 ? (
            <Text size="sm">{t('cve.noReferences')}</Text>
          ) : (
            <List size="sm" spacing={4}>
              {record.references.map((href) => (
                <List.Item key={href}>
                  <Anchor href={href} target="_blank" rel="noopener noreferrer" size="sm" style={{ wordBreak: 'break-all' }}>
                    {href}
                  </Anchor>
                </List.Item>
              ))}
            </List>
          )}
        </Section>
      </SimpleGrid>
      {record.affected_packages.length > 0 && (
        <Section title={t('cve.packages')}>
          <Table.ScrollContainer minWidth={480} type="native">
            <Table striped>
              <caption className="visually-hidden">{t('cve.packages')}</caption>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>{t('cve.advisory')}</Table.Th>
                  <Table.Th>{t('cve.ecosystem')}</Table.Th>
                  <Table.Th>{t('cve.package')}</Table.Th>
                  <Table.Th>{t('cve.fixed')}</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {record.affected_packages.map((pkg) => (
                  <Table.Tr key={`${pkg.advisory_id}:${pkg.ecosystem}:${pkg.name}`}>
                    <Table.Td>{pkg.advisory_id}</Table.Td>
                    <Table.Td>{pkg.ecosystem}</Table.Td>
                    <Table.Td>{pkg.name}</Table.Td>
                    <Table.Td>{pkg.ranges.flatMap((range) => range.events.map((e) => e.fixed).filter(Boolean)).join(', ') || '—'}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        </Section>
      )}
    </Stack>
  );
}
