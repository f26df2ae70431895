import { useState } from 'react';
import { Alert, Stack, Switch, Text, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../../api/errors';
import { QueryView } from '../../../ui/QueryState';
import { notifySuccess } from '../../../ui/notify';
import { useSession } from '../../../session/session';
import { useSetTenantMfa, useTenantMfaSetting } from '../queries';

/** The tenant's requirement of multi-factor sign-in for password accounts (tenant-admins change it). */
export function TenantSecurityTab() {
  const { t } = useTranslation('admin');
  const { can } = useSession();
  const setting = useTenantMfaSetting();
  const save = useSetTenantMfa();
  const [error, setError] = useState<string | null>(null);
  return (
    <Stack maw={640}>
      <Title order={2} size="h3">
        {t('security.title')}
      </Title>
      <Text size="sm">{t('security.help')}</Text>
      {error && (
        <Alert color="red" role="alert">
          {error}
        </Alert>
      )}
      <QueryView query={setting}>
        {(data) => (
          <Switch
            label={t('security.required')}
            checked={data.mfa_required}
            disabled={!can('tenant:update') || save.isPending}
            onChange={(event) => {
              const required = event.currentTarget.checked;
              setError(null);
              save.mutate(required, {
                onSuccess: () => notifySuccess(required ? t('security.turnedOn') : t('security.turnedOff')),
                onError: (failure) => setError(errorMessage(failure)),
              });
            }}
          />
        )}
      </QueryView>
    </Stack>
  );
}
