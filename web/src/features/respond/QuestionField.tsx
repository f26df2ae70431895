import { Checkbox, Group, Radio, Stack, Textarea, TextInput } from '@mantine/core';
import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import type { Question } from './respondent-api';

/** Short inputs (a date, a number) stay narrow; their label keeps the question's whole width. */
const NARROW = { wrapper: { maxWidth: 260 } };

/**
 * One question's input by its type, the answer as the API takes it (a string: "yes"/"no", an option
 * value, option values joined by commas, a date YYYY-MM-DD, a decimal number, text). File questions
 * are answered by their uploads (FileEvidence), not here.
 */
export function QuestionField({
  question,
  value,
  onChange,
  readOnly,
  error,
  label,
}: {
  question: Question;
  value: string;
  onChange: (answer: string) => void;
  readOnly: boolean;
  error?: string;
  label: ReactNode;
}) {
  const { t } = useTranslation('respond');
  // The label says "(required)" in words; Mantine's asterisk beside it would say it twice.
  const common = { label, description: question.help, error, required: question.required, withAsterisk: false, disabled: readOnly };
  switch (question.type) {
    case 'yes_no':
      return (
        <Radio.Group {...common} value={value} onChange={onChange}>
          <Group mt="xs">
            <Radio value="yes" label={t('yes')} disabled={readOnly} />
            <Radio value="no" label={t('no')} disabled={readOnly} />
          </Group>
        </Radio.Group>
      );
    case 'single_choice':
      return (
        <Radio.Group {...common} value={value} onChange={onChange}>
          <Stack mt="xs" gap="xs">
            {(question.options ?? []).map((option) => (
              <Radio key={option.value} value={option.value} label={option.label} disabled={readOnly} />
            ))}
          </Stack>
        </Radio.Group>
      );
    case 'multi_choice':
      return (
        <Checkbox.Group {...common} value={value ? value.split(',') : []} onChange={(values) => onChange(values.join(','))}>
          <Stack mt="xs" gap="xs">
            {(question.options ?? []).map((option) => (
              <Checkbox key={option.value} value={option.value} label={option.label} disabled={readOnly} />
            ))}
          </Stack>
        </Checkbox.Group>
      );
    case 'text_long':
      return <Textarea {...common} autosize minRows={3} value={value} onChange={(event) => onChange(event.currentTarget.value)} />;
    case 'date':
      return <TextInput {...common} type="date" value={value} onChange={(event) => onChange(event.currentTarget.value)} styles={NARROW} />;
    case 'number':
      return (
        <TextInput
          {...common}
          inputMode="decimal"
          value={value}
          onChange={(event) => onChange(event.currentTarget.value.trim())}
          rightSection={question.unit && t(`units.${question.unit}`, { defaultValue: question.unit })}
          rightSectionWidth={question.unit ? 80 : undefined}
          styles={NARROW}
        />
      );
    default:
      return <TextInput {...common} value={value} onChange={(event) => onChange(event.currentTarget.value.replace(/[\r\n]/g, ' '))} />;
  }
}
