import { Button, Group, Stack, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { formatDay } from '../../i18n';
import type { Assessment, AssessmentEvidence } from './queries';

type Question = Assessment['questions'][number];

/**
 * A question's answer as the reviewer reads it: options by their labels, yes/no and dates in the
 * reader's language, files as buttons that open them in the preview beside the answers.
 */
export function AnswerView({
  question,
  answer,
  files,
  selected,
  onSelect,
}: {
  question: Question;
  answer: string | undefined;
  files: AssessmentEvidence[];
  selected: string | null;
  onSelect: (evidenceId: string) => void;
}) {
  const { t } = useTranslation('assessments');
  if (question.type === 'file_upload') {
    if (files.length === 0)
      return (
        <Text size="sm" c="dimmed">
          {t('review.noAnswer')}
        </Text>
      );
    return (
      <Group gap="xs">
        {files.map((file) => (
          <Button key={file.id} size="xs" variant={file.id === selected ? 'filled' : 'default'} onClick={() => onSelect(file.id)} aria-pressed={file.id === selected}>
            {file.filename}
          </Button>
        ))}
      </Group>
    );
  }
  if (!answer)
    return (
      <Text size="sm" c="dimmed">
        {t('review.noAnswer')}
      </Text>
    );
  const label = (value: string) => question.options?.find((option) => option.value === value)?.label ?? value;
  switch (question.type) {
    case 'yes_no':
      return (
        <Text size="sm" fw={500}>
          {answer === 'yes' ? t('review.yes') : t('review.no')}
        </Text>
      );
    case 'single_choice':
      return <Text size="sm">{label(answer)}</Text>;
    case 'multi_choice':
      return (
        <Stack gap={2}>
          {answer.split(',').map((value) => (
            <Text key={value} size="sm">
              {label(value)}
            </Text>
          ))}
        </Stack>
      );
    case 'date':
      return <Text size="sm">{formatDay(answer)}</Text>;
    case 'number':
      return <Text size="sm">{question.unit ? `${answer} ${question.unit}` : answer}</Text>;
    default:
      return (
        <Text size="sm" style={{ whiteSpace: 'pre-wrap' }}>
          {answer}
        </Text>
      );
  }
}
