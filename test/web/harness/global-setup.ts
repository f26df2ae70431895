import type { TestProject } from 'vitest/node';
import { cachedConsoleBuild } from '../../../scripts/web/build-console.mjs';
import { CHROMIUM_MISSING, chromiumPath } from './chromium.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The console build this run serves (.cache/web-build/<hash of web/>). */
    consoleDir: string;
  }
}

/** Browser tests need a Chromium and a build of the console's current sources. */
export default async function setup(project: TestProject): Promise<void> {
  if (!chromiumPath()) {
    console.warn(CHROMIUM_MISSING);
    project.provide('consoleDir', '');
    return;
  }
  project.provide('consoleDir', await cachedConsoleBuild());
}
