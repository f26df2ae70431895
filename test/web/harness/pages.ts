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

/** What the page's Web Animations API tells of a running animation (the test's own types know no DOM). */
interface PageAnimation {
  playState: string;
  effect: { getComputedTiming(): { iterations?: number } } | null;
}

/** Waits until no finite animation or transition runs on the page (endless ones, a loader's spin, never settle). */
async function settled(page: Page): Promise<void> {
  // A function, not a string: the console's CSP forbids evaluating strings as script.
  await page.waitForFunction(
    () =>
      (globalThis as unknown as { document: { getAnimations(): PageAnimation[] } }).document
        .getAnimations()
        .every((a) => a.playState !== 'running' || a.effect?.getComputedTiming().iterations === Infinity),
    null,
    { timeout: 10_000 },
  );
}

async function severeViolations(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  return results.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map(
      (violation) =>
        `${violation.id} (${violation.impact}): ${violation.help} — ${violation.nodes
          .map((node) => node.target.join(' '))
          .slice(0, 3)
          .join(', ')}`,
    );
}

/** No serious or critical axe-core violation on the page as it is now (WCAG 2.1 A and AA rules). */
export async function expectAccessible(page: Page): Promise<void> {
  // The page as it settles, not mid-transition: a closing modal's fading overlay (or a button's colour
  // transition) measured by axe reads as text without contrast that no user is left looking at.
  // Nothing hovered: the pointer left where the last click was (a closed dialog's Save lands over a
  // row's button) measures that button's hover colours over a hovered row, not the page as it rests.
  await page.mouse.move(0, 0);
  await settled(page);
  let severe = await severeViolations(page);
  if (severe.length > 0) {
    // A transition can start while axe reads the page (a notification closing on its timer, one
    // fading in a frame after the check): a violation of the page at rest is there again once it has
    // settled; one of a passing frame is not.
    await page.waitForTimeout(500);
    await settled(page);
    severe = await severeViolations(page);
  }
  expect(severe, `accessibility violations on ${page.url()}`).toEqual([]);
}
