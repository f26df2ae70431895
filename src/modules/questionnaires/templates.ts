import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectPath } from '../../platform/paths.js';
import { QUESTION_TYPES, normalizeMapping, type Question } from './questions.js';

/**
 * The questionnaire templates under content/questionnaires/<lang>/<id>.json (see its README),
 * loaded once. The content test checks them thoroughly; this load only refuses what the service
 * could not work with, naming the file.
 */

export const LANGUAGES = ['en', 'de', 'fr', 'pt'] as const;
export type Language = (typeof LANGUAGES)[number];
export const DEFAULT_LANGUAGE: Language = 'en';

export interface Template {
  id: string;
  lang: Language;
  version: number;
  title: string;
  description: string;
  framework: string;
  frameworks: string[];
  attestation_validity_days: number;
  references: string[];
  questions: Question[];
}

let loaded: Map<string, Map<Language, Template>> | null = null;

function check(file: string, t: Template, lang: Language, id: string): void {
  const fail = (what: string) => {
    throw new Error(`${file}: ${what}`);
  };
  if (t.id !== id || t.lang !== lang) fail('id or lang does not match the file name');
  if (!t.title || !Array.isArray(t.questions) || t.questions.length === 0) fail('no title or no questions');
  if (!Number.isInteger(t.attestation_validity_days) || t.attestation_validity_days < 1) fail('invalid attestation_validity_days');
  for (const q of t.questions) {
    if (!q.id || !q.text || !(QUESTION_TYPES as readonly string[]).includes(q.type) || !Array.isArray(q.control_mappings)) fail(`invalid question ${q.id}`);
    // The files hold only control_mappings (already "<framework>:<control_id>"); the normalised
    // control_ids every question carries are derived here, as for a question written through the API.
    try {
      q.control_ids = [...new Set(q.control_mappings.map(normalizeMapping))];
    } catch (error) {
      fail(`question ${q.id}: ${(error as Error).message}`);
    }
  }
}

export function templates(): Map<string, Map<Language, Template>> {
  if (loaded) return loaded;
  const root = projectPath('content', 'questionnaires');
  const all = new Map<string, Map<Language, Template>>();
  for (const lang of LANGUAGES) {
    for (const name of readdirSync(join(root, lang))
      .filter((f) => f.endsWith('.json'))
      .sort()) {
      const file = join(root, lang, name);
      const id = name.slice(0, -'.json'.length);
      const template = JSON.parse(readFileSync(file, 'utf8')) as Template;
      check(file, template, lang, id);
      if (!all.has(id)) all.set(id, new Map());
      all.get(id)!.set(lang, template);
    }
  }
  for (const [id, byLang] of all) if (!byLang.has(DEFAULT_LANGUAGE)) throw new Error(`content/questionnaires: template ${id} has no English version`);
  loaded = all;
  return all;
}

/** The template in the language, or in English when that language is missing; undefined if unknown. */
export function templateIn(id: string, lang: Language): Template | undefined {
  const byLang = templates().get(id);
  return byLang?.get(lang) ?? byLang?.get(DEFAULT_LANGUAGE);
}

function asLanguage(tag: string): Language | null {
  const primary = tag.trim().toLowerCase().split(/[-_]/)[0] ?? '';
  return (LANGUAGES as readonly string[]).includes(primary) ? (primary as Language) : null;
}

/**
 * The language of a request: `?lang=` when it names a supported language, else the best supported
 * entry of Accept-Language (by q-value, then order), else English. `pt-BR` reads as `pt` (the
 * content is European Portuguese, the closest there is).
 */
export function negotiateLanguage(query: string | undefined, acceptLanguage: string | undefined): Language {
  if (query) {
    const chosen = asLanguage(query);
    if (chosen) return chosen;
  }
  if (acceptLanguage) {
    const ranked = acceptLanguage
      .split(',')
      .map((part, index) => {
        const [tag = '', ...params] = part.trim().split(';');
        const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)).find(Boolean);
        return { tag, q: q ? Number(q[1]) : 1, index };
      })
      .filter((e) => e.tag && Number.isFinite(e.q) && e.q > 0)
      .sort((a, b) => b.q - a.q || a.index - b.index);
    for (const entry of ranked) {
      const lang = asLanguage(entry.tag);
      if (lang) return lang;
    }
  }
  return DEFAULT_LANGUAGE;
}
