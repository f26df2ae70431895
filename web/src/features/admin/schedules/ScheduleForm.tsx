import { useMemo, useState } from 'react';
import { Alert, Button, Checkbox, Group, MultiSelect, NumberInput, SegmentedControl, Select, Stack, Text, TextInput } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { ApiError, errorMessage } from '../../../api/errors';
import { useEnabledFrameworks } from '../../controls/queries';
import { useDiscoveryJobs } from '../queries';
import { useCreateSchedule, useUpdateSchedule, type Schedule, type ScheduleKind } from '../schedule-queries';

type Timing = 'interval' | 'cron';
/** The form's fields a refusal can name. */
type FieldName = 'name' | 'kind' | 'target.job_id' | 'target.frameworks' | 'cron' | 'interval_seconds' | 'time_zone';
const FIELDS: readonly FieldName[] = ['name', 'kind', 'target.job_id', 'target.frameworks', 'cron', 'interval_seconds', 'time_zone'];

function zones(): string[] {
  const supported = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
  return supported.includes('UTC') ? supported : ['UTC', ...supported];
}

const asField = (value: unknown): FieldName | null => {
  if (typeof value !== 'string') return null;
  // Ajv's paths are JSON pointers (/target/job_id); the service's own refusals name the field (target.job_id).
  const name = value
    .replace(/^\//, '')
    .replaceAll('/', '.')
    .replace(/^body\./, '');
  return (FIELDS as readonly string[]).includes(name) ? (name as FieldName) : null;
};

/**
 * A refusal of the service, by the field it names: `details.field`, `details.fields`, Ajv's
 * `details.errors[].path`, or the message's own "field: …" prefix. What names no field stays whole.
 */
export function fieldErrors(error: unknown): { fields: Partial<Record<FieldName, string>>; rest: string | null } {
  const message = errorMessage(error);
  if (!(error instanceof ApiError) || error.status !== 400) return { fields: {}, rest: message };
  const details = (error.details ?? {}) as { field?: unknown; fields?: unknown; errors?: unknown };
  const fields: Partial<Record<FieldName, string>> = {};
  const named = [details.field, ...(Array.isArray(details.fields) ? details.fields : [])].map(asField).filter((f): f is FieldName => f !== null);
  const text = message.replace(/^[a-z_.]+: /, '');
  for (const field of named) fields[field] = text;
  if (Array.isArray(details.errors)) {
    for (const issue of details.errors as { path?: unknown; message?: unknown }[]) {
      const field = asField(issue.path);
      if (field && typeof issue.message === 'string') fields[field] ??= issue.message;
    }
  }
  if (Object.keys(fields).length === 0) {
    const prefix = asField(/^([a-z_.]+): /.exec(message)?.[1]);
    if (prefix) fields[prefix] = text;
  }
  return Object.keys(fields).length ? { fields, rest: null } : { fields, rest: message };
}

/**
 * Create or edit a schedule: name, what it runs (a discovery job repeated, or an audit of some or all
 * frameworks), when (a cron expression in a time zone, or an interval), enabled. The service checks
 * everything; its refusals appear at the field they name.
 */
export function ScheduleForm({ schedule, kinds, onDone }: { schedule: Schedule | null; kinds: ScheduleKind[]; onDone: (saved: Schedule) => void }) {
  const { t } = useTranslation('admin');
  const create = useCreateSchedule();
  const update = useUpdateSchedule();
  const [name, setName] = useState(schedule?.name ?? '');
  const [kind, setKind] = useState<ScheduleKind>(schedule?.kind ?? kinds[0] ?? 'audit');
  const [jobId, setJobId] = useState<string | null>(schedule?.target.job_id ?? null);
  const [frameworks, setFrameworks] = useState<string[]>(schedule?.target.frameworks ?? []);
  const [timing, setTiming] = useState<Timing>(schedule?.cron ? 'cron' : 'interval');
  const [cron, setCron] = useState(schedule?.cron ?? '');
  const [minutes, setMinutes] = useState<number | string>(schedule?.interval_seconds ? Math.round(schedule.interval_seconds / 60) : 60);
  const [timeZone, setTimeZone] = useState(schedule?.time_zone ?? 'UTC');
  const [enabled, setEnabled] = useState(schedule?.enabled ?? true);
  const [errors, setErrors] = useState<Partial<Record<FieldName, string>>>({});
  const [failure, setFailure] = useState<string | null>(null);
  const jobs = useDiscoveryJobs({ page: 1, per_page: 100 });
  const enabledFrameworks = useEnabledFrameworks();
  const zoneList = useMemo(zones, []);

  const jobOptions = (jobs.data?.items ?? []).map((job) => ({ value: job.id, label: `${job.name} (${job.plugins.join(', ')})` }));
  if (jobId && !jobOptions.some((option) => option.value === jobId)) jobOptions.push({ value: jobId, label: jobId });
  const frameworkOptions = [...new Set([...(enabledFrameworks.data ?? []), ...frameworks])];

  const submit = () => {
    const found: Partial<Record<FieldName, string>> = {};
    if (!name.trim()) found.name = t('schedules.form.errors.name');
    if (kind === 'discovery' && !jobId) found['target.job_id'] = t('schedules.form.errors.job');
    if (timing === 'cron' && !cron.trim()) found.cron = t('schedules.form.errors.cron');
    if (timing === 'interval' && (typeof minutes !== 'number' || !Number.isFinite(minutes))) found.interval_seconds = t('schedules.form.errors.interval');
    setErrors(found);
    setFailure(null);
    if (Object.keys(found).length) return;
    const target = kind === 'discovery' ? { job_id: jobId ?? undefined } : { frameworks };
    const when = timing === 'cron' ? { cron: cron.trim(), time_zone: timeZone } : { interval_seconds: Math.round(Number(minutes) * 60), time_zone: timeZone };
    const refused = (error: unknown) => {
      const { fields, rest } = fieldErrors(error);
      setErrors(fields);
      setFailure(rest);
    };
    if (schedule) update.mutate({ id: schedule.id, body: { name: name.trim(), target, ...when, enabled } }, { onSuccess: onDone, onError: refused });
    else create.mutate({ name: name.trim(), kind, target, ...when, enabled }, { onSuccess: onDone, onError: refused });
  };

  return (
    <form
      onSubmit={(event) => {
        event.preventDefault();
        submit();
      }}
      noValidate
    >
      <Stack gap="sm">
        {failure && (
          <Alert color="red" role="alert">
            {failure}
          </Alert>
        )}
        <TextInput label={t('schedules.name')} value={name} onChange={(e) => setName(e.currentTarget.value)} error={errors.name} required data-autofocus />
        <Select
          label={t('schedules.kind')}
          data={(schedule ? [schedule.kind] : kinds).map((value) => ({ value, label: t(`schedules.kinds.${value}`) }))}
          value={kind}
          onChange={(value) => value && setKind(value as ScheduleKind)}
          disabled={schedule !== null}
          description={schedule ? t('schedules.form.kindFixed') : undefined}
          error={errors.kind}
          allowDeselect={false}
        />
        {kind === 'discovery' ? (
          <Select
            label={t('schedules.form.job')}
            description={t('schedules.form.jobHelp')}
            data={jobOptions}
            value={jobId}
            onChange={setJobId}
            error={errors['target.job_id']}
            nothingFoundMessage={t('schedules.form.noJobs')}
            searchable
            required
          />
        ) : (
          <MultiSelect
            label={t('schedules.form.frameworks')}
            description={t('schedules.form.frameworksHelp')}
            data={frameworkOptions}
            value={frameworks}
            onChange={setFrameworks}
            error={errors['target.frameworks']}
            clearable
          />
        )}
        <Stack gap={4}>
          <Text size="sm" fw={500} id="schedule-timing-label">
            {t('schedules.timing')}
          </Text>
          <SegmentedControl
            aria-labelledby="schedule-timing-label"
            value={timing}
            onChange={(value) => setTiming(value as Timing)}
            data={[
              { value: 'interval', label: t('schedules.form.interval') },
              { value: 'cron', label: t('schedules.form.cron') },
            ]}
          />
        </Stack>
        {timing === 'cron' ? (
          <>
            <TextInput
              label={t('schedules.form.cronLabel')}
              description={t('schedules.form.cronHelp')}
              placeholder="0 3 * * 1-5"
              value={cron}
              onChange={(e) => setCron(e.currentTarget.value)}
              error={errors.cron}
              required
              styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)' } }}
            />
            <Select
              label={t('schedules.form.timeZone')}
              description={t('schedules.form.timeZoneHelp')}
              data={zoneList.includes(timeZone) ? zoneList : [timeZone, ...zoneList]}
              value={timeZone}
              onChange={(value) => value && setTimeZone(value)}
              error={errors.time_zone}
              searchable
              allowDeselect={false}
              limit={100}
            />
          </>
        ) : (
          <NumberInput
            label={t('schedules.form.minutes')}
            description={t('schedules.form.minutesHelp')}
            value={minutes}
            onChange={setMinutes}
            min={1}
            allowDecimal={false}
            error={errors.interval_seconds}
            required
          />
        )}
        <Checkbox label={t('schedules.enabled')} checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} />
        <Group justify="flex-end">
          <Button type="submit" loading={create.isPending || update.isPending}>
            {schedule ? t('schedules.form.save') : t('schedules.form.create')}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
