import { DEFAULT_LANGUAGE, isLanguage, matchLanguage, type Language } from './languages';

/**
 * How the first language is chosen and where the user's choice is remembered. Only the language code
 * is stored (localStorage `cg-language`), never anything about the session.
 */
const STORAGE_KEY = 'cg-language';

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
