import { Button, Group, Stack, Text, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { CopyText } from '../../../ui/CopyText';
import { QueryView } from '../../../ui/QueryState';
import { useTerraformPatch } from '../queries';
import { DiffView } from './DiffView';

/** Saves text as a file through a Blob and an object URL (the CSP allows blob:). */
function download(text: string, filename: string) {
  const href = URL.createObjectURL(new Blob([text], { type: 'text/x-diff' }));
  const anchor = document.createElement('a');
  anchor.href = href;
  anchor.download = filename;
  document.body.append(anchor);
  anchor.click();
  anchor.remove();
  setTimeout(() => URL.revokeObjectURL(href), 0);
}

/** The Terraform patch fixing the finding: the diff, its download, and the file to create first when generated. */
export function TerraformPatch({ findingId, ruleId }: { findingId: string; ruleId: string }) {
  const { t } = useTranslation('findings');
  const query = useTerraformPatch(findingId, true);
  return (
    <QueryView query={query}>
      {(patch) => (
        <Stack gap="sm">
          <Group justify="space-between">
            <Text size="sm">{t('patch.edits', { path: patch.path, strategy: t(`patch.strategy.${patch.strategy}`) })}</Text>
            <Button size="xs" onClick={() => download(patch.patch, `${ruleId.replace(/[^\w.-]+/g, '_')}.patch`)}>
              {t('patch.download')}
            </Button>
          </Group>
          {patch.base && (
            <Stack gap={4}>
              <Title order={3} size="h5">
                {t('patch.base', { path: patch.base.path })}
              </Title>
              <CopyText value={patch.base.content} />
            </Stack>
          )}
          <DiffView diff={patch.patch} label={t('patch.label')} />
          <Text size="xs" c="dimmed">
            {t('patch.apply')}
          </Text>
        </Stack>
      )}
    </QueryView>
  );
}
