import { useState, type ReactNode } from 'react';
import { Alert, Anchor, Badge, Button, Group, Image, Paper, Stack, Text, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { PageHeader } from '../../ui/PageHeader';
import { QueryView } from '../../ui/QueryState';
import { CopyText } from '../../ui/CopyText';
import { notifySuccess } from '../../ui/notify';
import { useSignOut } from '../../session/queries';
import { useSession } from '../../session/session';
import { CodeForm } from './CodeForm';
import { RecoveryCodes } from './RecoveryCodes';
import { useConfirmEnrollment, useDisableMfa, useMfaStatus, useRegenerateRecoveryCodes, useStartEnrollment } from './queries';

/** The user's own sign-in security: multi-factor enrollment, recovery codes, turning it off. */
export function SecurityPage() {
  const { t } = useTranslation('auth');
  const { me } = useSession();
  const status = useMfaStatus();
  // Codes the service returned just now: shown once, never fetched again.
  const [codes, setCodes] = useState<{ codes: string[]; signInAgain: boolean } | null>(null);

  return (
    <Stack maw={760}>
      <PageHeader title={t('security.title')} />
      {me.mfa_enrollment_required && (
        <Alert color="orange" title={t('security.heldTitle')} role="alert">
          {t('security.held')}
        </Alert>
      )}
      <QueryView query={status}>
        {(mfa) =>
          codes ? (
            <AfterCodes codes={codes.codes} signInAgain={codes.signInAgain} onDone={() => setCodes(null)} />
          ) : !mfa.password_sign_in ? (
            <Text>{t('security.ssoOnly')}</Text>
          ) : (
            <Stack>
              <Paper withBorder p="md">
                <Stack gap="xs">
                  <Group>
                    <Title order={2} size="h4">
                      {t('security.statusTitle')}
                    </Title>
                    <Badge color={mfa.totp_enabled ? 'teal' : 'gray'} variant="light" autoContrast>
                      {mfa.totp_enabled ? t('security.on') : t('security.off')}
                    </Badge>
                  </Group>
                  <Text>{mfa.totp_enabled ? t('security.enabled') : t('security.disabled')}</Text>
                  {mfa.totp_enabled && <Text size="sm">{t('security.recoveryLeft', { count: mfa.recovery_codes_left })}</Text>}
                  {mfa.required_by_tenant && <Text size="sm">{t('security.requiredByTenant')}</Text>}
                </Stack>
              </Paper>
              {mfa.totp_enabled ? (
                <Manage onCodes={(list) => setCodes({ codes: list, signInAgain: false })} />
              ) : (
                <Enroll pending={mfa.enrollment_pending} onCodes={(list, again) => setCodes({ codes: list, signInAgain: again })} />
              )}
            </Stack>
          )
        }
      </QueryView>
    </Stack>
  );
}

function AfterCodes({ codes, signInAgain, onDone }: { codes: string[]; signInAgain: boolean; onDone: () => void }) {
  const { t } = useTranslation('auth');
  const signOut = useSignOut();
  return (
    <Stack>
      <RecoveryCodes codes={codes} onDone={signInAgain ? undefined : onDone} />
      {signInAgain && (
        <Alert color="blue">
          <Stack gap="xs" align="flex-start">
            <Text size="sm">{t('security.signInAgain')}</Text>
            <Button onClick={() => signOut.mutate()} loading={signOut.isPending}>
              {t('security.signInAgainButton')}
            </Button>
          </Stack>
        </Alert>
      )}
    </Stack>
  );
}

function Enroll({ pending, onCodes }: { pending: boolean; onCodes: (codes: string[], signInAgain: boolean) => void }) {
  const { t } = useTranslation('auth');
  const start = useStartEnrollment();
  const confirm = useConfirmEnrollment();
  const enrollment = start.data;

  if (!enrollment) {
    return (
      <Stack align="flex-start">
        {pending && <Text size="sm">{t('security.pending')}</Text>}
        {start.error && (
          <Alert color="red" role="alert">
            {t('security.failed', { message: start.error.message })}
          </Alert>
        )}
        <Button onClick={() => start.mutate()} loading={start.isPending}>
          {t('security.enroll')}
        </Button>
      </Stack>
    );
  }
  return (
    <Paper withBorder p="md">
      <Stack>
        <Title order={2} size="h4">
          {t('security.enroll')}
        </Title>
        <Text>{t('security.step1')}</Text>
        <Image src={enrollment.qr_data_url} alt={t('security.qrAlt')} w={200} h={200} fit="contain" />
        <Text size="sm">{t('security.manual')}</Text>
        <CopyText value={enrollment.secret} label={t('security.secretLabel')} />
        <Anchor href={enrollment.otpauth_uri} size="sm">
          {t('security.openLink')}
        </Anchor>
        <Text>{t('security.step2')}</Text>
        <CodeForm
          label={t('security.code')}
          submitLabel={t('security.confirm')}
          busy={confirm.isPending}
          onSubmit={async (code) => {
            const result = await confirm.mutateAsync(code);
            notifySuccess(t('security.confirmed'));
            onCodes(result.recovery_codes, result.sign_in_again === true);
          }}
        />
        <Button variant="subtle" onClick={() => start.mutate()} loading={start.isPending} style={{ alignSelf: 'flex-start' }}>
          {t('security.startOver')}
        </Button>
      </Stack>
    </Paper>
  );
}

/** One action on an enrolled authenticator: its heading, what it does, and its code form. */
function CodeCard({ title, help, children }: { title: string; help: string; children: ReactNode }) {
  return (
    <Paper withBorder p="md">
      <Stack gap="xs">
        <Title order={2} size="h4">
          {title}
        </Title>
        <Text size="sm">{help}</Text>
        {children}
      </Stack>
    </Paper>
  );
}

function Manage({ onCodes }: { onCodes: (codes: string[]) => void }) {
  const { t } = useTranslation('auth');
  const regenerate = useRegenerateRecoveryCodes();
  const disable = useDisableMfa();
  return (
    <Stack>
      <CodeCard title={t('security.regenerateTitle')} help={t('security.regenerateHelp')}>
        <CodeForm
          label={t('security.regenerateCode')}
          submitLabel={t('security.regenerate')}
          busy={regenerate.isPending}
          onSubmit={async (code) => onCodes((await regenerate.mutateAsync(code)).recovery_codes)}
        />
      </CodeCard>
      <CodeCard title={t('security.disableTitle')} help={t('security.disableHelp')}>
        <CodeForm
          label={t('security.disableCode')}
          submitLabel={t('security.disable')}
          color="red"
          busy={disable.isPending}
          onSubmit={async (code) => {
            await disable.mutateAsync(code);
            notifySuccess(t('security.disabledDone'));
          }}
        />
      </CodeCard>
    </Stack>
  );
}
