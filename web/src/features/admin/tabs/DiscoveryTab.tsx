import { useState } from 'react';
import { Alert, Button, Checkbox, FileInput, Group, MultiSelect, SegmentedControl, Select, Stack, TagsInput, Text, TextInput, Title } from '@mantine/core';
import type { ColumnDef } from '@tanstack/react-table';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../../api/errors';
import { useUrlState } from '../../../ui/url-state';
import { notifySuccess } from '../../../ui/notify';
import { formatDate, formatNumber } from '../../../i18n';
import { useSession } from '../../../session/session';
import { PagedTable } from '../PagedTable';
import { useUrlPaging } from '../../../ui/url-paging';
import { JobStatusCell } from '../JobStatusCell';
import { DangerRowButton, notifyOutcome } from '../RowAction';
import { useCancelJob, useCreateJob, useDiscoveryJobs, type JobBody } from '../queries';

const STATUSES = ['pending', 'queued', 'running', 'completed', 'failed', 'cancelled'] as const;
const STATUS_COLORS: Record<string, string> = { pending: 'gray', queued: 'blue', running: 'blue', completed: 'teal', failed: 'red', cancelled: 'gray' };
const AWS_SERVICES = ['ec2', 'elbv2', 'elb', 'rds', 'lambda', 's3', 'iam', 'cloudtrail', 'kms', 'cloudwatch', 's3control'] as const;
const REGION = /^[a-z]{2}(-[a-z]+)+-\d$/;
const ACCOUNT = /^\d{12}$/;
const STATE_URI = /^s3:\/\/[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]\/.+$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface Job {
  id: string;
  name: string;
  plugins: string[];
  status: string;
  stats: { nodes_discovered: number; nodes_updated: number } | null;
  error: string | null;
  warnings: string[];
  created_by: string | null;
  created_at: string;
  completed_at: string | null;
}

/** Discovery jobs: create one from a Terraform state or an AWS account, follow it, cancel it. */
export function DiscoveryTab() {
  const { t } = useTranslation('admin');
  const { can } = useSession();
  const url = useUrlState();
  const { page, perPage } = useUrlPaging();
  const status = url.get('status');
  const jobs = useDiscoveryJobs({ page, per_page: perPage, ...(status ? { status } : {}) });
  const cancel = useCancelJob();
  const write = can('jobs:write');

  const columns: ColumnDef<Job>[] = [
    { id: 'name', header: t('discovery.name'), cell: ({ row }) => row.original.name },
    { id: 'plugins', header: t('discovery.plugin'), cell: ({ row }) => row.original.plugins.join(', ') },
    {
      id: 'status',
      header: t('discovery.status'),
      cell: ({ row }) => (
        <JobStatusCell
          label={t(`discovery.statuses.${row.original.status}`, { defaultValue: row.original.status })}
          color={STATUS_COLORS[row.original.status] ?? 'gray'}
          error={row.original.error}
        />
      ),
    },
    {
      id: 'nodes',
      header: t('discovery.nodes'),
      cell: ({ row }) => (row.original.stats ? formatNumber(row.original.stats.nodes_discovered) : '—'),
    },
    { id: 'created_at', header: t('discovery.created'), cell: ({ row }) => formatDate(row.original.created_at) },
    { id: 'completed_at', header: t('discovery.finished'), cell: ({ row }) => formatDate(row.original.completed_at) },
  ];
  if (write) {
    columns.push({
      id: 'actions',
      header: t('actions'),
      cell: ({ row }) =>
        ['pending', 'queued', 'running'].includes(row.original.status) ? (
          <DangerRowButton
            label={t('discovery.cancel')}
            ariaLabel={t('discovery.cancelJob', { name: row.original.name })}
            onClick={() => cancel.mutate(row.original.id, notifyOutcome(t('discovery.cancelled', { name: row.original.name })))}
          />
        ) : null,
    });
  }

  return (
    <Stack>
      <Title order={2} size="h3">
        {t('discovery.title')}
      </Title>
      {write && <CreateJob />}
      <Select
        label={t('discovery.statusFilter')}
        data={STATUSES.map((value) => ({ value, label: t(`discovery.statuses.${value}`) }))}
        value={status || null}
        onChange={(value) => url.set({ status: value })}
        clearable
        w={200}
      />
      <PagedTable query={jobs} columns={columns} getRowId={(job) => job.id} caption={t('discovery.caption')} empty={<Text c="dimmed">{t('discovery.empty')}</Text>} />
    </Stack>
  );
}

type Plugin = 'terraform-state' | 'aws';

function CreateJob() {
  const { t } = useTranslation('admin');
  const create = useCreateJob();
  const [name, setName] = useState('');
  const [plugin, setPlugin] = useState<Plugin>('terraform-state');
  const [source, setSource] = useState<'file' | 's3'>('file');
  const [file, setFile] = useState<File | null>(null);
  const [stateUri, setStateUri] = useState('');
  const [connectionId, setConnectionId] = useState('');
  const [regions, setRegions] = useState<string[]>([]);
  const [services, setServices] = useState<string[]>([]);
  const [accountId, setAccountId] = useState('');
  const [start, setStart] = useState(true);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [failure, setFailure] = useState<string | null>(null);

  const validate = (): Record<string, string> => {
    const found: Record<string, string> = {};
    if (!name.trim()) found.name = t('discovery.errors.name');
    if (connectionId && !UUID.test(connectionId)) found.connection = t('discovery.errors.connection');
    if (accountId && !ACCOUNT.test(accountId)) found.account = t('discovery.errors.account');
    if (plugin === 'terraform-state') {
      if (source === 'file' && !file) found.file = t('discovery.errors.file');
      if (source === 's3' && !STATE_URI.test(stateUri)) found.stateUri = t('discovery.errors.stateUri');
    } else if (regions.some((region) => !REGION.test(region))) found.regions = t('discovery.errors.regions');
    return found;
  };

  const submit = async () => {
    const found = validate();
    setErrors(found);
    setFailure(null);
    if (Object.keys(found).length) return;
    let body: JobBody;
    const connection = connectionId ? { connection_id: connectionId } : {};
    const account = accountId ? { account_id: accountId } : {};
    if (plugin === 'terraform-state') {
      const state = source === 'file' && file ? { state: await file.text() } : { state_uri: stateUri, ...connection };
      body = { name: name.trim(), plugins: ['terraform-state'], start, config: { 'terraform-state': { ...state, ...account } } };
    } else {
      body = {
        name: name.trim(),
        plugins: ['aws'],
        start,
        config: {
          aws: { ...(regions.length ? { regions } : {}), ...(services.length ? { services: services as (typeof AWS_SERVICES)[number][] } : {}), ...account, ...connection },
        },
      };
    }
    create.mutate(body, {
      onSuccess: (job) => {
        notifySuccess(t('discovery.createdJob', { name: job.name }));
        setName('');
        setFile(null);
      },
      onError: (error) => setFailure(errorMessage(error)),
    });
  };

  return (
    <form
      onSubmit={(event) => {
        event.preventDefault();
        void submit();
      }}
      noValidate
      aria-labelledby="new-job-title"
    >
      <Stack gap="xs" maw={640}>
        <Title order={3} size="h5" id="new-job-title">
          {t('discovery.createTitle')}
        </Title>
        {failure && (
          <Alert color="red" role="alert">
            {failure}
          </Alert>
        )}
        <TextInput label={t('discovery.name')} value={name} onChange={(e) => setName(e.currentTarget.value)} error={errors.name} required />
        <Select
          label={t('discovery.plugin')}
          data={[
            { value: 'terraform-state', label: t('discovery.plugins.terraform-state') },
            { value: 'aws', label: t('discovery.plugins.aws') },
          ]}
          value={plugin}
          onChange={(value) => value && setPlugin(value as Plugin)}
          allowDeselect={false}
        />
        {plugin === 'terraform-state' ? (
          <>
            <SegmentedControl
              aria-label={t('discovery.stateSource')}
              value={source}
              onChange={(value) => setSource(value as 'file' | 's3')}
              data={[
                { value: 'file', label: t('discovery.sourceFile') },
                { value: 's3', label: t('discovery.sourceS3') },
              ]}
            />
            {source === 'file' ? (
              <FileInput
                label={t('discovery.stateFile')}
                description={t('discovery.stateFileHelp')}
                value={file}
                onChange={setFile}
                accept=".tfstate,.json,application/json"
                error={errors.file}
                clearable
                clearButtonProps={{ 'aria-label': t('imports.clearFile') }}
              />
            ) : (
              <TextInput
                label={t('discovery.stateUri')}
                placeholder="s3://bucket/path/terraform.tfstate"
                value={stateUri}
                onChange={(e) => setStateUri(e.currentTarget.value.trim())}
                error={errors.stateUri}
              />
            )}
          </>
        ) : (
          <>
            <TagsInput label={t('discovery.regions')} description={t('discovery.regionsHelp')} value={regions} onChange={setRegions} error={errors.regions} />
            <MultiSelect label={t('discovery.services')} description={t('discovery.servicesHelp')} data={[...AWS_SERVICES]} value={services} onChange={setServices} />
          </>
        )}
        {(plugin === 'aws' || source === 's3') && (
          <TextInput
            label={t('discovery.connection')}
            description={t('discovery.connectionHelp')}
            value={connectionId}
            onChange={(e) => setConnectionId(e.currentTarget.value.trim())}
            error={errors.connection}
          />
        )}
        <TextInput
          label={t('discovery.account')}
          description={t('discovery.accountHelp')}
          value={accountId}
          onChange={(e) => setAccountId(e.currentTarget.value.trim())}
          error={errors.account}
        />
        <Checkbox label={t('discovery.start')} checked={start} onChange={(e) => setStart(e.currentTarget.checked)} />
        <Group>
          <Button type="submit" loading={create.isPending}>
            {t('discovery.create')}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
