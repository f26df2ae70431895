import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { projectPath } from '../../platform/paths.js';

/** Where `vite build` writes the console (web/vite.config.ts); CONTROLGRAPH_CONSOLE_DIR overrides it. */
export function consoleDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.CONTROLGRAPH_CONSOLE_DIR || projectPath('web', 'dist');
}

export function consoleBuilt(dir: string): boolean {
  return existsSync(join(dir, 'index.html'));
}
