import { randomUUID } from 'node:crypto';
import { readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { projectPath } from '../../src/platform/paths.js';
import type { TestProject } from 'vitest/node';
import { ensurePgliteTemplate, ensurePostgresTemplate } from './templates.js';

declare module 'vitest' {
  export interface ProvidedContext {
    dbKind: 'pglite' | 'postgres';
    pgliteTemplate: string;
    postgresTemplate: string;
    /** Identifies this test run: process tests build dist/ once per run (dist-build.ts). */
    testRunId: string;
  }
}

// One id for all projects of this run (the setup module is loaded once per run).
const RUN_ID = `${process.pid}-${randomUUID()}`;

/** Outcomes of earlier runs' builds (dist-build.ts) older than a day. */
function pruneBuildStamps(): void {
  const dir = projectPath('.cache', 'dist-build');
  let names: string[] = [];
  try {
    names = readdirSync(dir).filter((name) => name.endsWith('.result'));
  } catch {
    return;
  }
  for (const name of names) {
    const path = join(dir, name);
    if (Date.now() - statSync(path).mtimeMs > 86_400_000) rmSync(path, { force: true });
  }
}

export default async function setup(project: TestProject): Promise<void> {
  pruneBuildStamps();
  project.provide('testRunId', RUN_ID);
  const kind = project.config.provide.dbKind;
  if (kind === 'postgres') {
    const url = process.env.TEST_DATABASE_URL;
    if (!url) throw new Error('the postgres test project needs TEST_DATABASE_URL');
    project.provide('postgresTemplate', await ensurePostgresTemplate(url));
  } else {
    project.provide('pgliteTemplate', await ensurePgliteTemplate());
  }
}
