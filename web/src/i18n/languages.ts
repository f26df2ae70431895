/**
 * The console's languages, how the first one is chosen and where the user's choice is remembered.
 * Only the language code is stored (localStorage `cg-language`), never anything about the session.
 */
export const LANGUAGES = [
  { code: 'en', name: 'English' },
  { code: 'de', name: 'Deutsch' },
  { code: 'fr', name: 'Français' },
  { code: 'pt', name: 'Português' },
] as const;

export type Language = (typeof LANGUAGES)[number]['code'];

export const DEFAULT_LANGUAGE: Language = 'en';
const STORAGE_KEY = 'cg-language';

export function isLanguage(value: unknown): value is Language {
  return LANGUAGES.some((language) => language.code === value);
}

/** `de-AT` → `de`; anything the console has no catalog for → undefined. */
export function matchLanguage(tag: string): Language | undefined {
  const base = tag.toLowerCase().split(/[-_]/)[0];
  return isLanguage(base) ? base : undefined;
}

/** The remembered choice, else the first of the browser's languages the console speaks, else English. */
export function initialLanguage(): Language {
  const stored = readStored();
  if (stored) return stored;
  const preferred = typeof navigator === 'undefined' ? [] : navigator.languages?.length ? navigator.languages : [navigator.language];
  for (const tag of preferred) {
    const language = tag ? matchLanguage(tag) : undefined;
    if (language) return language;
  }
  return DEFAULT_LANGUAGE;
}

function readStored(): Language | undefined {
  try {
    const value = localStorage.getItem(STORAGE_KEY);
    return isLanguage(value) ? value : undefined;
  } catch {
    return undefined; // Storage disabled: the browser's languages decide.
  }
}

export function rememberLanguage(language: Language): void {
  try {
    localStorage.setItem(STORAGE_KEY, language);
  } catch {
    // Storage disabled: the choice lasts until the page is reloaded.
  }
}
