import { defineConfig } from 'vitest/config';

/**
 * Storage tests run once on the embedded database (PGlite) and, when TEST_DATABASE_URL is set, once
 * more on PostgreSQL. Pure unit tests (`*.unit.test.ts`) run once.
 */
const storageTests = ['src/**/*.test.ts', 'test/**/*.test.ts'];
const unitTests = ['src/**/*.unit.test.ts', 'test/**/*.unit.test.ts'];
const shared = {
  globalSetup: ['test/harness/global-setup.ts'],
  testTimeout: 60_000,
  hookTimeout: 120_000,
};

const projects: Array<{ test: Record<string, unknown> }> = [
  { test: { name: 'unit', include: unitTests, testTimeout: 60_000 } },
  { test: { ...shared, name: 'pglite', include: storageTests, exclude: unitTests, provide: { dbKind: 'pglite' as const } } },
];
if (process.env.TEST_DATABASE_URL) {
  projects.push({
    test: { ...shared, name: 'postgres', include: storageTests, exclude: unitTests, provide: { dbKind: 'postgres' as const } },
  });
}

export default defineConfig({
  test: {
    projects,
    pool: 'forks',
    maxWorkers: Number(process.env.TEST_WORKERS ?? 4),
    reporters: process.env.VITEST_JSON ? ['default', ['json', { outputFile: process.env.VITEST_JSON }]] : ['default'],
  },
});
