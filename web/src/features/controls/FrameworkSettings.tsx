import { useState } from 'react';
import { Button, Paper, Stack, Switch, Text, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../api/errors';
import { formatNumber } from '../../i18n';
import { notifyError, notifySuccess } from '../../ui/notify';
import { QueryView } from '../../ui/QueryState';
import { useComplianceSettings, useUpdateFrameworks } from './queries';

/** Which frameworks the tenant audits (PUT /settings/compliance: tenant:update, checked by the caller). */
export function FrameworkSettings() {
  const { t } = useTranslation('controls');
  const settings = useComplianceSettings(true);
  const update = useUpdateFrameworks();
  const [changes, setChanges] = useState<Record<string, boolean>>({});

  return (
    <Paper withBorder p="md" maw={640}>
      <Title order={2} size="h4">
        {t('settings.title')}
      </Title>
      <Text size="sm" mb="md">
        {t('settings.description')}
      </Text>
      <QueryView query={settings}>
        {(data) => {
          const changed = data.frameworks.filter((framework) => framework.id in changes && changes[framework.id] !== framework.enabled);
          const save = () => {
            if (changed.length === 0) return notifySuccess(t('settings.noChanges'));
            update.mutate(
              changed.map((framework) => ({ id: framework.id, enabled: changes[framework.id]! })),
              {
                onSuccess: () => {
                  setChanges({});
                  notifySuccess(t('settings.saved'));
                },
                onError: (error) => notifyError(errorMessage(error)),
              },
            );
          };
          return (
            <Stack gap="md">
              {data.frameworks.map((framework) => (
                <Switch
                  key={framework.id}
                  label={t('settings.toggle', { name: framework.name })}
                  description={t('settings.detail', { version: framework.version, controls: formatNumber(framework.controls), rules: formatNumber(framework.rules) })}
                  checked={changes[framework.id] ?? framework.enabled}
                  onChange={(event) => {
                    const checked = event.currentTarget.checked;
                    setChanges((current) => ({ ...current, [framework.id]: checked }));
                  }}
                />
              ))}
              <Button onClick={save} loading={update.isPending} disabled={changed.length === 0} w="fit-content">
                {t('save', { ns: 'common' })}
              </Button>
            </Stack>
          );
        }}
      </QueryView>
    </Paper>
  );
}
