import { describe, expect, it } from 'vitest';
import { chromiumPath } from './harness/chromium.js';
import { useConsole } from './harness/use-console.js';
import { expectAccessible, signIn } from './harness/pages.js';

const web = useConsole();

describe.runIf(chromiumPath())('signing in to the console', () => {
  it('signs in with username and password into the shell, with the session in HttpOnly cookies only', async () => {
    const analyst = web.app.tenant.users['security-analyst'];
    const { context, page } = await signIn(web.browser, web.app, analyst.username);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Overview');
    await expect.poll(() => page.getByText(`Role: security-analyst`).isVisible()).toBe(true);
    const cookies = await context.cookies();
    const session = cookies.find((cookie) => cookie.name === 'cg_session');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
    // Script sees no token: not in storage, not in document.cookie.
    const visible = await page.evaluate('({ cookie: document.cookie, local: JSON.stringify(localStorage), session: JSON.stringify(sessionStorage) })');
    expect(visible).toEqual({ cookie: '', local: '{}', session: '{}' });
    await expectAccessible(page);
    await context.close();
  });

  it('says so for a wrong password, and the sign-in page passes the accessibility check', async () => {
    const context = await web.browser.newContext({ baseURL: web.app.base });
    const page = await context.newPage();
    await page.goto('/findings?severity=high');
    await page.waitForURL(/\/sign-in\?next=/);
    await page.getByLabel('Username').fill(web.app.tenant.users['read-only'].username);
    await page.getByLabel(/^Password/).fill('not-the-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('Wrong username or password.');
    await expectAccessible(page);
    // The right password goes on to the page first asked for, filters and all.
    await page.getByLabel(/^Password/).fill(web.app.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((url) => url.pathname === '/findings' && url.searchParams.get('severity') === 'high');
    await context.close();
  });

  it('signs out: the cookies are gone and the console asks to sign in again', async () => {
    const { context, page } = await signIn(web.browser, web.app, web.app.tenant.users.auditor.username);
    await page.getByRole('button', { name: /Signed in as/ }).click();
    await page.getByRole('menuitem', { name: 'Sign out' }).click();
    await page.waitForURL(/\/sign-in/);
    expect((await context.cookies()).filter((cookie) => cookie.name.startsWith('cg_'))).toEqual([]);
    await page.goto('/findings');
    await page.waitForURL(/\/sign-in\?next=/);
    await context.close();
  });
});
