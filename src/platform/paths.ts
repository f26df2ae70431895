import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The package root, found from this file whether it runs from src/ (tests, tsx) or dist/ (npm start),
 * so content/ and migrations/ resolve the same way in both.
 */
function findRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('package.json not found above ' + import.meta.url);
    dir = parent;
  }
  return dir;
}

export const projectRoot = findRoot();

export function projectPath(...parts: string[]): string {
  return join(projectRoot, ...parts);
}
