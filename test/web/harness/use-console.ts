import { afterAll, beforeAll } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchChromium } from './chromium.js';
import { startConsoleApp, type ConsoleApp } from './console-app.js';

/** Starting the demo estate (load + audit) and Chromium takes minutes on a shared, loaded machine. */
const HOOK_TIMEOUT = 240_000;

export interface ConsoleScene {
  readonly app: ConsoleApp;
  readonly browser: Browser;
}

/**
 * The console app and a Chromium for the tests of the current suite: started in beforeAll, closed
 * in afterAll. The getters are read inside tests (and helpers they call), once beforeAll has run.
 */
export function useConsole(options: Parameters<typeof startConsoleApp>[0] = {}): ConsoleScene {
  let app: ConsoleApp | undefined;
  let browser: Browser | undefined;
  beforeAll(async () => {
    app = await startConsoleApp(options);
    browser = withEnglishByDefault(await launchChromium());
  }, HOOK_TIMEOUT);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  }, HOOK_TIMEOUT);
  return {
    get app() {
      if (!app) throw new Error('useConsole: the app is read before beforeAll started it');
      return app;
    },
    get browser() {
      if (!browser) throw new Error('useConsole: the browser is read before beforeAll launched it');
      return browser;
    },
  };
}

/**
 * The console speaks the browser's language, and a Chromium's default one comes from the machine's
 * settings: every context is English (en-US) unless a test asks for another `locale`, so the tests
 * that read English texts read them on any machine.
 */
function withEnglishByDefault(browser: Browser): Browser {
  const newContext = browser.newContext.bind(browser);
  const newPage = browser.newPage.bind(browser);
  browser.newContext = (options = {}) => newContext({ locale: 'en-US', ...options });
  browser.newPage = (options = {}) => newPage({ locale: 'en-US', ...options });
  return browser;
}
