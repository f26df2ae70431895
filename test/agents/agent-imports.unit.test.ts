import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectPath } from '../../src/platform/paths.js';

/**
 * The packaged agent (controlgraph-agent) is built from src/agent alone: an import of the server
 * (src/modules, src/platform, src/app …) would drag the server into every host, or break the build.
 * This is the check in the source; scripts/build-agent.mjs checks the bundle's inputs again.
 */

const AGENT = projectPath('src', 'agent');
/** The libraries the agent may use (bundled into the executable). */
const LIBRARIES = new Set(['typebox', 'ajv', 'ajv-formats']);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [join(dir, e.name)] : [],
  );
}

function specifiers(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+'([^']+)'/g)) out.push(m[1]!);
  for (const m of text.matchAll(/import\(\s*'([^']+)'\s*\)/g)) out.push(m[1]!);
  return out;
}

describe('the agent imports nothing of the server', () => {
  it('every import in src/agent is src/agent, node: or an allowed library', () => {
    const files = sources(AGENT);
    expect(files.length).toBeGreaterThan(10);
    const foreign: string[] = [];
    for (const file of files) {
      for (const spec of specifiers(readFileSync(file, 'utf8'))) {
        const where = `${relative(projectPath(), file)}: ${spec}`;
        if (spec.startsWith('.')) {
          if (relative(AGENT, resolve(dirname(file), spec)).startsWith('..')) foreign.push(where);
        } else if (!spec.startsWith('node:') && !LIBRARIES.has(spec)) {
          foreign.push(where);
        }
      }
    }
    expect(foreign).toEqual([]);
  });

  it('sees an import of the server when there is one', () => {
    // The pattern above must catch the forms the code uses, or the test proves nothing.
    expect(specifiers(`import type { X } from '../modules/agents/report-schema.js';\nimport {\n  a,\n} from '../platform/x.js';\nawait import('../app.js');`)).toEqual([
      '../modules/agents/report-schema.js',
      '../platform/x.js',
      '../app.js',
    ]);
  });
});
