import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { chromiumPath } from './harness/chromium.js';
import { useConsole } from './harness/use-console.js';
import { expectAccessible } from './harness/pages.js';
import { call } from '../harness/identity.js';

const web = useConsole({ demo: true });
const TIMEOUT = 180_000;
const SEVERITIES = ['critical', 'high', 'medium', 'low', 'info'] as const;

async function severityCounts(): Promise<Record<string, number>> {
  const analyst = web.app.tenant.users['security-analyst'];
  const response = await call(web.app.t.app, analyst.token, { url: `/api/v1/tenants/${web.app.tenant.id}/controls/status?per_page=1`, expect: 200 });
  return (response.json() as { by_severity: Record<string, number> }).by_severity;
}

/** The overview's severity counts read as the locale writes numbers (1.234 in German, 1 234 in French). */
async function expectCountsIn(page: Page, locale: string): Promise<void> {
  const counts = await severityCounts();
  const format = new Intl.NumberFormat(locale);
  await page.getByTestId('severity-count-critical').waitFor({ timeout: 20_000 });
  for (const severity of SEVERITIES) {
    expect(await page.getByTestId(`severity-count-${severity}`).textContent()).toBe(format.format(counts[severity.toUpperCase()] ?? 0));
  }
}

/** The first "first seen" cell of the findings list: the day as text, date and time in its title. */
async function firstSeenCell(page: Page): Promise<{ day: string; full: string }> {
  const cell = page.locator('table tbody time[title]').first();
  await cell.waitFor({ timeout: 20_000 });
  return { day: (await cell.textContent()) ?? '', full: (await cell.getAttribute('title')) ?? '' };
}

describe.runIf(chromiumPath())('the console in four languages', () => {
  it(
    'opens in German from the browser language, switches to French from the user menu and remembers only that',
    async () => {
      const analyst = web.app.tenant.users['security-analyst'];
      const context = await web.browser.newContext({ baseURL: web.app.base, locale: 'de-DE', timezoneId: 'UTC' });
      const page = await context.newPage();

      await page.goto('/sign-in');
      await page.getByLabel('Benutzername').fill(analyst.username);
      expect(await page.evaluate('document.documentElement.lang')).toBe('de');
      await page.getByLabel(/^Passwort/).fill(web.app.password);
      await expectAccessible(page);
      await page.getByRole('button', { name: 'Anmelden' }).click();
      await page.waitForURL((url) => url.pathname !== '/sign-in');

      await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Übersicht');
      await expectCountsIn(page, 'de-DE');
      await expectAccessible(page);

      expect(await page.getByRole('navigation').getByRole('link', { name: 'Befunde' }).getAttribute('href')).toBe('/findings');
      await page.goto('/findings');
      await page.getByRole('heading', { level: 1, name: 'Befunde' }).waitFor({ timeout: 20_000 });
      const german = await firstSeenCell(page);
      expect(german.day).toMatch(/^\d{2}\.\d{2}\.\d{4}$/); // 28.11.2026
      expect(german.full).toMatch(/^\d{2}\.\d{2}\.\d{4}, \d{2}:\d{2}$/);
      await page
        .getByRole('checkbox', { name: /^Zeile .+ auswählen$/ })
        .first()
        .waitFor();
      await expectAccessible(page);

      // The user menu offers each language by its own name; French re-renders texts, dates and numbers.
      await page.getByRole('button', { name: /^Angemeldet als/ }).click();
      await page.getByRole('menuitem', { name: 'Français' }).click();
      await page.getByRole('heading', { level: 1, name: 'Constats' }).waitFor({ timeout: 20_000 });
      expect(await page.evaluate('document.documentElement.lang')).toBe('fr');
      const french = await firstSeenCell(page);
      expect(french.day).toMatch(/^\d{1,2} \p{L}+\.? \d{4}$/u); // 28 nov. 2026
      expect(french.full).toMatch(/^\d{1,2} \p{L}+\.? \d{4}(,| à)? \d{2}:\d{2}$/u);
      await expectAccessible(page);

      // The choice survives a reload, against the browser's German; nothing but the language is stored.
      await page.goto('/');
      await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Vue d’ensemble');
      await expectCountsIn(page, 'fr-FR');
      expect(await page.evaluate('JSON.stringify(localStorage)')).toBe(JSON.stringify({ 'cg-language': 'fr' }));
      await page.getByRole('button', { name: /^Connecté en tant que/ }).click();
      expect(await page.getByRole('menuitem', { name: 'Français' }).getAttribute('aria-current')).toBe('true');
      await page.keyboard.press('Escape');
      await expectAccessible(page);
      await context.close();
    },
    TIMEOUT,
  );

  it(
    'stays in English for a browser in a language the console does not speak',
    async () => {
      const context = await web.browser.newContext({ baseURL: web.app.base, locale: 'ja-JP' });
      const page = await context.newPage();
      await page.goto('/sign-in');
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
      expect(await page.evaluate('document.documentElement.lang')).toBe('en');
      await context.close();
    },
    TIMEOUT,
  );
});
