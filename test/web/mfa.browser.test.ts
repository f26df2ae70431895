import { generate } from 'otplib';
import { describe, expect, it } from 'vitest';
import { chromiumPath } from './harness/chromium.js';
import { useConsole } from './harness/use-console.js';
import { expectAccessible, signIn } from './harness/pages.js';

const web = useConsole();

const STEP_MS = 30_000;
/** The authenticator app: the code for the service's (manual) clock. */
const codeNow = (secret: string) => generate({ secret, epoch: Math.floor(web.app.t.clock.now().getTime() / 1000) });

describe.runIf(chromiumPath())('multi-factor sign-in and SSO in the console', () => {
  it('enrolls an authenticator, shows the recovery codes once, then asks for the code at sign-in', { timeout: 180_000 }, async () => {
    const user = web.app.tenant.users['security-analyst'];
    const { context, page } = await signIn(web.browser, web.app, user.username);
    await page.getByRole('button', { name: /Signed in as/ }).click();
    await page.getByRole('menuitem', { name: 'Security settings' }).click();
    await page.waitForURL(/\/account\/security$/);
    await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
    await page.getByRole('img', { name: 'QR code to add ControlGraph to an authenticator app' }).waitFor();
    const secret = (await page.getByLabel('Authenticator secret').textContent())!.trim();
    expect(secret).toMatch(/^[A-Z2-7]+=*$/);
    await expectAccessible(page);

    // A wrong code is refused with the service's message; the right one turns it on.
    const code = await codeNow(secret);
    await page.getByRole('textbox', { name: 'Code from your app' }).fill(code === '000000' ? '111111' : '000000');
    await page.getByRole('button', { name: 'Confirm' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('the code does not match the authenticator');
    await page.getByRole('textbox', { name: 'Code from your app' }).fill(code);
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.getByRole('heading', { name: 'Your recovery codes' }).waitFor();
    const codes = await page.getByTestId('recovery-code').allTextContents();
    expect(codes).toHaveLength(10);
    expect(await page.getByRole('button', { name: 'Copy codes' }).isVisible()).toBe(true);
    expect(await page.getByRole('button', { name: 'Download codes' }).isVisible()).toBe(true);
    await expectAccessible(page);
    await page.screenshot({ path: '/tmp/security-codes.png', fullPage: true });
    await page.getByRole('button', { name: 'I have saved my codes' }).click();
    await expect.poll(() => page.getByText('On: signing in with your password also needs a code').isVisible()).toBe(true);
    await expect.poll(() => page.getByText('10 unused recovery codes left.').isVisible()).toBe(true);
    await expectAccessible(page);
    await page.screenshot({ path: '/tmp/security.png', fullPage: true });

    // Sign out, sign in again: the console asks for the code (a fresh one: the one used is spent).
    await page.getByRole('button', { name: /Signed in as/ }).click();
    await page.getByRole('menuitem', { name: 'Sign out' }).click();
    await page.waitForURL(/\/sign-in/);
    await page.getByLabel('Username').fill(user.username);
    await page.getByLabel(/^Password/).fill(web.app.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('textbox', { name: 'One-time code' }).waitFor();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('Enter the one-time code');
    await expectAccessible(page);
    web.app.t.clock.advance(STEP_MS);
    await page.getByRole('textbox', { name: 'One-time code' }).fill(await codeNow(secret));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((url) => url.pathname === '/');
    await expect.poll(() => page.getByText(`Role: security-analyst`).isVisible()).toBe(true);

    // New recovery codes with a recovery code; the old ones stop working.
    await page.goto('/account/security');
    await page.getByRole('textbox', { name: /Code for new recovery codes/ }).fill(codes[0]!);
    await page.getByRole('button', { name: 'Make new recovery codes' }).click();
    await page.getByRole('heading', { name: 'Your recovery codes' }).waitFor();
    const fresh = await page.getByTestId('recovery-code').allTextContents();
    expect(fresh).toHaveLength(10);
    expect(fresh).not.toContain(codes[1]);
    await context.close();
  });

  it('a session held to enrollment by the tenant goes to the security page with the explanation', { timeout: 180_000 }, async () => {
    // The tenant requires MFA (set through the API by its admin, who enrolls first).
    const t = web.app.t;
    const admin = web.app.tenant.admin;
    const call = (method: 'GET' | 'POST' | 'PUT', url: string, token: string, payload?: object) =>
      t.app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload ? { payload } : {}) });
    const enroll = (await call('POST', '/api/v1/auth/mfa/totp/enroll', admin.token)).json() as { secret: string };
    web.app.t.clock.advance(STEP_MS);
    expect((await call('POST', '/api/v1/auth/mfa/totp/confirm', admin.token, { code: await codeNow(enroll.secret) })).statusCode).toBe(200);
    web.app.t.clock.advance(STEP_MS);
    const login = await t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/token',
      payload: { username: admin.username, password: web.app.password, otp: await codeNow(enroll.secret) },
    });
    expect(login.statusCode).toBe(200);
    const withCode = login.json() as { token: string };
    expect((await call('PUT', `/api/v1/tenants/${web.app.tenant.id}/settings/mfa`, withCode.token, { mfa_required: true })).statusCode).toBe(200);

    const { context, page } = await signIn(web.browser, web.app, web.app.tenant.users.auditor.username);
    await page.waitForURL(/\/account\/security$/);
    await expect.poll(() => page.getByRole('alert').filter({ hasText: 'Your organisation requires multi-factor sign-in' }).isVisible()).toBe(true);
    await page.goto('/findings');
    await page.waitForURL(/\/account\/security$/);
    await expectAccessible(page);
    await page.screenshot({ path: '/tmp/security-held.png', fullPage: true });
    await context.close();
  });

  it('offers SSO by organisation, pre-filled from ?org=, and says so when the organisation has none', { timeout: 180_000 }, async () => {
    const context = await web.browser.newContext({ baseURL: web.app.base });
    const page = await context.newPage();
    await page.goto('/sign-in?org=no-such-organisation');
    const org = page.getByRole('textbox', { name: 'Organisation' });
    expect(await org.inputValue()).toBe('no-such-organisation');
    await page.getByRole('button', { name: 'Continue with OpenID Connect' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('Single sign-on did not work for “no-such-organisation”');
    expect(new URL(page.url()).pathname).toBe('/sign-in');
    // An organisation without SAML is refused the same way (the service answers 404 for both).
    await org.fill(web.app.tenant.slug);
    await page.getByRole('button', { name: 'Continue with SAML' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain(`Single sign-on did not work for “${web.app.tenant.slug}”`);
    await expectAccessible(page);
    await page.screenshot({ path: '/tmp/signin.png', fullPage: true });
    await context.close();
  });
});
