import { badRequest } from '../../platform/http/errors.js';
import { FRAMEWORKS, frameworks, isFrameworkId } from '../compliance/index.js';
import { UUID_PATTERN } from '../../platform/http/schemas.js';

/**
 * Questions and answers: the question types of content/questionnaires/README.md, the checks of a
 * question written through the API (the templates are checked by their own content test), and the
 * answer format of each type.
 */

export const QUESTION_TYPES = ['yes_no', 'single_choice', 'multi_choice', 'text_short', 'text_long', 'date', 'number', 'file_upload'] as const;
export type QuestionType = (typeof QUESTION_TYPES)[number];
export const UNITS = ['percent', 'hours', 'minutes', 'days', 'months', 'years', 'count', 'points'] as const;

/** Framework ids a control mapping may name: the template content's, then the other scored ones. */
const TEMPLATE_FRAMEWORKS = [
  'nist-800-53',
  'nist-800-171',
  'cmmc-l2',
  'hipaa',
  'gdpr',
  'iso-27001',
  'nerc-cip',
  'soc2',
  'dfars',
  'sox-itgc',
  'iso-22301',
  'cis-aws',
  'pci-dss',
] as const;
export const MAPPING_FRAMEWORKS: readonly string[] = [...new Set<string>([...TEMPLATE_FRAMEWORKS, ...FRAMEWORKS])];

export interface QuestionOption {
  value: string;
  label: string;
}

export interface Question {
  id: string;
  text: string;
  help?: string;
  type: QuestionType;
  required: boolean;
  options?: QuestionOption[];
  min?: number;
  max?: number;
  unit?: string;
  accepted_types?: string[];
  /** The mappings as the client wrote them (e.g. the spec's `NIST-PE-1`), returned unchanged. */
  control_mappings: string[];
  /** The same mappings normalised to `<framework>:<control_id>`, once each: what the service works with. */
  control_ids: string[];
}

export interface QuestionInput {
  id?: string;
  text?: string;
  help?: string;
  type?: string;
  required?: boolean;
  options?: QuestionOption[];
  min?: number;
  max?: number;
  unit?: string;
  accepted_types?: string[];
  control_mappings?: string[];
  /** Read-only: accepted so that a question read can be written back, refused when it differs. */
  control_ids?: string[];
}

export const LIMITS = { textShort: 500, textLong: 20_000, notes: 10_000, questions: 200 } as const;

const QUESTION_ID = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const OPTION_VALUE = /^[a-z0-9]+(_[a-z0-9]+)*$/;
const EXTENSION = /^\.[a-z0-9]{1,10}$/;
const CONTROL_ID = /^[A-Za-z0-9][A-Za-z0-9 .()-]*[A-Za-z0-9)]$|^[A-Za-z0-9]$/;
/** The spec's example form NIST-PE-1 (family and number, optional enhancement). */
const NIST_SHORTHAND = /^NIST-([A-Za-z]{2})-(\d+)(\(\d+\))?$/;

/**
 * A mapping as stored: `<framework>:<control_id>`. The spec's shorthand `NIST-PE-1` is read as
 * `nist-800-53:PE-1`. Controls of the four core frameworks must exist (and not be withdrawn) in the
 * catalogs under content/frameworks; other frameworks' control ids are checked for shape only.
 */
export function normalizeMapping(raw: string): string {
  const text = raw.trim();
  const short = NIST_SHORTHAND.exec(text);
  const mapping = short ? `nist-800-53:${short[1]!.toUpperCase()}-${Number(short[2])}${short[3] ?? ''}` : text;
  const i = mapping.indexOf(':');
  if (i <= 0) throw badRequest(`control mapping "${raw}" must be "<framework>:<control_id>" (e.g. nist-800-53:AT-2)`);
  const framework = mapping.slice(0, i);
  const control = mapping.slice(i + 1);
  if (!(MAPPING_FRAMEWORKS as readonly string[]).includes(framework)) {
    throw badRequest(`control mapping "${raw}": unknown framework "${framework}" (one of ${MAPPING_FRAMEWORKS.join(', ')})`);
  }
  if (!CONTROL_ID.test(control) || control.length > 60) throw badRequest(`control mapping "${raw}": invalid control id`);
  // A catalog carried as Prowler ships it holds only the requirements Prowler lists (HIPAA's 32 of the
  // Security Rule): another requirement of the standard is checked for shape only, as before it was scored.
  const catalog = isFrameworkId(framework) ? frameworks().get(framework)! : null;
  if (catalog && catalog.prowlerKey === null) {
    const found = catalog.controls.get(control);
    if (!found) throw badRequest(`control mapping "${raw}": ${framework} has no control "${control}"`);
    if (found.withdrawn) throw badRequest(`control mapping "${raw}": ${framework} control "${control}" is withdrawn`);
  }
  return mapping;
}

export function splitMapping(mapping: string): { framework: string; control_id: string } {
  const i = mapping.indexOf(':');
  return { framework: mapping.slice(0, i), control_id: mapping.slice(i + 1) };
}

function sameSet(a: string[], b: string[]): boolean {
  const left = new Set(a);
  return left.size === new Set(b).size && b.every((x) => left.has(x));
}

function normalizeExtension(raw: string): string {
  const ext = raw.trim().toLowerCase();
  return ext.startsWith('.') ? ext : `.${ext}`;
}

/** Checks one question written through the API and returns it in stored form; 400 naming the problem. */
export function normalizeQuestion(input: QuestionInput, id: string): Question {
  const where = `question "${id}"`;
  if (!QUESTION_ID.test(id) || id.length > 80) throw badRequest(`question id "${id}" must be lower-case letters, digits and dashes (at most 80)`);
  const text = input.text?.trim();
  if (!text) throw badRequest(`${where}: text is required`);
  if (!input.type || !(QUESTION_TYPES as readonly string[]).includes(input.type)) {
    throw badRequest(`${where}: type must be one of ${QUESTION_TYPES.join(', ')}`);
  }
  const type = input.type as QuestionType;
  const question: Question = { id, text, type, required: input.required ?? false, control_mappings: [], control_ids: [] };
  const help = input.help?.trim();
  if (help) question.help = help;

  const choice = type === 'single_choice' || type === 'multi_choice';
  if (choice) {
    const options = input.options ?? [];
    if (options.length < 2) throw badRequest(`${where}: ${type} needs at least 2 options`);
    const values = new Set<string>();
    question.options = options.map((o) => {
      if (!OPTION_VALUE.test(o.value)) throw badRequest(`${where}: option value "${o.value}" must be lower-case letters, digits and underscores`);
      if (values.has(o.value)) throw badRequest(`${where}: duplicate option value "${o.value}"`);
      values.add(o.value);
      const label = o.label?.trim();
      if (!label) throw badRequest(`${where}: option "${o.value}" needs a label`);
      return { value: o.value, label };
    });
  } else if (input.options !== undefined) {
    throw badRequest(`${where}: options are only for single_choice and multi_choice questions`);
  }

  if (type === 'number') {
    if (input.min !== undefined) question.min = input.min;
    if (input.max !== undefined) question.max = input.max;
    if (input.min !== undefined && input.max !== undefined && input.min >= input.max) throw badRequest(`${where}: min must be below max`);
    if (input.unit !== undefined) {
      if (!(UNITS as readonly string[]).includes(input.unit)) throw badRequest(`${where}: unit must be one of ${UNITS.join(', ')}`);
      question.unit = input.unit;
    }
  } else if (input.min !== undefined || input.max !== undefined || input.unit !== undefined) {
    throw badRequest(`${where}: min, max and unit are only for number questions`);
  }

  if (type === 'file_upload') {
    const types = [...new Set((input.accepted_types ?? []).map(normalizeExtension))];
    if (types.length === 0) throw badRequest(`${where}: accepted_types (file extensions such as ".pdf") are required for file_upload questions`);
    for (const ext of types) if (!EXTENSION.test(ext)) throw badRequest(`${where}: "${ext}" is not a file extension such as ".pdf"`);
    question.accepted_types = types;
  } else if (input.accepted_types !== undefined) {
    throw badRequest(`${where}: accepted_types are only for file_upload questions`);
  }

  // The client's own spelling is kept (a client compares what it reads with what it wrote); the
  // normalised ids beside it are what attestation, scores and POA&M items use.
  const mappings = [...new Set(input.control_mappings ?? [])];
  question.control_mappings = mappings;
  question.control_ids = [...new Set(mappings.map(normalizeMapping))];
  if (input.control_ids !== undefined && !sameSet(input.control_ids, question.control_ids)) {
    throw badRequest(`${where}: control_ids is read-only (the normalised control_mappings, here ${JSON.stringify(question.control_ids)}): change control_mappings instead`, {
      field: 'control_ids',
    });
  }
  return question;
}

/** Checks a whole question list (ids given or generated, unique); 400 on the first problem. */
export function normalizeQuestions(inputs: QuestionInput[], existing: Question[] = []): Question[] {
  if (existing.length + inputs.length > LIMITS.questions) throw badRequest(`a questionnaire has at most ${LIMITS.questions} questions`);
  const used = new Set(existing.map((q) => q.id));
  const result: Question[] = [];
  for (const input of inputs) {
    const id = input.id ?? nextQuestionId(used);
    if (used.has(id)) throw badRequest(`duplicate question id "${id}"`);
    used.add(id);
    result.push(normalizeQuestion(input, id));
  }
  return result;
}

export function nextQuestionId(used: Set<string>): string {
  let n = used.size + 1;
  while (used.has(`q-${n}`)) n++;
  return `q-${n}`;
}

export type ParsedAnswer = { ok: true; evidenceIds: string[] } | { ok: false; message: string };

const NUMBER = /^-?\d+(\.\d+)?$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

export function isCalendarDate(value: string): boolean {
  const m = DATE.exec(value);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.toISOString().slice(0, 10) === value;
}

/**
 * Checks a non-empty answer against its question's type (the answer formats of the content README).
 * An empty answer means "not answered" and is not passed here.
 */
export function parseAnswer(question: Question, answer: string): ParsedAnswer {
  const fail = (message: string): ParsedAnswer => ({ ok: false, message });
  const ok: ParsedAnswer = { ok: true, evidenceIds: [] };
  switch (question.type) {
    case 'yes_no':
      return answer === 'yes' || answer === 'no' ? ok : fail('answer must be "yes" or "no"');
    case 'single_choice': {
      const values = question.options!.map((o) => o.value);
      return values.includes(answer) ? ok : fail(`answer must be one of ${values.join(', ')}`);
    }
    case 'multi_choice': {
      const values = question.options!.map((o) => o.value);
      const chosen = answer.split(',');
      const unknown = chosen.filter((v) => !values.includes(v));
      if (unknown.length) return fail(`unknown option ${JSON.stringify(unknown[0])}: answer is option values separated by commas (no spaces), of ${values.join(', ')}`);
      if (new Set(chosen).size !== chosen.length) return fail('an option is chosen twice');
      return ok;
    }
    case 'text_short':
      if (/[\r\n]/.test(answer)) return fail('a text_short answer is one line');
      return answer.length <= LIMITS.textShort ? ok : fail(`a text_short answer has at most ${LIMITS.textShort} characters`);
    case 'text_long':
      return answer.length <= LIMITS.textLong ? ok : fail(`a text_long answer has at most ${LIMITS.textLong} characters`);
    case 'date':
      return isCalendarDate(answer) ? ok : fail('answer must be a date YYYY-MM-DD');
    case 'number': {
      if (!NUMBER.test(answer) || !Number.isFinite(Number(answer))) return fail('answer must be a decimal number such as "87.5" or "-12"');
      const n = Number(answer);
      if (question.min !== undefined && n < question.min) return fail(`answer must be at least ${question.min}`);
      if (question.max !== undefined && n > question.max) return fail(`answer must be at most ${question.max}`);
      return ok;
    }
    case 'file_upload': {
      const ids = answer.split(',');
      if (!ids.every((id) => UUID_PATTERN.test(id))) return fail('answer must be attestation-evidence ids separated by commas');
      if (new Set(ids).size !== ids.length) return fail('an evidence id is given twice');
      return { ok: true, evidenceIds: ids.map((id) => id.toLowerCase()) };
    }
  }
}

/**
 * Every control a question list maps to, once each, in first-use order: what an approval attests
 * (contracts section 5) and what control_attestations tracks. Only those of the scored frameworks
 * (nist-800-53, cis-aws, pci-dss, soc2) count in the compliance score; the others (nist-800-171,
 * hipaa, gdpr, ...) are reported by GET /controls/attestations.
 */
export function mappedControls(questions: Question[]): Array<{ framework: string; control_id: string }> {
  const seen = new Map<string, { framework: string; control_id: string }>();
  for (const q of questions) for (const m of q.control_ids) if (!seen.has(m)) seen.set(m, splitMapping(m));
  return [...seen.values()];
}
