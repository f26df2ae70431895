import { useState, type FormEvent } from 'react';
import { Alert, Badge, Button, CloseButton, Group, Select, Stack, Switch, TagsInput, Text, Textarea } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { ApiError, errorMessage } from '../../api/errors';
import { ControlPicker } from './ControlPicker';
import { QUESTION_TYPES, type Question, type QuestionInput, type QuestionType } from './queries';
import { questionFieldOf, type QuestionField } from './refusals';

const CHOICE: QuestionType[] = ['single_choice', 'multi_choice'];

/** An option's value from its label (the API wants lower-case letters, digits and underscores). */
function valueOf(label: string, index: number): string {
  const slug = label
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 60);
  return slug || `option_${index + 1}`;
}

/** Adds (no `question`) or edits a question: text, type, required, options, accepted types and control mappings. */
export function QuestionForm({
  question,
  saving,
  onSave,
  onCancel,
}: {
  question?: Question;
  saving: boolean;
  onSave: (input: QuestionInput) => Promise<unknown>;
  onCancel: () => void;
}) {
  const { t } = useTranslation('questionnaires');
  const [text, setText] = useState(question?.text ?? '');
  const [type, setType] = useState<QuestionType>(question?.type ?? 'yes_no');
  const [required, setRequired] = useState(question?.required ?? false);
  const [options, setOptions] = useState((question?.options ?? []).map((o) => o.label).join('\n'));
  const [acceptedTypes, setAcceptedTypes] = useState<string[]>(question?.accepted_types ?? ['.pdf']);
  const [mappings, setMappings] = useState<string[]>(question?.control_mappings ?? []);
  const [errors, setErrors] = useState<Partial<Record<QuestionField, string>>>({});
  const [formError, setFormError] = useState<string | null>(null);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!text.trim()) return setErrors({ text: t('form.missing') });
    setErrors({});
    setFormError(null);
    const kept = new Map((question?.options ?? []).map((o) => [o.label, o.value]));
    const labels = options
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
    const input: QuestionInput = {
      text: text.trim(),
      type,
      required,
      ...(question?.help ? { help: question.help } : {}),
      ...(CHOICE.includes(type) ? { options: labels.map((label, i) => ({ label, value: kept.get(label) ?? valueOf(label, i) })) } : {}),
      ...(type === 'file_upload' ? { accepted_types: acceptedTypes } : {}),
      // The form does not edit a number's bounds and unit; an edit keeps them.
      ...(type === 'number' && question?.type === 'number'
        ? { min: question.min, max: question.max, ...(question.unit ? { unit: question.unit as QuestionInput['unit'] } : {}) }
        : {}),
      control_mappings: mappings,
    };
    onSave(input).catch((error: unknown) => {
      const message = errorMessage(error);
      const field = error instanceof ApiError && error.status < 500 ? questionFieldOf(message) : null;
      if (field) setErrors({ [field]: message });
      else setFormError(message);
    });
  };

  return (
    <form onSubmit={submit} noValidate>
      <Stack gap="sm">
        {formError && (
          <Alert color="red" title={t('form.failed')} role="alert">
            {formError}
          </Alert>
        )}
        <Textarea label={t('form.text')} value={text} onChange={(e) => setText(e.currentTarget.value)} error={errors.text} autosize minRows={2} required />
        <Group align="flex-end">
          <Select
            label={t('form.type')}
            data={QUESTION_TYPES.map((value) => ({ value, label: t(`types.${value}`) }))}
            value={type}
            onChange={(value) => value && setType(value as QuestionType)}
            allowDeselect={false}
            error={errors.type}
            comboboxProps={{ withinPortal: true }}
          />
          <Switch label={t('form.required')} checked={required} onChange={(e) => setRequired(e.currentTarget.checked)} mb={8} />
        </Group>
        {CHOICE.includes(type) && (
          <Textarea
            label={t('form.options')}
            description={t('form.optionsHelp')}
            value={options}
            onChange={(e) => setOptions(e.currentTarget.value)}
            error={errors.options}
            autosize
            minRows={2}
          />
        )}
        {type === 'file_upload' && (
          <TagsInput label={t('form.acceptedTypes')} description={t('form.acceptedTypesHelp')} value={acceptedTypes} onChange={setAcceptedTypes} error={errors.accepted_types} />
        )}
        <fieldset style={{ border: 'none', padding: 0, margin: 0 }}>
          <legend>
            <Text size="sm" fw={500}>
              {t('form.mappings')}
            </Text>
          </legend>
          <Stack gap="xs">
            <Group gap="xs" data-testid="question-mappings">
              {mappings.length === 0 && (
                <Text size="sm" c="dimmed">
                  {t('form.noMappings')}
                </Text>
              )}
              {mappings.map((m) => (
                <Badge
                  key={m}
                  variant="light"
                  c="dark"
                  rightSection={<CloseButton size="xs" aria-label={t('form.removeMapping', { mapping: m })} onClick={() => setMappings(mappings.filter((x) => x !== m))} />}
                >
                  {m}
                </Badge>
              ))}
            </Group>
            <ControlPicker taken={mappings} onPick={(m) => setMappings([...mappings, m])} />
            {errors.control_mappings && (
              <Text size="sm" c="red.8" role="alert">
                {errors.control_mappings}
              </Text>
            )}
          </Stack>
        </fieldset>
        <Group justify="flex-end">
          <Button variant="default" onClick={onCancel}>
            {t('form.cancel')}
          </Button>
          <Button type="submit" loading={saving}>
            {t('form.save')}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
