import { collectCatalogs } from './collect';

/**
 * Every fr catalog (`features/<name>/messages.fr.ts` and `i18n/common.fr.ts`), bundled into one
 * chunk that is loaded only when the console is shown in this language.
 */
export default collectCatalogs(
  import.meta.glob<{ default: Record<string, unknown> }>('../../features/*/messages.fr.ts', { eager: true }),
  import.meta.glob<{ default: Record<string, unknown> }>('../common.fr.ts', { eager: true }),
);
