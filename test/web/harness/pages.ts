import { AxeBuilder } from '@axe-core/playwright';
import { expect } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { ConsoleApp } from './console-app.js';

/** A new browser context (own cookies) signed in through the sign-in page. */
export async function signIn(browser: Browser, app: ConsoleApp, username: string, password = app.password): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ baseURL: app.base });
  const page = await context.newPage();
  await page.goto('/sign-in');
  await page.getByLabel('Username').fill(username);
  await page.getByLabel(/^Password/).fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => url.pathname !== '/sign-in');
  return { context, page };
}

/** No serious or critical axe-core violation on the page as it is now (WCAG 2.1 A and AA rules). */
export async function expectAccessible(page: Page): Promise<void> {
  const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  const severe = results.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => `${violation.id} (${violation.impact}): ${violation.help} — ${violation.nodes.map((node) => node.target.join(' ')).slice(0, 3).join(', ')}`);
  expect(severe, `accessibility violations on ${page.url()}`).toEqual([]);
}
