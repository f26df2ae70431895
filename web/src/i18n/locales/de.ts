import { collectCatalogs } from './collect';

/**
 * Every de catalog (`features/<name>/messages.de.ts` and `i18n/common.de.ts`), bundled into one
 * chunk that is loaded only when the console is shown in this language.
 */
export default collectCatalogs(
  import.meta.glob<{ default: Record<string, unknown> }>('../../features/*/messages.de.ts', { eager: true }),
  import.meta.glob<{ default: Record<string, unknown> }>('../common.de.ts', { eager: true }),
);
