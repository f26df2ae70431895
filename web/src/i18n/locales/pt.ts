import { collectCatalogs } from './collect';

/**
 * Every pt catalog (`features/<name>/messages.pt.ts` and `i18n/common.pt.ts`), bundled into one
 * chunk that is loaded only when the console is shown in this language.
 */
export default collectCatalogs(
  import.meta.glob<{ default: Record<string, unknown> }>('../../features/*/messages.pt.ts', { eager: true }),
  import.meta.glob<{ default: Record<string, unknown> }>('../common.pt.ts', { eager: true }),
);
