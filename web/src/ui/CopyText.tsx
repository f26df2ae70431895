import { Button, CopyButton, Code, Group } from '@mantine/core';
import { useTranslation } from 'react-i18next';

/** A value (a command, an API key) with a copy button. */
export function CopyText({ value, label }: { value: string; label?: string }) {
  const { t } = useTranslation();
  return (
    <Group gap="xs" wrap="nowrap" align="flex-start">
      <Code block style={{ flex: 1, whiteSpace: 'pre-wrap', wordBreak: 'break-all' }} aria-label={label}>
        {value}
      </Code>
      <CopyButton value={value}>
        {({ copied, copy }) => (
          <Button size="xs" variant="light" onClick={copy} color={copied ? 'teal' : undefined}>
            {copied ? t('copied') : t('copy')}
          </Button>
        )}
      </CopyButton>
    </Group>
  );
}
