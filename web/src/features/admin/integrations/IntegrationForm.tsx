import { useState } from 'react';
import { Alert, Button, Fieldset, Group, Modal, MultiSelect, PasswordInput, Select, Stack, Switch, TagsInput, TextInput, Textarea } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { ApiError, errorMessage } from '../../../api/errors';
import { notifySuccess } from '../../../ui/notify';
import { useCreateIntegration, useUpdateIntegration } from '../queries';
import { EVENT_SUGGESTIONS, fieldOfMessage, INTEGRATION_KINDS, KIND_FIELDS, SMTP_FIELDS, COMMON_FIELDS, type FieldDef, type IntegrationKind } from './kinds';
import { fieldsOf, initialValues, parseHeaders, toConfig, type FieldValue, type Integration, type Values } from './form-values';

/**
 * Create or change an integration of any type, in a dialog. The fields follow the type; secrets are
 * write-only (left empty, the stored value is kept); the service's refusal appears under the field it
 * names, anything else above the form.
 */
export function IntegrationFormModal({ integration, onClose }: { integration: Integration | null; onClose: () => void }) {
  const { t } = useTranslation('admin');
  return (
    <Modal
      opened
      onClose={onClose}
      size="lg"
      closeButtonProps={{ 'aria-label': t('common:close') }}
      title={integration ? t('integrations.editTitle', { name: integration.name }) : t('integrations.createTitle')}
    >
      <IntegrationForm integration={integration} onDone={onClose} />
    </Modal>
  );
}

function IntegrationForm({ integration, onDone }: { integration: Integration | null; onDone: () => void }) {
  const { t } = useTranslation('admin');
  const create = useCreateIntegration();
  const update = useUpdateIntegration();
  const editing = integration !== null;
  const hadSmtp = Boolean(integration?.config.smtp);
  const [kind, setKind] = useState<IntegrationKind>((integration?.type as IntegrationKind | undefined) ?? 'webhook');
  const [name, setName] = useState(integration?.name ?? '');
  const [active, setActive] = useState(integration ? integration.status === 'active' : true);
  const [smtp, setSmtp] = useState(hadSmtp);
  const [values, setValues] = useState<Values>(() => initialValues(kind, integration));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [refusal, setRefusal] = useState<string | null>(null);

  const set = (key: string) => (value: FieldValue) => {
    setValues((current) => ({ ...current, [key]: value }));
    setErrors((current) => ({ ...current, [key]: '' }));
  };

  /** What the form can tell before asking the service: required fields and the headers' lines. */
  function check(): Record<string, string> {
    const found: Record<string, string> = {};
    if (!name.trim()) found.name = t('integrations.errors.required');
    for (const field of fieldsOf(kind, smtp)) {
      const value = values[field.key];
      const empty = Array.isArray(value) ? value.length === 0 : typeof value === 'string' && !value.trim();
      // A stored secret is kept when left empty, so it is required only when creating.
      if (field.required && empty && !(editing && field.kind === 'secret')) found[field.key] = t('integrations.errors.required');
      if (field.kind === 'headers') {
        const parsed = parseHeaders(value as string);
        if (!parsed.ok) found[field.key] = t('integrations.errors.headerLine', { line: parsed.line });
      }
    }
    return found;
  }

  function submit() {
    setRefusal(null);
    const found = check();
    setErrors(found);
    if (Object.values(found).some(Boolean)) return;
    const config = toConfig(kind, values, { editing, smtp, hadSmtp });
    const onError = (failure: unknown) => {
      const message = errorMessage(failure);
      const field =
        failure instanceof ApiError && failure.status < 500
          ? fieldOfMessage(
              message,
              fieldsOf(kind, true).map((f) => f.key),
            )
          : null;
      if (field) setErrors((current) => ({ ...current, [field]: message }));
      else if (failure instanceof ApiError && /^(body\/)?name\b|integration name/.test(message)) setErrors((current) => ({ ...current, name: message }));
      else setRefusal(message);
    };
    if (integration) {
      update.mutate(
        { id: integration.id, body: { name: name.trim(), status: active ? 'active' : 'disabled', config } },
        { onSuccess: () => (notifySuccess(t('integrations.saved', { name: name.trim() })), onDone()), onError },
      );
    } else {
      create.mutate({ type: kind, name: name.trim(), config }, { onSuccess: () => (notifySuccess(t('integrations.createdDone')), onDone()), onError });
    }
  }

  const field = (def: FieldDef) => (
    <ConfigField key={def.key} def={def} value={values[def.key]!} error={errors[def.key] || undefined} onChange={set(def.key)} integration={integration} />
  );

  return (
    <form
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        submit();
      }}
    >
      <Stack gap="sm">
        {refusal && (
          <Alert color="red" role="alert">
            {refusal}
          </Alert>
        )}
        <Select
          label={t('integrations.type')}
          data={INTEGRATION_KINDS.map((value) => ({ value, label: t(`integrations.kinds.${value}`) }))}
          value={kind}
          disabled={editing}
          allowDeselect={false}
          onChange={(value) => {
            if (!value) return;
            setKind(value as IntegrationKind);
            setValues(initialValues(value as IntegrationKind, null));
            setErrors({});
          }}
        />
        <TextInput
          label={t('integrations.name')}
          value={name}
          onChange={(e) => (setName(e.currentTarget.value), setErrors((c) => ({ ...c, name: '' })))}
          error={errors.name || undefined}
          withAsterisk
        />
        {editing && <Switch label={t('integrations.active')} description={t('integrations.activeHelp')} checked={active} onChange={(e) => setActive(e.currentTarget.checked)} />}
        <Fieldset legend={t('integrations.destination')}>
          <Stack gap="sm">{KIND_FIELDS[kind].map(field)}</Stack>
        </Fieldset>
        {kind === 'email' && (
          <Fieldset legend={t('integrations.smtpLegend')}>
            <Stack gap="sm">
              <Switch label={t('integrations.ownSmtp')} description={t('integrations.ownSmtpHelp')} checked={smtp} onChange={(e) => setSmtp(e.currentTarget.checked)} />
              {smtp && SMTP_FIELDS.map(field)}
            </Stack>
          </Fieldset>
        )}
        <Fieldset legend={t('integrations.whatToSend')}>
          <Stack gap="sm">{COMMON_FIELDS.map(field)}</Stack>
        </Fieldset>
        <Group justify="flex-end">
          <Button variant="default" onClick={onDone}>
            {t('common:cancel')}
          </Button>
          <Button type="submit" loading={create.isPending || update.isPending}>
            {editing ? t('common:save') : t('integrations.create')}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

/** One configuration field, drawn by its kind. */
function ConfigField({
  def,
  value,
  error,
  onChange,
  integration,
}: {
  def: FieldDef;
  value: FieldValue;
  error?: string;
  onChange: (value: FieldValue) => void;
  integration: Integration | null;
}) {
  const { t } = useTranslation('admin');
  const label = t(`integrations.fields.${def.key}`);
  const help = t(`integrations.help.${def.key}`, { defaultValue: '' }) || undefined;
  const common = { label, error, withAsterisk: def.required && !(integration && def.kind === 'secret') };
  switch (def.kind) {
    case 'secret': {
      // What the service shows of a stored secret: a secret URL's origin, nothing of the others.
      const shown = integration ? integration.config[def.key] : undefined;
      const kept = integration ? t('integrations.secretKept') + (typeof shown === 'string' ? ` (${shown})` : '') : undefined;
      return (
        <PasswordInput
          {...common}
          description={[help, kept].filter(Boolean).join(' ') || undefined}
          placeholder={def.placeholder}
          value={value as string}
          onChange={(e) => onChange(e.currentTarget.value)}
          autoComplete="off"
        />
      );
    }
    case 'headers': {
      const names = integration && typeof integration.config.headers === 'object' && integration.config.headers ? Object.keys(integration.config.headers) : [];
      const description = [t('integrations.headersHelp'), names.length ? t('integrations.headersKept', { names: names.join(', ') }) : ''].filter(Boolean).join(' ');
      return (
        <Textarea
          {...common}
          description={description}
          value={value as string}
          onChange={(e) => onChange(e.currentTarget.value)}
          autosize
          minRows={2}
          maxRows={6}
          placeholder="Authorization: Bearer …"
        />
      );
    }
    case 'list':
      return def.options ? (
        <MultiSelect {...common} description={help} data={[...def.options]} value={value as string[]} onChange={onChange} clearable />
      ) : (
        <TagsInput
          {...common}
          description={help ?? t('integrations.listHelp')}
          data={def.key === 'events' ? EVENT_SUGGESTIONS : []}
          value={value as string[]}
          onChange={onChange}
          placeholder={def.placeholder}
          clearable
        />
      );
    case 'boolean':
      return <Switch label={label} description={help} checked={value as boolean} onChange={(e) => onChange(e.currentTarget.checked)} />;
    case 'select':
      return (
        <Select
          {...common}
          description={help}
          data={[...(def.options ?? [])]}
          value={(value as string) || null}
          onChange={(next) => onChange(next ?? '')}
          placeholder={def.placeholder}
          clearable={!def.required}
        />
      );
    default:
      return (
        <TextInput
          {...common}
          description={help}
          type={def.kind === 'number' ? 'number' : 'text'}
          min={def.min}
          max={def.max}
          placeholder={def.placeholder}
          value={value as string}
          onChange={(e) => onChange(e.currentTarget.value)}
        />
      );
  }
}
