import { existsSync, readdirSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { projectPath } from '../../src/platform/paths.js';
import { common } from '../../web/src/i18n/common.js';
import { DEFAULT_LANGUAGE, LANGUAGES } from '../../web/src/i18n/languages.js';

/**
 * Every language of the console has every text: each key of the English catalogs
 * (`web/src/features/<name>/messages.ts`, `web/src/i18n/common.ts`) exists in `messages.<code>.ts`
 * (`common.<code>.ts`), with the same {{placeholders}}, no key the English lacks, and the plural forms
 * the language needs (French and Portuguese have `_many` besides `_one` and `_other`).
 */
type Catalog = Record<string, unknown>;
const FEATURES = projectPath('web', 'src', 'features');
const features = readdirSync(FEATURES, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && readdirSync(projectPath('web', 'src', 'features', entry.name)).includes('messages.ts'))
  .map((entry) => entry.name);

async function catalog(namespace: string, language: string): Promise<Catalog | undefined> {
  if (namespace === 'common' && language === DEFAULT_LANGUAGE) return common;
  const suffix = language === DEFAULT_LANGUAGE ? '' : `.${language}`;
  const file = namespace === 'common' ? projectPath('web', 'src', 'i18n', `common${suffix}.ts`) : projectPath('web', 'src', 'features', namespace, `messages${suffix}.ts`);
  if (!existsSync(file)) return undefined;
  return ((await import(pathToFileURL(file).href)) as { default: Catalog }).default;
}

/** `{a: {b: 'x'}}` → `{'a.b': 'x'}`; a non-string leaf is kept as is, to be reported. */
function flatten(value: Catalog, prefix = ''): Map<string, unknown> {
  const keys = new Map<string, unknown>();
  for (const [key, child] of Object.entries(value)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (child && typeof child === 'object' && !Array.isArray(child)) for (const [k, v] of flatten(child as Catalog, path)) keys.set(k, v);
    else keys.set(path, child);
  }
  return keys;
}

const placeholders = (text: unknown): string[] => [...new Set(String(text).match(/\{\{[^}]+\}\}/g) ?? [])].sort();
const PLURAL = /_(zero|one|two|few|many|other)$/;

/** The keys a language must have, each with the English text whose placeholders it must keep. */
function expectedKeys(english: Map<string, unknown>, language: string): Map<string, unknown> {
  const categories = new Intl.PluralRules(language).resolvedOptions().pluralCategories;
  const expected = new Map<string, unknown>();
  for (const [key, text] of english) {
    if (!PLURAL.test(key)) expected.set(key, text);
    else if (key.endsWith('_other')) {
      const base = key.replace(PLURAL, '');
      for (const category of categories) expected.set(`${base}_${category}`, english.get(`${base}_${category}`) ?? text);
    }
  }
  return expected;
}

const namespaces = ['common', ...features];
const others = LANGUAGES.map((language) => language.code).filter((code) => code !== DEFAULT_LANGUAGE);

describe('the console catalogs', () => {
  it('finds the English catalogs', async () => {
    expect(features.length).toBeGreaterThan(5);
    for (const namespace of namespaces) expect(await catalog(namespace, DEFAULT_LANGUAGE), namespace).toBeDefined();
  });

  for (const language of others) {
    it(`has every English key in ${language}, with the same placeholders and its plural forms`, async () => {
      const problems: string[] = [];
      for (const namespace of namespaces) {
        const english = flatten((await catalog(namespace, DEFAULT_LANGUAGE))!);
        const translated = await catalog(namespace, language);
        if (!translated) {
          problems.push(`${namespace}: no ${language} catalog`);
          continue;
        }
        const keys = flatten(translated);
        const expected = expectedKeys(english, language);
        for (const [key, text] of expected) {
          if (!keys.has(key)) problems.push(`${namespace}:${key} is missing`);
          else if (typeof keys.get(key) !== 'string' || !(keys.get(key) as string).trim()) problems.push(`${namespace}:${key} is not a text`);
          else if (placeholders(keys.get(key)).join() !== placeholders(text).join())
            problems.push(`${namespace}:${key} has ${placeholders(keys.get(key)).join(' ') || 'no placeholders'} instead of ${placeholders(text).join(' ') || 'none'}`);
        }
        for (const key of keys.keys()) if (!expected.has(key)) problems.push(`${namespace}:${key} is not in the English catalog`);
      }
      expect(problems, `${language} catalogs`).toEqual([]);
    });
  }
});
