import i18n from 'i18next';
import { initReactI18next } from 'react-i18next';
import { common } from './common';

/**
 * Every text the console shows goes through i18next. Each feature keeps its texts in
 * `features/<name>/messages.ts` (a default export), found here at build time and registered as the
 * namespace `<name>`; `common` holds the shell's and the shared pieces' texts.
 */
const featureMessages = import.meta.glob<{ default: Record<string, unknown> }>('../features/*/messages.ts', { eager: true });

const en: Record<string, Record<string, unknown>> = { common };
for (const [path, module] of Object.entries(featureMessages)) {
  const name = /features\/([^/]+)\/messages\.ts$/.exec(path)?.[1];
  if (name) en[name] = module.default;
}

void i18n.use(initReactI18next).init({
  lng: 'en',
  fallbackLng: 'en',
  defaultNS: 'common',
  resources: { en },
  interpolation: { escapeValue: false },
});

export default i18n;

/**
 * Intl formatters are costly to build (the locale's data is loaded each time) and cheap to reuse: a
 * findings page built one per date cell, 200 of them, which took a quarter of a second of its render.
 */
const formatters = new Map<string, Intl.DateTimeFormat | Intl.NumberFormat>();
function cached<T extends Intl.DateTimeFormat | Intl.NumberFormat>(key: string, build: () => T): T {
  let formatter = formatters.get(key) as T | undefined;
  if (!formatter) formatters.set(key, (formatter = build()));
  return formatter;
}
const dateTime = () => cached('date-time', () => new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' }));
const day = () => cached('day', () => new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' }));
const number = (digits: number) => cached(`number-${digits}`, () => new Intl.NumberFormat(undefined, { maximumFractionDigits: digits }));

/** Dates and numbers through Intl, in the browser's locale. */
export const formatDate = (value: string | null | undefined): string => (value ? dateTime().format(new Date(value)) : '—');
export const formatDay = (value: string | null | undefined): string => (value ? day().format(new Date(value)) : '—');
export const formatNumber = (value: number | null | undefined, digits = 0): string =>
  value === null || value === undefined ? '—' : number(digits).format(value);
