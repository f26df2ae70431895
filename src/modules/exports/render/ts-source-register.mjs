// Loaded with --import by a worker thread started from TypeScript source: installs ts-source-hooks.mjs.
import { register } from 'node:module';

register('./ts-source-hooks.mjs', import.meta.url);
