import { defineConfig } from 'vitest/config';

/**
 * Storage tests run once on the embedded database (PGlite) and, when TEST_DATABASE_URL is set, once
 * more on PostgreSQL. Pure unit tests (`*.unit.test.ts`) run once.
 */
const storageTests = ['src/**/*.test.ts', 'test/**/*.test.ts'];
const unitTests = ['src/**/*.unit.test.ts', 'test/**/*.unit.test.ts'];
/** The console in a real Chromium against the real service on PGlite (test/web/harness). */
const browserTests = ['test/web/**/*.browser.test.ts'];
const shared = {
  globalSetup: ['test/harness/global-setup.ts'],
  testTimeout: 60_000,
  hookTimeout: 120_000,
};

// `extends: true`: a project takes the root's options below (pool, isolate, maxWorkers, reporters);
// without it vitest 4 gave each project its defaults, and every test file ran in a fresh process
// that imported the app again (about 6 s a file on this machine, most of CI's time).
const projects: Array<{ extends: true; test: Record<string, unknown> }> = [
  { extends: true, test: { name: 'unit', include: unitTests, testTimeout: 60_000 } },
  { extends: true, test: { ...shared, name: 'pglite', include: storageTests, exclude: [...unitTests, ...browserTests], provide: { dbKind: 'pglite' as const } } },
  {
    extends: true,
    test: {
      ...shared,
      name: 'browser',
      include: browserTests,
      globalSetup: [...shared.globalSetup, 'test/web/harness/global-setup.ts'],
      // A screen under CI's load can take seconds to render after a click or a navigation: a poll
      // waits for what it expects that long (vitest's default is 1 s), and still fails if it never comes.
      expect: { poll: { timeout: 15_000 } },
      provide: { dbKind: 'pglite' as const },
    },
  },
];
if (process.env.TEST_DATABASE_URL) {
  projects.push({
    extends: true,
    test: { ...shared, name: 'postgres', include: storageTests, exclude: [...unitTests, ...browserTests], provide: { dbKind: 'postgres' as const } },
  });
}

export default defineConfig({
  test: {
    projects,
    pool: 'forks',
    // Test files of one worker share its module cache: importing the app for every file was half of
    // CI's time. Each file builds its own app, database and clock, so nothing else is shared; a full
    // run passed both ways (2026-11-27: 558 s shared against ~1,240 s isolated). TEST_ISOLATE=1
    // brings back a fresh module graph per file, to rule sharing out when a test misbehaves.
    isolate: process.env.TEST_ISOLATE === '1',
    maxWorkers: Number(process.env.TEST_WORKERS ?? 4),
    reporters: process.env.VITEST_JSON ? ['default', ['json', { outputFile: process.env.VITEST_JSON }]] : ['default'],
  },
});
