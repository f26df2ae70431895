import { useState } from 'react';
import {
  Alert,
  Badge,
  Button,
  Group,
  List,
  Paper,
  PasswordInput,
  SegmentedControl,
  Select,
  Stack,
  Switch,
  Table,
  TagsInput,
  Text,
  TextInput,
  Textarea,
  Title,
} from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { ApiError, errorMessage } from '../../../api/errors';
import { CopyText } from '../../../ui/CopyText';
import { QueryView } from '../../../ui/QueryState';
import { notifyError, notifySuccess } from '../../../ui/notify';
import { formatDate } from '../../../i18n';
import { useSession } from '../../../session/session';
import { useDeleteSso, useSaveSso, useSsoConfig, useTestSso, type SsoBody } from '../queries';

const JIT_ROLES = ['read-only', 'auditor', 'security-analyst', 'tenant-admin'];
const CHECK_COLORS: Record<string, string> = { ok: 'teal', warning: 'yellow', failed: 'red' };

type Config = NonNullable<ReturnType<typeof useSsoConfig>['data']>;

/** The tenant's single sign-on: what to register at the IdP, a connection test, and the form to set it. */
export function SsoTab() {
  const { t } = useTranslation('admin');
  const { can } = useSession();
  const config = useSsoConfig();
  const [editing, setEditing] = useState(false);
  const write = can('tenant:update');

  return (
    <Stack maw={900}>
      <Title order={2} size="h3">
        {t('sso.title')}
      </Title>
      <QueryView query={config}>
        {(data) =>
          editing || (!data && write) ? (
            <SsoForm current={data} onDone={() => setEditing(false)} />
          ) : data ? (
            <SsoView config={data} onEdit={write ? () => setEditing(true) : undefined} />
          ) : (
            <Text c="dimmed">{t('sso.none')}</Text>
          )
        }
      </QueryView>
    </Stack>
  );
}

function SsoView({ config, onEdit }: { config: Config; onEdit?: () => void }) {
  const { t } = useTranslation('admin');
  const test = useTestSso();
  const remove = useDeleteSso();
  const rows: [string, string | null][] = [
    [t('sso.protocol'), config.protocol.toUpperCase()],
    [t('sso.provider'), config.provider],
    [t('sso.issuer'), config.issuer],
    [t('sso.clientId'), config.client_id],
    [t('sso.scopes'), config.protocol === 'oidc' && config.scopes.length ? config.scopes.join(' ') : null],
    [t('sso.metadataUrl'), config.metadata_url],
    [t('sso.metadataInline'), config.metadata_inline ? t('sso.metadataPasted') : null],
    [t('sso.idpEntityId'), config.idp_entity_id],
    [t('sso.defaultRole'), config.default_role],
    [t('sso.allowSha1'), config.allow_sha1 ? t('sso.yes') : null],
    [t('sso.serviceUrl'), config.service_url],
    [t('sso.appRedirectUrl'), config.app_redirect_url],
    [t('sso.updated'), formatDate(config.updated_at)],
  ];
  const urls: [string, string | null][] = [
    [t('sso.loginUrl'), `${config.login_url}?to=console`],
    [t('sso.redirectUri'), config.redirect_uri],
    [t('sso.acsUrl'), config.acs_url],
    [t('sso.spEntityId'), config.sp_entity_id],
    [t('sso.spMetadataUrl'), config.sp_metadata_url],
  ];
  return (
    <Stack>
      <Table withTableBorder variant="vertical" layout="fixed">
        <caption className="visually-hidden">{t('sso.caption')}</caption>
        <Table.Tbody>
          {rows
            .filter(([, value]) => value)
            .map(([label, value]) => (
              <Table.Tr key={label}>
                <Table.Th w={220}>{label}</Table.Th>
                <Table.Td style={{ wordBreak: 'break-all' }}>{value}</Table.Td>
              </Table.Tr>
            ))}
        </Table.Tbody>
      </Table>
      <Title order={3} size="h5">
        {t('sso.registerTitle')}
      </Title>
      {urls
        .filter(([, value]) => value)
        .map(([label, value]) => (
          <Stack gap={2} key={label}>
            <Text size="sm" fw={600}>
              {label}
            </Text>
            <CopyText value={value!} label={label} />
          </Stack>
        ))}
      {config.idp_certificates.length > 0 && (
        <List size="sm">
          {config.idp_certificates.map((cert) => (
            <List.Item key={cert.fingerprint_sha256}>{t('sso.certificate', { subject: cert.subject, until: formatDate(cert.not_after) })}</List.Item>
          ))}
        </List>
      )}
      <Group>
        <Button onClick={() => test.mutate()} loading={test.isPending} variant="light">
          {t('sso.test')}
        </Button>
        {onEdit && (
          <Button onClick={onEdit} variant="default">
            {t('sso.edit')}
          </Button>
        )}
        {onEdit && (
          <Button
            color="red"
            variant="subtle"
            loading={remove.isPending}
            onClick={() => {
              if (!window.confirm(t('sso.confirmRemove'))) return;
              remove.mutate(undefined, { onSuccess: () => notifySuccess(t('sso.removed')), onError: (error) => notifyError(errorMessage(error)) });
            }}
          >
            {t('sso.remove')}
          </Button>
        )}
      </Group>
      {test.error && (
        <Alert color="red" role="alert">
          {errorMessage(test.error)}
        </Alert>
      )}
      {test.data && (
        <Paper withBorder p="md" role="status">
          <Stack gap="xs">
            <Text fw={600}>{test.data.ok ? t('sso.testOk') : t('sso.testFailed')}</Text>
            {test.data.checks.map((check) => (
              <Group key={check.check} gap="xs" wrap="nowrap" align="flex-start">
                <Badge color={CHECK_COLORS[check.status] ?? 'gray'} variant="light" autoContrast miw={80}>
                  {t(`sso.checkStatus.${check.status}`, { defaultValue: check.status })}
                </Badge>
                <Text size="sm">{check.message}</Text>
              </Group>
            ))}
          </Stack>
        </Paper>
      )}
    </Stack>
  );
}

/** Fields of the SSO body, each with its refusal shown under it (the service names them in `details.errors`). */
type SsoField =
  'provider' | 'issuer' | 'client_id' | 'client_secret' | 'scopes' | 'metadata_url' | 'metadata_xml' | 'default_role' | 'app_redirect_url' | 'allow_sha1' | 'service_url';

function fieldErrorsOf(failure: unknown): Partial<Record<SsoField, string>> | null {
  if (!(failure instanceof ApiError) || failure.status >= 500) return null;
  const errors = (failure.details as { errors?: Record<string, string> } | null)?.errors;
  if (!errors || typeof errors !== 'object') return null;
  return Object.fromEntries(Object.entries(errors).map(([field, message]) => [field, `${field} ${message}`]));
}

function SsoForm({ current, onDone }: { current: Config | null; onDone: () => void }) {
  const { t } = useTranslation('admin');
  const save = useSaveSso();
  const [protocol, setProtocol] = useState<'oidc' | 'saml'>(current?.protocol ?? 'oidc');
  const [provider, setProvider] = useState(current && current.protocol === 'oidc' ? current.provider : '');
  const [issuer, setIssuer] = useState(current?.issuer ?? '');
  const [clientId, setClientId] = useState(current?.client_id ?? '');
  const [clientSecret, setClientSecret] = useState('');
  const [scopes, setScopes] = useState<string[]>(current?.protocol === 'oidc' && current.scopes.length ? current.scopes : ['openid', 'email', 'profile']);
  const [metadataUrl, setMetadataUrl] = useState(current?.metadata_url ?? '');
  const [metadataXml, setMetadataXml] = useState('');
  const [allowSha1, setAllowSha1] = useState(current?.allow_sha1 ?? false);
  const [defaultRole, setDefaultRole] = useState<string>(current?.default_role ?? 'read-only');
  const [serviceUrl, setServiceUrl] = useState(current?.service_url ?? '');
  const [appRedirectUrl, setAppRedirectUrl] = useState(current?.app_redirect_url ?? '');
  const [error, setError] = useState<string | null>(null);
  const [fieldErrors, setFieldErrors] = useState<Partial<Record<SsoField, string>>>({});
  const err = (field: SsoField) => fieldErrors[field] || undefined;

  return (
    <form
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        setError(null);
        setFieldErrors({});
        const shared = {
          default_role: defaultRole,
          // Cleared, the redirect is removed (null); the service URL then defaults to this request's origin.
          app_redirect_url: appRedirectUrl.trim() || null,
          ...(serviceUrl.trim() ? { service_url: serviceUrl.trim() } : {}),
        };
        const body: SsoBody =
          protocol === 'saml'
            ? {
                provider: 'saml',
                ...shared,
                allow_sha1: allowSha1,
                ...(metadataUrl.trim() ? { metadata_url: metadataUrl.trim() } : {}),
                ...(metadataXml ? { metadata_xml: metadataXml } : {}),
              }
            : {
                provider: provider.trim() || 'oidc',
                ...shared,
                issuer: issuer.trim(),
                client_id: clientId.trim(),
                scopes,
                ...(clientSecret ? { client_secret: clientSecret } : {}),
              };
        save.mutate(body, {
          onSuccess: () => {
            notifySuccess(t('sso.saved'));
            onDone();
          },
          onError: (failure) => {
            const byField = fieldErrorsOf(failure);
            // Refusals by field appear under their fields; the alert above says so (or is the refusal itself).
            if (byField) setFieldErrors(byField);
            setError(byField ? t('sso.notSaved') : errorMessage(failure));
          },
        });
      }}
    >
      <Stack gap="sm" maw={640}>
        <Title order={3} size="h5">
          {current ? t('sso.editTitle') : t('sso.setUpTitle')}
        </Title>
        {error && (
          <Alert color="red" role="alert">
            {error}
          </Alert>
        )}
        <SegmentedControl
          aria-label={t('sso.protocol')}
          value={protocol}
          onChange={(value) => setProtocol(value as 'oidc' | 'saml')}
          data={[
            { value: 'oidc', label: t('sso.oidc') },
            { value: 'saml', label: t('sso.saml') },
          ]}
        />
        {protocol === 'oidc' ? (
          <>
            <TextInput
              label={t('sso.provider')}
              description={t('sso.providerHelp')}
              value={provider}
              onChange={(e) => setProvider(e.currentTarget.value)}
              error={err('provider')}
            />
            <TextInput label={t('sso.issuer')} value={issuer} onChange={(e) => setIssuer(e.currentTarget.value)} withAsterisk error={err('issuer')} />
            <TextInput label={t('sso.clientId')} value={clientId} onChange={(e) => setClientId(e.currentTarget.value)} withAsterisk error={err('client_id')} />
            <PasswordInput
              label={t('sso.clientSecret')}
              description={current?.client_secret_set ? t('sso.clientSecretKept') : undefined}
              value={clientSecret}
              onChange={(e) => setClientSecret(e.currentTarget.value)}
              autoComplete="off"
              error={err('client_secret')}
            />
            <TagsInput label={t('sso.scopes')} description={t('sso.scopesHelp')} value={scopes} onChange={setScopes} error={err('scopes')} />
          </>
        ) : (
          <>
            <TextInput label={t('sso.metadataUrl')} value={metadataUrl} onChange={(e) => setMetadataUrl(e.currentTarget.value)} error={err('metadata_url')} />
            <Textarea
              label={t('sso.metadataXml')}
              description={current?.metadata_inline ? `${t('sso.metadataXmlHelp')} ${t('sso.metadataInlineKept')}` : t('sso.metadataXmlHelp')}
              value={metadataXml}
              onChange={(e) => setMetadataXml(e.currentTarget.value)}
              autosize
              minRows={3}
              maxRows={10}
              error={err('metadata_xml')}
            />
            <Switch
              label={t('sso.allowSha1')}
              description={t('sso.allowSha1Help')}
              checked={allowSha1}
              onChange={(e) => setAllowSha1(e.currentTarget.checked)}
              error={err('allow_sha1')}
            />
          </>
        )}
        <Select
          label={t('sso.defaultRole')}
          data={JIT_ROLES}
          value={defaultRole}
          onChange={(value) => value && setDefaultRole(value)}
          allowDeselect={false}
          error={err('default_role')}
        />
        <TextInput
          label={t('sso.serviceUrl')}
          description={t('sso.serviceUrlHelp')}
          value={serviceUrl}
          onChange={(e) => setServiceUrl(e.currentTarget.value)}
          error={err('service_url')}
        />
        <TextInput
          label={t('sso.appRedirectUrl')}
          description={t('sso.appRedirectUrlHelp')}
          value={appRedirectUrl}
          onChange={(e) => setAppRedirectUrl(e.currentTarget.value)}
          error={err('app_redirect_url')}
        />
        <Group>
          <Button type="submit" loading={save.isPending}>
            {t('common:save')}
          </Button>
          {current && (
            <Button variant="default" onClick={onDone}>
              {t('common:cancel')}
            </Button>
          )}
        </Group>
      </Stack>
    </form>
  );
}
