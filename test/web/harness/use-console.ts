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
    browser = await launchChromium();
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
