import { Alert, Button, CopyButton, Group, List, Paper, Stack, Text, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';

/** Saves text as a file the browser downloads (no server round trip: the codes exist only here). */
function download(name: string, text: string) {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/plain' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** The recovery codes the service returns once: shown with copy and download, never fetched again. */
export function RecoveryCodes({ codes, onDone }: { codes: string[]; onDone?: () => void }) {
  const { t } = useTranslation('auth');
  const text = `${codes.join('\n')}\n`;
  return (
    <Paper withBorder p="md">
      <Stack gap="sm">
        <Title order={2} size="h4">
          {t('security.codesTitle')}
        </Title>
        <Alert color="yellow">{t('security.codesHelp')}</Alert>
        <List aria-label={t('security.codesLabel')} listStyleType="none" ff="monospace" spacing={4}>
          {codes.map((code) => (
            <List.Item key={code}>
              <Text ff="monospace" data-testid="recovery-code">
                {code}
              </Text>
            </List.Item>
          ))}
        </List>
        <Group>
          <CopyButton value={text}>
            {({ copied, copy }) => (
              <Button variant="light" onClick={copy} color={copied ? 'teal' : undefined}>
                {copied ? t('common:copied') : t('security.copyCodes')}
              </Button>
            )}
          </CopyButton>
          <Button variant="light" onClick={() => download('controlgraph-recovery-codes.txt', text)}>
            {t('security.downloadCodes')}
          </Button>
          {onDone && <Button onClick={onDone}>{t('security.codesDone')}</Button>}
        </Group>
      </Stack>
    </Paper>
  );
}
