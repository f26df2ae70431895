import { generate } from 'otplib';
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { addUser, call } from '../harness/identity.js';
import { testDns } from '../integrations/helpers.js';
import { idpMetadata, makeKeyPair } from '../sso/saml-idp.js';
import { chromiumPath } from './harness/chromium.js';
import { useConsole } from './harness/use-console.js';
import { expectAccessible, signIn } from './harness/pages.js';

/**
 * Administration forms: integrations of every kind (secrets write-only, the service's refusal under
 * its field), every field of single sign-on, the invitations list, and an admin's reset of a
 * member's multi-factor sign-in. Targets that do not resolve are accepted at creation (testDns).
 */
const web = useConsole({ config: { outboundLookup: testDns } });
const admin = () => web.app.tenant.users['tenant-admin'];
const api = (url: string, init: { method?: 'GET' | 'POST' | 'PUT' | 'DELETE'; payload?: unknown; token?: string } = {}) =>
  call(web.app.t.app, init.token ?? admin().token, { method: init.method ?? 'GET', url: `/api/v1/tenants/${web.app.tenant.id}${url}`, payload: init.payload as never });

/** Picks an option of a Mantine Select by its label. */
async function choose(page: Page, label: string, option: string) {
  await page.getByLabel(label, { exact: true }).filter({ visible: true }).click();
  await page.getByRole('option', { name: option, exact: true }).click();
}

describe.runIf(chromiumPath())('administration forms', () => {
  it('creates a Jira integration (the refusal under its field), changes it without showing the token, and sends a test', { timeout: 180_000 }, async () => {
    const { context, page } = await signIn(web.browser, web.app, admin().username);
    await page.goto('/admin/integrations');
    await page.getByRole('button', { name: 'Add integration' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add an integration' });
    await dialog.waitFor();
    await choose(page, 'Type', 'Jira');
    // Required fields are checked before asking the service.
    await dialog.getByRole('button', { name: 'Add integration' }).click();
    await expect.poll(() => dialog.getByText('Required.').count()).toBeGreaterThan(2);

    await dialog.getByRole('textbox', { name: 'Name' }).fill('Security tickets');
    await dialog.getByRole('textbox', { name: 'Jira URL' }).fill('https://jira.example.com');
    await dialog.getByRole('textbox', { name: 'Project key' }).fill('sec');
    await dialog.getByLabel('API token').fill('jira-token-4711');
    await dialog.getByRole('button', { name: 'Add integration' }).click();
    // The service's refusal names config.project_key: it appears under that field.
    const keyError = dialog.getByText('config.project_key must be a Jira project key (e.g. SEC)');
    await keyError.waitFor();
    expect(await dialog.getByRole('textbox', { name: 'Project key' }).getAttribute('aria-invalid')).toBe('true');
    await expectAccessible(page);
    await page.screenshot({ path: '/tmp/admin-integration-form.png', fullPage: true });
    await dialog.getByRole('textbox', { name: 'Project key' }).fill('SEC');
    await dialog.getByRole('button', { name: 'Add integration' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await page.getByRole('cell', { name: 'Security tickets', exact: true }).waitFor();
    await expect
      .poll(() =>
        page
          .getByRole('row', { name: /Security tickets/ })
          .getByText('Jira')
          .isVisible(),
      )
      .toBe(true);

    // Changing it: the token is not shown (the field is empty and says it is kept).
    await page.getByRole('button', { name: 'Change the integration Security tickets' }).click();
    const edit = page.getByRole('dialog', { name: 'Change the integration Security tickets' });
    await edit.waitFor();
    expect(await edit.getByLabel('API token').inputValue()).toBe('');
    expect(await page.content()).not.toContain('jira-token-4711');
    await edit.getByRole('textbox', { name: 'Issue type' }).fill('Bug');
    await expectAccessible(page);
    await edit.getByRole('button', { name: 'Save' }).click();
    await edit.waitFor({ state: 'hidden' });
    const [stored] = (await api('/integrations?type=jira')).json().items;
    expect(stored.config).toMatchObject({ base_url: 'https://jira.example.com', project_key: 'SEC', issue_type: 'Bug' });
    expect(JSON.stringify(stored)).not.toContain('jira-token-4711');

    // Test and delivery history keep working.
    await page.getByRole('button', { name: 'Send a test event to Security tickets' }).click();
    await page.getByRole('heading', { name: 'Deliveries of Security tickets' }).waitFor();
    await page.waitForURL(/integration=/);
    await page.mouse.move(0, 0);
    await expectAccessible(page);
    await context.close();
  });

  it('creates e-mail (with its own SMTP server), Slack, Teams, PagerDuty, GitHub and webhook integrations', { timeout: 180_000 }, async () => {
    const { context, page } = await signIn(web.browser, web.app, admin().username);
    await page.goto('/admin/integrations');
    const add = async (kind: string, name: string, fill: (dialog: ReturnType<Page['getByRole']>) => Promise<void>) => {
      await page.getByRole('button', { name: 'Add integration' }).click();
      const dialog = page.getByRole('dialog', { name: 'Add an integration' });
      await dialog.waitFor();
      await choose(page, 'Type', kind);
      await dialog.getByRole('textbox', { name: 'Name' }).fill(name);
      await fill(dialog);
      await dialog.getByRole('button', { name: 'Add integration' }).click();
      await dialog.waitFor({ state: 'hidden' });
      await page.getByRole('cell', { name, exact: true }).waitFor();
    };
    await add('E-mail', 'Mail to security', async (dialog) => {
      // A TagsInput's input (its listbox carries the same label; the asterisk is part of the label's text).
      const to = dialog.getByLabel(/^To/).first();
      await to.fill('sec@example.com');
      await to.press('Enter');
      await dialog.getByRole('switch', { name: 'Use our own SMTP server' }).check({ force: true });
      await dialog.getByRole('textbox', { name: 'SMTP host' }).fill('smtp.example.com');
      await dialog.getByLabel('SMTP password').fill('smtp-secret-1');
      await dialog.getByRole('textbox', { name: 'From address' }).fill('cg@example.com');
      await expectAccessible(page);
    });
    await add('Slack', 'Slack channel', async (dialog) => dialog.getByLabel(/^URL/).first().fill('https://hooks.slack.com/services/T0/B0/secretpart'));
    await add('Microsoft Teams', 'Teams channel', async (dialog) => dialog.getByLabel(/^URL/).first().fill('https://teams.example.com/workflows/secretpart'));
    await add('PagerDuty', 'On call', async (dialog) => dialog.getByLabel('Routing key').fill('pd-routing-key-1'));
    await add('GitHub issues', 'GitHub', async (dialog) => {
      await dialog.getByRole('textbox', { name: 'Repository' }).fill('acme/security');
      await dialog.getByLabel('Access token').fill('ghp-secret-1');
    });
    await add('Webhook', 'SIEM', async (dialog) => {
      await dialog.getByRole('textbox', { name: 'URL' }).fill('https://siem.example.com/hook');
      await dialog.getByLabel('Signing secret').fill('signing-secret-1');
      await dialog.getByRole('textbox', { name: 'Headers' }).fill('Authorization: Bearer header-secret-1');
    });
    const items = (await api('/integrations?per_page=100')).json().items as Array<{ name: string; type: string; config: Record<string, unknown> }>;
    expect(items.find((i) => i.name === 'Mail to security')?.config).toMatchObject({ to: ['sec@example.com'], smtp: { host: 'smtp.example.com', from: 'cg@example.com' } });
    expect(items.find((i) => i.name === 'Slack channel')?.config.url).toBe('https://hooks.slack.com/…');
    expect(items.find((i) => i.name === 'SIEM')?.config.headers).toEqual({ Authorization: '********' });
    const content = await page.content();
    for (const secret of ['smtp-secret-1', 'secretpart', 'pd-routing-key-1', 'ghp-secret-1', 'signing-secret-1', 'header-secret-1']) expect(content).not.toContain(secret);

    // Editing the e-mail integration keeps its SMTP password (write-only, left empty).
    await page.getByRole('button', { name: 'Change the integration Mail to security' }).click();
    const edit = page.getByRole('dialog', { name: 'Change the integration Mail to security' });
    await edit.getByLabel('Port', { exact: true }).fill('465');
    await edit.getByRole('button', { name: 'Save' }).click();
    await edit.waitFor({ state: 'hidden' });
    const mail = (await api('/integrations?type=email')).json().items[0];
    expect(mail.config.smtp.port).toBe(465);
    const row = await web.app.t.deps.database.db.selectFrom('integrations').select(['id', 'secrets']).where('id', '=', mail.id).executeTakeFirstOrThrow();
    const { SecretBox } = await import('../../src/platform/crypto/secret-box.js');
    expect(new SecretBox(await web.app.t.deps.tokenKey()).open(row.secrets, row.id)).toEqual({ 'smtp.password': 'smtp-secret-1' });
    await expectAccessible(page);
    await page.screenshot({ path: '/tmp/admin-integrations-all.png', fullPage: true });
    await context.close();
  });

  it('sets up SAML with every field, shows the refusals by field, and runs the connection test', { timeout: 180_000 }, async () => {
    const { context, page } = await signIn(web.browser, web.app, admin().username);
    await page.goto('/admin/sso');
    await page.getByRole('heading', { name: 'Set up single sign-on' }).waitFor();
    // OIDC without issuer and client: each refusal under its field.
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.getByText('issuer is required for OIDC').isVisible()).toBe(true);
    await expect.poll(() => page.getByText('client_id is required for OIDC').isVisible()).toBe(true);
    expect(await page.getByRole('textbox', { name: 'Client id' }).getAttribute('aria-invalid')).toBe('true');
    await expect.poll(() => page.getByLabel('Scopes', { exact: true }).first().isVisible()).toBe(true);
    await expectAccessible(page);

    await page.getByText('SAML 2.0').click();
    await page.getByRole('textbox', { name: 'IdP metadata XML' }).fill(idpMetadata([makeKeyPair()]));
    await page.getByRole('switch', { name: 'Accept SHA-1 signatures' }).check({ force: true });
    await page.getByRole('textbox', { name: 'Service URL' }).fill('https://cg.example.com');
    await page.getByRole('textbox', { name: 'Application redirect URL (optional)' }).fill('https://app.example.com/#x');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.getByText('app_redirect_url must not have a fragment (the tokens are put there)').isVisible()).toBe(true);
    await page.getByRole('textbox', { name: 'Application redirect URL (optional)' }).fill('https://app.example.com/signed-in');
    await choose(page, 'Role of new users', 'auditor');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('button', { name: 'Test the connection' }).waitFor();
    const config = (await api('/sso')).json();
    expect(config).toMatchObject({
      protocol: 'saml',
      allow_sha1: true,
      service_url: 'https://cg.example.com',
      app_redirect_url: 'https://app.example.com/signed-in',
      default_role: 'auditor',
      metadata_inline: true,
    });
    await expect.poll(() => page.getByRole('cell', { name: 'https://cg.example.com', exact: true }).isVisible()).toBe(true);
    await page.getByRole('button', { name: 'Test the connection' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /answers as configured|Something is wrong/ })
      .waitFor();
    await page.mouse.move(0, 0);
    await expectAccessible(page);
    await page.screenshot({ path: '/tmp/admin-sso-saml.png', fullPage: true });
    await api('/sso', { method: 'DELETE' });
    await context.close();
  });

  it('lists invitations with their state, invites and withdraws', { timeout: 180_000 }, async () => {
    const accepted = `accepter-${process.pid}`;
    await addUser(web.app.t, { id: web.app.tenant.id, admin: admin() }, 'read-only', accepted);
    const { context, page } = await signIn(web.browser, web.app, admin().username);
    await page.goto('/admin/invitations');
    await page.getByRole('heading', { level: 2, name: 'Invitations' }).waitFor();
    const invited = `invited-${process.pid}`;
    await page.getByRole('textbox', { name: 'Username' }).fill(invited);
    await choose(page, 'Role', 'auditor');
    await page.getByRole('button', { name: 'Invite', exact: true }).click();
    const row = page.getByRole('row', { name: new RegExp(invited) });
    await expect.poll(() => row.getByText('Pending').isVisible()).toBe(true);
    await expectAccessible(page);
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: `Withdraw the invitation of ${invited}` }).click();
    await expect.poll(() => row.getByText('Withdrawn').isVisible()).toBe(true);
    expect(await page.getByRole('button', { name: `Withdraw the invitation of ${invited}` }).count()).toBe(0);
    await page.screenshot({ path: '/tmp/admin-invitations.png', fullPage: true });
    await context.close();

    // A role without roles:manage is not offered the section.
    const analyst = await signIn(web.browser, web.app, web.app.tenant.users['security-analyst'].username);
    await analyst.page.goto('/admin/invitations');
    await analyst.page.waitForURL(/\/admin\/users$/);
    expect(await analyst.page.getByRole('tab', { name: 'Invitations' }).count()).toBe(0);
    await analyst.context.close();
  });

  it("resets a member's multi-factor sign-in after asking, and shows the refusal for a member without one", { timeout: 180_000 }, async () => {
    const member = await addUser(web.app.t, { id: web.app.tenant.id, admin: admin() }, 'auditor', `lost-phone-${process.pid}`);
    const { secret } = (await call(web.app.t.app, member.token, { method: 'POST', url: '/api/v1/auth/mfa/totp/enroll', expect: 200 })).json();
    const code = await generate({ secret, epoch: Math.floor(web.app.t.clock.now().getTime() / 1000) });
    await call(web.app.t.app, member.token, { method: 'POST', url: '/api/v1/auth/mfa/totp/confirm', payload: { code }, expect: 200 });

    const { context, page } = await signIn(web.browser, web.app, admin().username);
    await page.goto('/admin/users');
    // Declining the confirmation changes nothing.
    page.once('dialog', (dialog) => void dialog.dismiss());
    await page.getByRole('button', { name: `Reset the multi-factor sign-in of ${member.username}` }).click();
    expect((await call(web.app.t.app, member.token, { url: '/api/v1/auth/mfa', expect: 200 })).json().totp_enabled).toBe(true);
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: `Reset the multi-factor sign-in of ${member.username}` }).click();
    await expect.poll(() => page.getByText(`The multi-factor sign-in of ${member.username} was reset`).isVisible()).toBe(true);
    expect((await call(web.app.t.app, member.token, { url: '/api/v1/auth/mfa', expect: 200 })).json()).toMatchObject({ totp_enabled: false, recovery_codes_left: 0 });
    // Again: nothing left to reset, in the service's words.
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: `Reset the multi-factor sign-in of ${member.username}` }).click();
    await expect.poll(() => page.getByText(`${member.username} has no multi-factor sign-in to reset`).isVisible()).toBe(true);
    // Not offered on one's own row.
    expect(await page.getByRole('button', { name: `Reset the multi-factor sign-in of ${admin().username}` }).count()).toBe(0);
    await page.mouse.move(0, 0); // not hovering the button just clicked (its hover colours are not the check's concern)
    await expectAccessible(page);
    await page.screenshot({ path: '/tmp/admin-users-mfa-reset.png', fullPage: true });
    await context.close();
  });
});
