import { useMemo } from 'react';
import { Anchor, Badge, Button, Card, Group, SimpleGrid, Stack, Switch, Text, Title } from '@mantine/core';
import type { ColumnDef } from '@tanstack/react-table';
import { useTranslation } from 'react-i18next';
import { Link, useParams } from 'react-router';
import { formatNumber, formatPercent } from '../../i18n';
import { useSession } from '../../session/session';
import { DataTable } from '../../ui/DataTable';
import { PageHeader } from '../../ui/PageHeader';
import { Pager } from '../../ui/Pager';
import { EmptyState, QueryView } from '../../ui/QueryState';
import { SeverityDot } from '../../ui/SeverityBadge';
import { useUrlState } from '../../ui/url-state';
import { FindingCounts, HealthBadge } from './HealthBadge';
import { useCveExposure, useService, type ExposureItem, type ServiceDetail } from './queries';
import { useUrlPaging } from '../../ui/url-paging';

/** One business service: its health, member applications, SBOM download and CVE exposure. */
export function ServiceDetailPage() {
  const { serviceId = '' } = useParams();
  const service = useService(serviceId);
  return <QueryView query={service}>{(data) => <ServiceView service={data} />}</QueryView>;
}

function ServiceView({ service }: { service: ServiceDetail }) {
  const { t } = useTranslation('services');
  const { tenantId, can } = useSession();
  const sbomHref = `/api/v1/tenants/${tenantId}/services/${service.id}/sbom`;
  return (
    <Stack gap="md">
      <Anchor component={Link} to="/services" size="sm">
        {t('back')}
      </Anchor>
      <PageHeader
        title={service.name}
        actions={
          can('nodes:read') && (
            <Button component="a" href={sbomHref} download={`${service.name}.cdx.json`} variant="light">
              {t('downloadSbom')}
            </Button>
          )
        }
      />
      {service.description && <Text size="sm">{service.description}</Text>}
      <Group gap="lg" wrap="wrap">
        <HealthBadge health={service.health} />
        <Text size="sm">{t('criticalityIs', { criticality: t(`criticality.${service.criticality}`) })}</Text>
        {service.owner && <Text size="sm">{t('ownerIs', { owner: service.owner })}</Text>}
        <FindingCounts counts={service.findings_by_severity} />
      </Group>
      <Card withBorder padding="md" component="section" aria-labelledby="service-applications">
        <Title order={2} size="h4" mb="sm" id="service-applications">
          {t('members')}
        </Title>
        {service.applications.length === 0 ? (
          <Text size="sm">{t('empty.members')}</Text>
        ) : (
          <SimpleGrid cols={{ base: 1, sm: 2, lg: 3 }}>
            {service.applications.map((app) => (
              <Card key={app.id} withBorder padding="sm">
                <Group justify="space-between" wrap="nowrap">
                  <Anchor component={Link} to={`/services/applications/${app.id}`} size="sm" fw={600}>
                    {app.name}
                  </Anchor>
                  <HealthBadge health={app.health} />
                </Group>
                <Text size="xs" c="dimmed">
                  {t('resourceCount', { count: app.resource_count })}
                </Text>
                <FindingCounts counts={app.findings_by_severity} />
              </Card>
            ))}
          </SimpleGrid>
        )}
      </Card>
      <CveExposure serviceId={service.id} />
    </Stack>
  );
}

function CveExposure({ serviceId }: { serviceId: string }) {
  const { t } = useTranslation('services');
  const url = useUrlState();
  const kevOnly = url.get('kev') === '1';
  const { page, perPage, setPaging } = useUrlPaging();
  const exposure = useCveExposure(serviceId, { kev: kevOnly || undefined, page, per_page: perPage });

  const columns = useMemo<ColumnDef<ExposureItem>[]>(
    () => [
      {
        id: 'cve',
        header: t('exposure.cve'),
        cell: ({ row }) => (
          <Anchor component={Link} to={`/vulnerabilities?cve=${encodeURIComponent(row.original.cve_id)}`} size="sm" style={{ whiteSpace: 'nowrap' }}>
            {row.original.cve_id}
          </Anchor>
        ),
      },
      { id: 'risk', header: t('exposure.risk'), cell: ({ row }) => <Text size="sm">{row.original.risk_score}</Text> },
      { id: 'severity', header: t('exposure.severity'), cell: ({ row }) => <SeverityDot severity={row.original.severity} /> },
      {
        id: 'kev',
        header: t('exposure.kev'),
        cell: ({ row }) =>
          row.original.is_kev ? (
            <Badge color="red" size="sm">
              {t('exposure.inKev')}
            </Badge>
          ) : (
            <Text size="sm">—</Text>
          ),
      },
      { id: 'epss', header: t('exposure.epss'), cell: ({ row }) => <Text size="sm">{formatPercent(row.original.epss_score)}</Text> },
      {
        id: 'where',
        header: t('exposure.where'),
        cell: ({ row }) => (
          <Text size="sm">{[...row.original.packages.map((p) => `${p.name} ${p.version}`), ...row.original.resources.map((r) => r.name)].slice(0, 4).join(', ')}</Text>
        ),
      },
      { id: 'exposed', header: t('exposure.exposed'), cell: ({ row }) => <Text size="sm">{row.original.exposed ? t('exposure.yes') : t('exposure.no')}</Text> },
    ],
    [t],
  );

  return (
    <Card withBorder padding="md" component="section" aria-labelledby="service-exposure">
      <Group justify="space-between" mb="sm" wrap="wrap">
        <Title order={2} size="h4" id="service-exposure">
          {t('exposure.title')}
        </Title>
        <Switch label={t('exposure.kevOnly')} checked={kevOnly} onChange={(event) => url.set({ kev: event.currentTarget.checked ? '1' : null })} />
      </Group>
      <QueryView query={exposure} isEmpty={(data) => data.items.length === 0} empty={<EmptyState title={t('exposure.empty')} />}>
        {(data) => (
          <>
            <Text size="sm" mb="xs" data-testid="exposure-summary">
              {t('exposure.summary', {
                cves: formatNumber(data.summary.cves),
                kev: formatNumber(data.summary.kev),
                highEpss: formatNumber(data.summary.high_epss),
                exposed: formatNumber(data.summary.exposed),
                hosts: formatNumber(data.hosts),
                packages: formatNumber(data.packages),
              })}
            </Text>
            <DataTable data={data.items} columns={columns} getRowId={(row) => row.cve_id} caption={t('exposure.caption')} />
            <Pager page={page} perPage={perPage} total={data.total} onChange={setPaging} />
          </>
        )}
      </QueryView>
    </Card>
  );
}
