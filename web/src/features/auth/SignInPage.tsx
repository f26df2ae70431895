import { useState } from 'react';
import { Alert, Button, Center, Divider, Paper, PasswordInput, Stack, TextInput, Title } from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { useNavigate, useSearchParams } from 'react-router';
import { useTranslation } from 'react-i18next';
import { api } from '../../api/client';
import { meKey } from '../../session/queries';
import { SsoSignIn } from './SsoSignIn';

/** Where to go after signing in: only a path of this console, never another site. */
function safeNext(next: string | null): string {
  return next && next.startsWith('/') && !next.startsWith('//') ? next : '/';
}

export function SignInPage() {
  const { t } = useTranslation('auth');
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const client = useQueryClient();
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [otp, setOtp] = useState('');
  const [needsOtp, setNeedsOtp] = useState(false);
  const [message, setMessage] = useState<string | null>(params.get('expired') ? t('expired') : null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: React.FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setMessage(null);
    try {
      const body = { username, password, ...(needsOtp && otp ? { otp } : {}) };
      const result = await api.POST('/api/v1/auth/session', { body });
      if (result.response.ok && result.data) {
        client.setQueryData(meKey, result.data);
        void navigate(safeNext(params.get('next')), { replace: true });
        return;
      }
      const code = (result.error as { error?: { code?: string; message?: string } } | undefined)?.error?.code;
      if (code === 'MFA_REQUIRED') {
        setNeedsOtp(true);
        setMessage(t('mfaRequired'));
      } else if (code === 'MFA_INVALID') {
        setMessage(t('mfaInvalid'));
      } else if (result.response.status === 429) {
        setMessage(t('throttled'));
      } else if (result.response.status === 401) {
        setMessage(t('wrongPassword'));
      } else {
        setMessage((result.error as { error?: { message?: string } } | undefined)?.error?.message ?? result.response.statusText);
      }
    } finally {
      setBusy(false);
    }
  };

  return (
    <Center mih="100vh" p="md" component="main">
      <Paper withBorder shadow="sm" p="xl" w={420} maw="100%">
        <form onSubmit={(event) => void submit(event)} noValidate>
          <Stack>
            <Title order={1} size="h3">
              {t('title')}
            </Title>
            {message && (
              <Alert color={needsOtp && !busy ? 'blue' : 'red'} role="alert">
                {message}
              </Alert>
            )}
            <TextInput label={t('username')} autoComplete="username" value={username} onChange={(e) => setUsername(e.currentTarget.value)} required autoFocus />
            <PasswordInput label={t('password')} autoComplete="current-password" value={password} onChange={(e) => setPassword(e.currentTarget.value)} required />
            {needsOtp && (
              <TextInput
                label={t('otp')}
                description={t('otpHelp')}
                autoComplete="one-time-code"
                inputMode="text"
                value={otp}
                onChange={(e) => setOtp(e.currentTarget.value.trim())}
                required
                autoFocus
              />
            )}
            <Button type="submit" loading={busy} disabled={!username || !password}>
              {busy ? t('signingIn') : t('submit')}
            </Button>
          </Stack>
        </form>
        {!needsOtp && (
          <>
            <Divider my="lg" label={t('sso.divider')} labelPosition="center" />
            <SsoSignIn />
          </>
        )}
      </Paper>
    </Center>
  );
}
