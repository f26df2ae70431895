/**
 * The console's languages. Free of browser globals so the catalog test (under Node) can read it; the
 * choice and its memory are in language-choice.ts.
 */
export const LANGUAGES = [
  { code: 'en', name: 'English' },
  { code: 'de', name: 'Deutsch' },
  { code: 'fr', name: 'Français' },
  { code: 'pt', name: 'Português' },
] as const;

export type Language = (typeof LANGUAGES)[number]['code'];

export const DEFAULT_LANGUAGE: Language = 'en';

export function isLanguage(value: unknown): value is Language {
  return LANGUAGES.some((language) => language.code === value);
}

/** `de-AT` → `de`; anything the console has no catalog for → undefined. */
export function matchLanguage(tag: string): Language | undefined {
  const base = tag.toLowerCase().split(/[-_]/)[0];
  return isLanguage(base) ? base : undefined;
}
