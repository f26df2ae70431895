import i18n from 'i18next';
import { initReactI18next } from 'react-i18next';
import { common } from './common';
import { DEFAULT_LANGUAGE, type Language } from './languages';
import { initialLanguage, rememberLanguage } from './language-choice';
import { collectCatalogs, type Catalogs } from './locales/collect';

/**
 * Every text the console shows goes through i18next. Each feature keeps its English texts in
 * `features/<name>/messages.ts` (a default export), found here at build time and registered as the
 * namespace `<name>`; `common` holds the shell's and the shared pieces' texts. English is bundled;
 * German, French and Portuguese (`messages.de.ts`, `.fr.ts`, `.pt.ts` beside each) are one chunk per
 * language (`locales/<code>.ts`), loaded when that language is first shown.
 */
const en = collectCatalogs(import.meta.glob<{ default: Record<string, unknown> }>('../features/*/messages.ts', { eager: true }), {
  common: { default: common },
});

const loaders: Record<Exclude<Language, 'en'>, () => Promise<{ default: Catalogs }>> = {
  de: () => import('./locales/de'),
  fr: () => import('./locales/fr'),
  pt: () => import('./locales/pt'),
};

async function loadCatalogs(language: Language): Promise<void> {
  if (language === 'en' || i18n.hasResourceBundle(language, 'common')) return;
  const { default: catalogs } = await loaders[language]();
  for (const [namespace, messages] of Object.entries(catalogs)) i18n.addResourceBundle(language, namespace, messages, true, true);
}

i18n.on('languageChanged', (language) => {
  if (typeof document !== 'undefined') document.documentElement.lang = language;
});

/** Starts i18next in the remembered or the browser's language, its catalog loaded before the first render. */
export async function startI18n(): Promise<void> {
  const language = initialLanguage();
  await i18n.use(initReactI18next).init({
    lng: DEFAULT_LANGUAGE,
    fallbackLng: DEFAULT_LANGUAGE,
    supportedLngs: ['en', 'de', 'fr', 'pt'],
    defaultNS: 'common',
    resources: { en },
    interpolation: { escapeValue: false },
  });
  document.documentElement.lang = DEFAULT_LANGUAGE;
  if (language !== DEFAULT_LANGUAGE) {
    try {
      await loadCatalogs(language);
      await i18n.changeLanguage(language);
    } catch {
      // The chunk could not be loaded (a deploy replaced it): the console stays in English.
    }
  }
}

/** The user's choice from the language menu: loads its catalog, switches every text and remembers it. */
export async function changeLanguage(language: Language): Promise<void> {
  await loadCatalogs(language);
  await i18n.changeLanguage(language);
  rememberLanguage(language);
}

export default i18n;

/**
 * Intl formatters are costly to build (the locale's data is loaded each time) and cheap to reuse: a
 * findings page built one per date cell, 200 of them, which took a quarter of a second of its render.
 * They are kept per language, and format in the console's language (not the browser's), so a switch
 * of language formats dates and numbers anew.
 */
const formatters = new Map<string, Intl.DateTimeFormat | Intl.NumberFormat>();
function cached<T extends Intl.DateTimeFormat | Intl.NumberFormat>(key: string, build: (locale: string) => T): T {
  const locale = i18n.language || DEFAULT_LANGUAGE;
  let formatter = formatters.get(`${locale}:${key}`) as T | undefined;
  if (!formatter) formatters.set(`${locale}:${key}`, (formatter = build(locale)));
  return formatter;
}
const dateTime = () => cached('date-time', (locale) => new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short' }));
const day = () => cached('day', (locale) => new Intl.DateTimeFormat(locale, { dateStyle: 'medium' }));
const number = (digits: number) => cached(`number-${digits}`, (locale) => new Intl.NumberFormat(locale, { maximumFractionDigits: digits }));

/** Dates and numbers through Intl, in the console's language. */
export const formatDate = (value: string | null | undefined): string => (value ? dateTime().format(new Date(value)) : '—');
export const formatDay = (value: string | null | undefined): string => (value ? day().format(new Date(value)) : '—');
export const formatNumber = (value: number | null | undefined, digits = 0): string => (value === null || value === undefined ? '—' : number(digits).format(value));
const percent = () => cached('percent', (locale) => new Intl.NumberFormat(locale, { style: 'percent', maximumFractionDigits: 3 }));
/** A share 0..1 as a percentage (EPSS scores and percentiles). */
export const formatPercent = (value: number | null | undefined): string => (value === null || value === undefined ? '—' : percent().format(value));
