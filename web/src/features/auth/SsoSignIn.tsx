import { useState } from 'react';
import { Alert, Button, Stack, TextInput, Title } from '@mantine/core';
import { useSearchParams } from 'react-router';
import { useTranslation } from 'react-i18next';

/** The organisation last used for SSO in this browser: a tenant slug, not a secret (never a token). */
const ORG_KEY = 'controlgraph.sso-organisation';
const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const PROTOCOLS = ['oidc', 'saml'] as const;

function remembered(): string {
  try {
    return localStorage.getItem(ORG_KEY) ?? '';
  } catch {
    return '';
  }
}

/**
 * "Sign in with your organisation's SSO". The page cannot know the tenant before sign-in, so the user
 * names it (or a `?org=` link does). The login itself is a full-page navigation to the service's
 * login start with `?to=console`; a quick look first (no redirect followed) turns the service's 404
 * for an unknown organisation or protocol into a message here instead of a JSON page.
 */
export function SsoSignIn() {
  const { t } = useTranslation('auth');
  const [params] = useSearchParams();
  const [org, setOrg] = useState(() => params.get('org')?.trim().toLowerCase() || remembered());
  const [failed, setFailed] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const valid = SLUG.test(org);

  const go = async (protocol: (typeof PROTOCOLS)[number]) => {
    const url = `/api/v1/auth/${protocol}/${encodeURIComponent(org)}/login?to=console`;
    setFailed(null);
    setBusy(protocol);
    try {
      const probe = await fetch(url, { redirect: 'manual', credentials: 'same-origin' });
      if (probe.type !== 'opaqueredirect' && !probe.ok) {
        setFailed(org);
        return;
      }
    } catch {
      // A network failure here would fail the navigation too; let the browser say so.
    } finally {
      setBusy(null);
    }
    try {
      localStorage.setItem(ORG_KEY, org);
    } catch {
      // Storage may be off; the field just starts empty next time.
    }
    window.location.assign(url);
  };

  return (
    <Stack gap="sm" component="section" aria-labelledby="sso-title">
      <Title order={2} size="h5" id="sso-title">
        {t('sso.title')}
      </Title>
      {failed && (
        <Alert color="red" role="alert">
          {t('sso.failed', { org: failed })}
        </Alert>
      )}
      <TextInput
        label={t('sso.org')}
        description={t('sso.orgHelp')}
        value={org}
        onChange={(e) => setOrg(e.currentTarget.value.trim().toLowerCase())}
        error={org && !valid ? t('sso.orgInvalid') : undefined}
        autoComplete="organization"
      />
      <Stack gap="xs">
        {PROTOCOLS.map((protocol) => (
          <Button key={protocol} variant="default" disabled={!valid} loading={busy === protocol} onClick={() => void go(protocol)}>
            {t(`sso.${protocol}`)}
          </Button>
        ))}
      </Stack>
    </Stack>
  );
}
