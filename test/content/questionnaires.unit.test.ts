import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Checks the questionnaire template content in content/questionnaires/: the 20 templates exist in the
 * four languages, every file is valid against schema.json, the translations share one structure, and
 * every question attests at least one NIST SP 800-53 control.
 */

const DIR = fileURLToPath(new URL('../../content/questionnaires/', import.meta.url));
const LANGS = ['en', 'de', 'fr', 'pt'] as const;
const TEMPLATE_IDS = [
  'cmmc-l2-at',
  'cmmc-l2-pe',
  'cmmc-l2-ps',
  'cmmc-l2-ir',
  'cmmc-l2-ma',
  'nist171-at',
  'nist171-pe',
  'nist171-ps',
  'nist171-dfars',
  'fedramp-ir',
  'fedramp-at',
  'fedramp-pe',
  'vendor-risk',
  'bcp-test',
  'hipaa-training',
  'hipaa-sanctions',
  'gdpr-dpia',
  'iso-supplier',
  'nerc-ops',
  'sox-change',
];
const QUESTION_TYPES = ['yes_no', 'single_choice', 'multi_choice', 'text_short', 'text_long', 'date', 'number', 'file_upload'];
const CHOICE_TYPES = ['single_choice', 'multi_choice'];

/** Allowed framework ids and the shape of the control ids of each. */
const CONTROL_ID_PATTERNS: Record<string, RegExp> = {
  'nist-800-53': /^(AC|AT|AU|CA|CM|CP|IA|IR|MA|MP|PE|PL|PM|PS|PT|RA|SA|SC|SI|SR)-\d{1,2}(\(\d{1,2}\))?$/,
  'nist-800-171': /^3\.(1[0-4]|[1-9])\.\d{1,2}$/,
  'cmmc-l2': /^(AC|AT|AU|CA|CM|IA|IR|MA|MP|PE|PS|RA|SC|SI)\.L2-3\.(1[0-4]|[1-9])\.\d{1,2}$/,
  hipaa: /^16[0-4]\.\d{3}(\([a-zA-Z0-9]+\))*$/,
  gdpr: /^Art\.\d{1,2}(\(\d{1,2}\))?(\([a-z]\))?$/,
  'iso-27001': /^(A\.[5-8]\.\d{1,2}|([4-9]|10)(\.\d+)*)$/,
  'nerc-cip': /^CIP-0\d\d-\d+ R\d+(\.\d+)?$/,
  soc2: /^(CC\d\.\d{1,2}|A1\.\d|C1\.\d|PI1\.\d|P\d\.\d)$/,
  dfars: /^252\.204-70(12|19|20|21)(\([a-zA-Z0-9]+\))*$/,
  'sox-itgc': /^CM-[1-8]$/,
  'iso-22301': /^([4-9]|10)(\.\d+)*$/,
};
const FRAMEWORK_IDS = Object.keys(CONTROL_ID_PATTERNS);

/** Texts up to this length may be identical in two languages (e.g. "PDF", "FedRAMP PMO", a citation). */
const SHORT_TEXT = 24;

interface Option {
  value: string;
  label: string;
}
interface Question {
  id: string;
  text: string;
  help?: string;
  type: string;
  required: boolean;
  options?: Option[];
  min?: number;
  max?: number;
  unit?: string;
  accepted_types?: string[];
  control_mappings: string[];
}
interface Template {
  id: string;
  lang: string;
  version: number;
  title: string;
  description: string;
  framework: string;
  frameworks: string[];
  attestation_validity_days: number;
  references: string[];
  questions: Question[];
}

// ---------------------------------------------------------------------------------------------
// A small JSON Schema (draft-07) checker covering exactly the keywords schema.json uses. Any other
// keyword makes it throw, so the schema cannot silently use something this checker ignores.
// ---------------------------------------------------------------------------------------------

type Schema = { [keyword: string]: unknown };
const ANNOTATIONS = new Set(['$schema', '$id', 'title', 'description', 'definitions']);
const KEYWORDS = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'minItems',
  'maxItems',
  'uniqueItems',
  'contains',
  'enum',
  'const',
  'pattern',
  'minLength',
  'minimum',
  'maximum',
  '$ref',
  'allOf',
  'anyOf',
  'not',
  'if',
  'then',
  'else',
]);

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function validate(root: Schema, schema: Schema, value: unknown, path: string, errors: string[]): void {
  for (const k of Object.keys(schema)) {
    if (!KEYWORDS.has(k) && !ANNOTATIONS.has(k)) throw new Error(`schema keyword not supported by the test checker: ${k}`);
  }
  const sub = (s: unknown, v: unknown, p: string) => validate(root, s as Schema, v, p, errors);
  const passes = (s: unknown, v: unknown) => {
    const e: string[] = [];
    validate(root, s as Schema, v, path, e);
    return e.length === 0;
  };
  if (typeof schema.$ref === 'string') {
    const m = /^#\/definitions\/([A-Za-z0-9_]+)$/.exec(schema.$ref);
    const target = m ? (root.definitions as Record<string, Schema> | undefined)?.[m[1]!] : undefined;
    if (!target) throw new Error(`unresolvable $ref ${schema.$ref}`);
    sub(target, value, path);
  }
  const t = jsonType(value);
  if (schema.type !== undefined) {
    const ok = schema.type === t || (schema.type === 'number' && t === 'integer');
    if (!ok) {
      errors.push(`${path}: expected ${String(schema.type)}, got ${t}`);
      return;
    }
  }
  if (schema.enum !== undefined && !(schema.enum as unknown[]).includes(value)) errors.push(`${path}: ${JSON.stringify(value)} not in enum`);
  if (schema.const !== undefined && schema.const !== value) errors.push(`${path}: expected ${JSON.stringify(schema.const)}`);
  if (typeof value === 'string') {
    if (typeof schema.minLength === 'number' && value.length < schema.minLength) errors.push(`${path}: shorter than ${schema.minLength}`);
    if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern, 'u').test(value)) errors.push(`${path}: does not match ${schema.pattern}`);
  }
  if (typeof value === 'number') {
    if (typeof schema.minimum === 'number' && value < schema.minimum) errors.push(`${path}: below ${schema.minimum}`);
    if (typeof schema.maximum === 'number' && value > schema.maximum) errors.push(`${path}: above ${schema.maximum}`);
  }
  if (Array.isArray(value)) {
    if (typeof schema.minItems === 'number' && value.length < schema.minItems) errors.push(`${path}: fewer than ${schema.minItems} items`);
    if (typeof schema.maxItems === 'number' && value.length > schema.maxItems) errors.push(`${path}: more than ${schema.maxItems} items`);
    if (schema.uniqueItems === true && new Set(value.map((v) => JSON.stringify(v))).size !== value.length) errors.push(`${path}: duplicate items`);
    if (schema.items !== undefined) value.forEach((v, i) => sub(schema.items, v, `${path}[${i}]`));
    if (schema.contains !== undefined && !value.some((v) => passes(schema.contains, v))) errors.push(`${path}: no item matches "contains"`);
  }
  if (t === 'object') {
    const obj = value as Record<string, unknown>;
    for (const r of (schema.required as string[] | undefined) ?? []) if (!(r in obj)) errors.push(`${path}: missing ${r}`);
    const props = (schema.properties as Record<string, Schema> | undefined) ?? {};
    for (const [k, v] of Object.entries(obj)) {
      if (props[k]) sub(props[k], v, `${path}.${k}`);
      else if (schema.additionalProperties === false) errors.push(`${path}: unexpected property ${k}`);
    }
  }
  for (const s of (schema.allOf as unknown[] | undefined) ?? []) sub(s, value, path);
  if (schema.anyOf !== undefined && !(schema.anyOf as unknown[]).some((s) => passes(s, value))) errors.push(`${path}: matches none of anyOf`);
  if (schema.not !== undefined && passes(schema.not, value)) errors.push(`${path}: matches "not"`);
  if (schema.if !== undefined) {
    if (passes(schema.if, value)) {
      if (schema.then !== undefined) sub(schema.then, value, path);
    } else if (schema.else !== undefined) sub(schema.else, value, path);
  }
}

function schemaErrors(schema: Schema, value: unknown): string[] {
  const errors: string[] = [];
  validate(schema, schema, value, '$', errors);
  return errors;
}

// ---------------------------------------------------------------------------------------------

function readJson(path: string): unknown {
  return JSON.parse(readFileSync(path, 'utf8')) as unknown;
}

const schema = readJson(join(DIR, 'schema.json')) as Schema;
const templates = new Map<string, Template>(); // key: `${lang}/${id}`
for (const lang of LANGS) {
  for (const file of readdirSync(join(DIR, lang)).filter((f) => f.endsWith('.json'))) {
    templates.set(`${lang}/${file.slice(0, -'.json'.length)}`, readJson(join(DIR, lang, file)) as Template);
  }
}
function get(lang: string, id: string): Template {
  const t = templates.get(`${lang}/${id}`);
  if (!t) throw new Error(`missing ${lang}/${id}.json`);
  return t;
}

/** The language-independent part of a template: everything except human text. */
function skeleton(t: Template) {
  return {
    id: t.id,
    version: t.version,
    framework: t.framework,
    frameworks: t.frameworks,
    attestation_validity_days: t.attestation_validity_days,
    references: t.references,
    questions: t.questions.map((q) => ({
      id: q.id,
      type: q.type,
      required: q.required,
      hasHelp: q.help !== undefined,
      options: q.options?.map((o) => o.value),
      min: q.min,
      max: q.max,
      unit: q.unit,
      accepted_types: q.accepted_types,
      control_mappings: q.control_mappings,
    })),
  };
}

/** Every translatable text of a template, keyed by where it occurs. */
function texts(t: Template): Map<string, string> {
  const m = new Map<string, string>([
    ['title', t.title],
    ['description', t.description],
  ]);
  for (const q of t.questions) {
    m.set(`${q.id}.text`, q.text);
    if (q.help !== undefined) m.set(`${q.id}.help`, q.help);
    for (const o of q.options ?? []) m.set(`${q.id}.options.${o.value}`, o.label);
  }
  return m;
}

describe('questionnaire template content', () => {
  it('has exactly the 20 template ids in each of the four languages', () => {
    for (const lang of LANGS) {
      const files = readdirSync(join(DIR, lang)).sort();
      expect(files, lang).toEqual(TEMPLATE_IDS.map((id) => `${id}.json`).sort());
    }
    expect(
      readdirSync(DIR)
        .filter((f) => !f.includes('.'))
        .sort(),
    ).toEqual([...LANGS].sort());
  });

  it('has lang matching the folder and id matching the file name', () => {
    for (const lang of LANGS) {
      for (const id of TEMPLATE_IDS) {
        const t = get(lang, id);
        expect(t.lang, `${lang}/${id}`).toBe(lang);
        expect(t.id, `${lang}/${id}`).toBe(id);
      }
    }
  });

  it('is valid against schema.json', () => {
    for (const [key, t] of templates) expect(schemaErrors(schema, t), key).toEqual([]);
  });

  it('uses a schema checker that rejects invalid templates', () => {
    const base = get('en', 'cmmc-l2-at');
    expect(schemaErrors(schema, base)).toEqual([]);
    const mutate = (f: (t: Template) => void) => {
      const copy = structuredClone(base);
      f(copy);
      return schemaErrors(schema, copy);
    };
    const choice = base.questions.findIndex((q) => q.type === 'single_choice');
    const upload = base.questions.findIndex((q) => q.type === 'file_upload');
    const yesNo = base.questions.findIndex((q) => q.type === 'yes_no');
    expect(mutate((t) => delete t.questions[choice]!.options)).not.toEqual([]);
    expect(mutate((t) => delete t.questions[upload]!.accepted_types)).not.toEqual([]);
    expect(mutate((t) => (t.questions[yesNo]!.accepted_types = ['.pdf']))).not.toEqual([]);
    expect(mutate((t) => (t.questions[yesNo]!.unit = 'hours'))).not.toEqual([]);
    expect(mutate((t) => (t.questions[yesNo]!.type = 'rating'))).not.toEqual([]);
    expect(mutate((t) => (t.questions[yesNo]!.control_mappings = ['cmmc-l2:AT.L2-3.2.1']))).not.toEqual([]);
    expect(mutate((t) => (t.questions[yesNo]!.control_mappings = ['nist-800-53:AT-2', 'pci-dss:12.6']))).not.toEqual([]);
    expect(mutate((t) => (t.lang = 'es'))).not.toEqual([]);
    expect(mutate((t) => (t.title = ' '))).not.toEqual([]);
    expect(mutate((t) => Object.assign(t, { extra: true }))).not.toEqual([]);
    expect(mutate((t) => (t.questions = t.questions.slice(0, 5)))).not.toEqual([]);
  });

  it('has the same structure in every language', () => {
    for (const id of TEMPLATE_IDS) {
      const en = skeleton(get('en', id));
      for (const lang of LANGS) expect(skeleton(get(lang, id)), `${lang}/${id}`).toEqual(en);
    }
  });

  it('has 6–15 questions with unique ids, including a text_long and a file_upload question', () => {
    for (const id of TEMPLATE_IDS) {
      const qs = get('en', id).questions;
      expect(qs.length, id).toBeGreaterThanOrEqual(6);
      expect(qs.length, id).toBeLessThanOrEqual(15);
      expect(new Set(qs.map((q) => q.id)).size, id).toBe(qs.length);
      for (const q of qs) expect(q.id, id).toMatch(/^[a-z0-9-]+$/);
      expect(
        qs.some((q) => q.type === 'text_long'),
        id,
      ).toBe(true);
      expect(
        qs.some((q) => q.type === 'file_upload'),
        id,
      ).toBe(true);
      expect(new Set(qs.map((q) => q.type)).size, `${id} uses several question types`).toBeGreaterThanOrEqual(4);
    }
  });

  it('maps every question to at least one NIST SP 800-53 control and only to known frameworks', () => {
    for (const [key, t] of templates) {
      for (const q of t.questions) {
        const where = `${key} ${q.id}`;
        expect(
          q.control_mappings.some((m) => m.startsWith('nist-800-53:')),
          where,
        ).toBe(true);
        expect(new Set(q.control_mappings).size, where).toBe(q.control_mappings.length);
        for (const m of q.control_mappings) {
          const i = m.indexOf(':');
          const framework = m.slice(0, i);
          const control = m.slice(i + 1);
          expect(FRAMEWORK_IDS, `${where} ${m}`).toContain(framework);
          expect(control, `${where} ${m}`).toMatch(CONTROL_ID_PATTERNS[framework] ?? /^$/);
        }
      }
    }
  });

  it('maps only to current controls of the framework catalogs in content/frameworks', () => {
    // The 800-53 catalog keeps withdrawn controls with `withdrawn: true`; an attestation must not target one.
    const catalog = (name: string) =>
      (
        readJson(fileURLToPath(new URL(`../../content/frameworks/${name}.json`, import.meta.url))) as {
          controls: Array<{ id: string; withdrawn?: boolean }>;
        }
      ).controls;
    const current = {
      'nist-800-53': new Set(
        catalog('nist-800-53')
          .filter((c) => !c.withdrawn)
          .map((c) => c.id),
      ),
      soc2: new Set(catalog('soc2').map((c) => c.id)),
    };
    for (const [key, t] of templates) {
      for (const q of t.questions) {
        for (const m of q.control_mappings) {
          const i = m.indexOf(':');
          const framework = m.slice(0, i);
          if (framework === 'nist-800-53' || framework === 'soc2') expect(current[framework].has(m.slice(i + 1)), `${key} ${q.id} ${m}`).toBe(true);
        }
      }
    }
  });

  it('declares exactly the frameworks its mappings use, the primary one included', () => {
    for (const [key, t] of templates) {
      const used = new Set(t.questions.flatMap((q) => q.control_mappings.map((m) => m.slice(0, m.indexOf(':')))));
      expect(new Set(t.frameworks).size, key).toBe(t.frameworks.length);
      expect([...t.frameworks].sort(), key).toEqual([...used].sort());
      expect(used.has(t.framework), key).toBe(true);
    }
  });

  it('gives options to choice questions only and accepted_types to file_upload questions only', () => {
    for (const [key, t] of templates) {
      for (const q of t.questions) {
        const where = `${key} ${q.id}`;
        expect(QUESTION_TYPES, where).toContain(q.type);
        if (CHOICE_TYPES.includes(q.type)) {
          expect(q.options?.length ?? 0, where).toBeGreaterThanOrEqual(2);
          const values = q.options!.map((o) => o.value);
          expect(new Set(values).size, where).toBe(values.length);
        } else {
          expect(q.options, where).toBeUndefined();
        }
        if (q.type === 'file_upload') {
          expect(q.accepted_types?.length ?? 0, where).toBeGreaterThan(0);
          for (const ext of q.accepted_types!) expect(ext, where).toMatch(/^\.[a-z0-9]+$/);
        } else {
          expect(q.accepted_types, where).toBeUndefined();
        }
        if (q.type !== 'number') {
          expect([q.min, q.max, q.unit], where).toEqual([undefined, undefined, undefined]);
        } else if (q.min !== undefined && q.max !== undefined) {
          expect(q.min, where).toBeLessThan(q.max);
        }
      }
    }
  });

  it('has non-empty texts, and translations that differ from the English text', () => {
    for (const id of TEMPLATE_IDS) {
      const en = texts(get('en', id));
      for (const [where, s] of en) expect(s.trim(), `en/${id} ${where}`).not.toBe('');
      for (const lang of LANGS.filter((l) => l !== 'en')) {
        const tr = texts(get(lang, id));
        expect([...tr.keys()], `${lang}/${id}`).toEqual([...en.keys()]);
        for (const [where, s] of tr) {
          expect(s.trim(), `${lang}/${id} ${where}`).not.toBe('');
          const original = en.get(where)!;
          if (original.length > SHORT_TEXT) expect(s, `${lang}/${id} ${where} is not translated`).not.toBe(original);
        }
      }
    }
  });
});
