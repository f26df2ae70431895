import { useState, type FormEvent } from 'react';
import { Alert, Anchor, Button, CloseButton, Group, Select, Stack, Text, Textarea, TextInput } from '@mantine/core';
import { Link, useNavigate, useParams } from 'react-router';
import { useTranslation } from 'react-i18next';
import { ApiError, errorMessage } from '../../api/errors';
import { useSession } from '../../session/session';
import { notifySuccess } from '../../ui/notify';
import { PageHeader } from '../../ui/PageHeader';
import { QueryError, QueryView } from '../../ui/QueryState';
import { SEVERITIES } from '../../ui/SeverityBadge';
import { FRAMEWORKS, useRule, useSaveRule, type Framework, type Rule, type RuleInput } from './queries';

/** Create (/rules/new) or edit (/rules/:ruleId/edit) a custom rule. */
export function RuleFormPage() {
  const { ruleId } = useParams();
  const rule = useRule(ruleId);
  const { t } = useTranslation('rules');
  const { can } = useSession();
  if (!can('rules:write')) return <QueryError error={new ApiError(403, 'FORBIDDEN', 'rules:write')} />;
  if (!ruleId) return <RuleForm />;
  return <QueryView query={rule}>{(data) => (data.builtin ? <Alert color="yellow">{t('detail.readOnly')}</Alert> : <RuleForm rule={data} />)}</QueryView>;
}

type Mapping = { framework: Framework; control_id: string };

/** Which field an API refusal is about, from the service's message (rules-service.ts). */
function fieldOf(message: string): 'condition' | 'finding_title' | 'control_id' | 'id' | null {
  if (message.startsWith('condition does not compile')) return 'condition';
  if (message.startsWith('finding_title')) return 'finding_title';
  if (message.startsWith('unknown control')) return 'control_id';
  if (/custom rule ".*" already exists|id of a built-in rule/.test(message)) return 'id';
  return null;
}

function RuleForm({ rule }: { rule?: Rule }) {
  const { t } = useTranslation('rules');
  const { t: common } = useTranslation();
  const navigate = useNavigate();
  const save = useSaveRule(rule?.id);
  const [values, setValues] = useState({
    id: rule?.id ?? '',
    title: rule?.title ?? '',
    description: rule?.description ?? '',
    severity: rule?.severity ?? 'MEDIUM',
    resource_type: rule?.resource_type ?? '',
    framework: rule?.framework ?? ('nist-800-53' as Framework),
    control_id: rule?.control_id ?? '',
    condition: rule?.condition ?? '',
    finding_title: rule && rule.finding_title !== `Fails: ${rule.title}` ? rule.finding_title : '',
    remediation: rule?.remediation.summary ?? '',
  });
  const [mappings, setMappings] = useState<Mapping[]>(rule?.framework_mappings ?? []);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [formError, setFormError] = useState<string | null>(null);
  const change = (field: keyof typeof values) => (value: string) => {
    setValues((current) => ({ ...current, [field]: value }));
    setErrors((current) => ({ ...current, [field]: '' }));
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const required = (['id', 'title', 'description', 'resource_type', 'control_id', 'condition', 'remediation'] as const).filter((f) => values[f].trim() === '');
    if (required.length > 0) {
      setErrors(Object.fromEntries(required.map((f) => [f, t('form.required')])));
      return;
    }
    setFormError(null);
    const input: RuleInput = {
      id: values.id.trim(),
      title: values.title.trim(),
      description: values.description.trim(),
      severity: values.severity,
      resource_type: values.resource_type.trim(),
      framework: values.framework,
      control_id: values.control_id.trim(),
      framework_mappings: mappings.filter((m) => m.control_id.trim() !== '').map((m) => ({ framework: m.framework, control_id: m.control_id.trim() })),
      condition: values.condition,
      finding_title: values.finding_title.trim() || null,
      // Steps and grouping are kept as they are: the form edits the summary.
      remediation: rule ? { ...rule.remediation, summary: values.remediation.trim() } : values.remediation.trim(),
      ...(rule ? { group_by: rule.group_by } : {}),
    };
    save.mutate(input, {
      onSuccess: (saved) => {
        notifySuccess(rule ? t('form.saved', { id: saved.id }) : t('form.created', { id: saved.id }));
        void navigate(`/rules/${encodeURIComponent(saved.id)}`);
      },
      onError: (error) => {
        const message = errorMessage(error);
        const field = error instanceof ApiError && error.status < 500 ? fieldOf(message) : null;
        if (field) setErrors((current) => ({ ...current, [field]: message }));
        else setFormError(message);
      },
    });
  };

  const frameworkOptions = FRAMEWORKS.map((f) => ({ value: f, label: t(`frameworks.${f}`) }));
  return (
    <>
      <Anchor component={Link} to={rule ? `/rules/${encodeURIComponent(rule.id)}` : '/rules'} size="sm">
        {t('detail.back')}
      </Anchor>
      <PageHeader title={rule ? t('editTitle', { id: rule.id }) : t('newTitle')} />
      <form onSubmit={submit} noValidate>
        <Stack gap="sm" maw={820}>
          {formError && (
            <Alert color="red" title={t('form.failed')} role="alert">
              {formError}
            </Alert>
          )}
          {!rule && (
            <TextInput
              label={t('form.id')}
              description={t('form.idHelp')}
              value={values.id}
              onChange={(e) => change('id')(e.currentTarget.value)}
              error={errors.id || undefined}
              required
            />
          )}
          <TextInput
            label={t('form.title')}
            description={t('form.titleHelp')}
            value={values.title}
            onChange={(e) => change('title')(e.currentTarget.value)}
            error={errors.title || undefined}
            required
          />
          <Textarea
            label={t('form.description')}
            value={values.description}
            onChange={(e) => change('description')(e.currentTarget.value)}
            error={errors.description || undefined}
            autosize
            minRows={2}
            required
          />
          <Group grow align="flex-start">
            <Select
              label={t('form.severity')}
              data={SEVERITIES.map((s) => ({ value: s.toUpperCase(), label: common(`severity.${s}`) }))}
              value={values.severity}
              onChange={(value) => value && change('severity')(value)}
              allowDeselect={false}
            />
            <TextInput
              label={t('form.resourceType')}
              description={t('form.resourceTypeHelp')}
              value={values.resource_type}
              onChange={(e) => change('resource_type')(e.currentTarget.value)}
              error={errors.resource_type || undefined}
              required
            />
          </Group>
          <Group grow align="flex-start">
            <Select label={t('form.framework')} data={frameworkOptions} value={values.framework} onChange={(value) => value && change('framework')(value)} allowDeselect={false} />
            <TextInput
              label={t('form.controlId')}
              value={values.control_id}
              onChange={(e) => change('control_id')(e.currentTarget.value)}
              error={errors.control_id || undefined}
              required
            />
          </Group>
          <fieldset style={{ border: 'none', padding: 0, margin: 0 }}>
            <legend>
              <Text size="sm" fw={500}>
                {t('form.mappings')}
              </Text>
            </legend>
            <Stack gap="xs">
              {mappings.map((m, index) => (
                <Group key={index} align="flex-end" wrap="nowrap">
                  <Select
                    label={t('form.mappingFramework', { n: index + 1 })}
                    data={frameworkOptions}
                    value={m.framework}
                    onChange={(value) => value && setMappings((current) => current.map((x, i) => (i === index ? { ...x, framework: value as Framework } : x)))}
                    allowDeselect={false}
                  />
                  <TextInput
                    label={t('form.mappingControl', { n: index + 1 })}
                    value={m.control_id}
                    onChange={(e) => {
                      const control = e.currentTarget.value;
                      setMappings((current) => current.map((x, i) => (i === index ? { ...x, control_id: control } : x)));
                    }}
                  />
                  <CloseButton aria-label={t('form.removeMapping', { n: index + 1 })} onClick={() => setMappings((current) => current.filter((_, i) => i !== index))} mb={6} />
                </Group>
              ))}
              <Button
                variant="subtle"
                size="xs"
                style={{ alignSelf: 'flex-start' }}
                onClick={() => setMappings((current) => [...current, { framework: 'nist-800-53', control_id: '' }])}
              >
                {t('form.addMapping')}
              </Button>
            </Stack>
          </fieldset>
          <Textarea
            label={t('form.condition')}
            description={t('form.conditionHelp')}
            value={values.condition}
            onChange={(e) => change('condition')(e.currentTarget.value)}
            error={errors.condition || undefined}
            autosize
            minRows={3}
            required
            styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)' } }}
            spellCheck={false}
          />
          <TextInput
            label={t('form.findingTitle')}
            description={t('form.findingTitleHelp')}
            value={values.finding_title}
            onChange={(e) => change('finding_title')(e.currentTarget.value)}
            error={errors.finding_title || undefined}
          />
          <Textarea
            label={t('form.remediation')}
            value={values.remediation}
            onChange={(e) => change('remediation')(e.currentTarget.value)}
            error={errors.remediation || undefined}
            autosize
            minRows={2}
            required
          />
          <Group>
            <Button type="submit" loading={save.isPending}>
              {rule ? t('form.save') : t('form.create')}
            </Button>
            <Button variant="default" component={Link} to={rule ? `/rules/${encodeURIComponent(rule.id)}` : '/rules'}>
              {t('form.cancel')}
            </Button>
          </Group>
        </Stack>
      </form>
    </>
  );
}
