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

/** Dates and numbers through Intl, in the browser's locale. */
export const formatDate = (value: string | null | undefined): string =>
  value ? new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' }).format(new Date(value)) : '—';
export const formatDay = (value: string | null | undefined): string =>
  value ? new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' }).format(new Date(value)) : '—';
export const formatNumber = (value: number | null | undefined, digits = 0): string =>
  value === null || value === undefined ? '—' : new Intl.NumberFormat(undefined, { maximumFractionDigits: digits }).format(value);
