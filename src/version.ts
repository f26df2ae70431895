import { readFileSync } from 'node:fs';
import { projectPath } from './platform/paths.js';

export const VERSION: string = (JSON.parse(readFileSync(projectPath('package.json'), 'utf8')) as { version: string }).version;
