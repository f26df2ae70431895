import { badRequest } from '../../platform/http/errors.js';
import { requireFrameworkId } from '../compliance/index.js';
import { UUID_PATTERN } from '../../platform/http/schemas.js';
import {
  DEFAULT_GITHUB_API,
  DEFAULT_PAGERDUTY_EVENTS_URL,
  DEFAULT_TIMEOUT_SECONDS,
  EVENT_TYPES,
  MAX_TIMEOUT_SECONDS,
  SECRET_FIELDS,
  SEVERITIES,
  type IntegrationType,
} from './catalog.js';

/**
 * Validation and normalisation of an integration's `config`, one function per type over the common
 * fields. The result carries every default, so what is stored is what is used. Messages name the
 * field (`config.url is required`), and an unknown field is an error (a typo must not pass silently).
 */
export type IntegrationConfig = Record<string, unknown>;

export interface Filters {
  severity?: string[];
  frameworks?: string[];
  resource_types?: string[];
}

const EMAIL = /^[^\s@<>(),;:"[\]]+@[^\s@<>(),;:"[\]]+\.[^\s@<>(),;:"[\]]+$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
/** Headers a user may not set: the transport's own and the signature headers. */
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'content-type',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'proxy-authorization',
  'expect',
  'user-agent',
  'idempotency-key',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
]);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

class Fields {
  readonly out: IntegrationConfig = {};
  private readonly seen = new Set<string>();
  constructor(
    private readonly input: Record<string, unknown>,
    private readonly prefix: string,
  ) {}

  private take(key: string): unknown {
    this.seen.add(key);
    const value = this.input[key];
    return value === null ? undefined : value;
  }

  private name(key: string) {
    return `${this.prefix}.${key}`;
  }

  string(key: string, options: { required?: boolean; max?: number; pattern?: RegExp; patternText?: string; fallback?: string; enum?: readonly string[] } = {}): string | undefined {
    const value = this.take(key);
    if (value === undefined) {
      if (options.required) throw badRequest(`${this.name(key)} is required`);
      if (options.fallback !== undefined) this.out[key] = options.fallback;
      return options.fallback;
    }
    if (typeof value !== 'string') throw badRequest(`${this.name(key)} must be a string`);
    const text = value.trim();
    if (!text) {
      if (options.required) throw badRequest(`${this.name(key)} is required`);
      throw badRequest(`${this.name(key)} must not be empty`);
    }
    if (text.length > (options.max ?? 2000)) throw badRequest(`${this.name(key)} must be at most ${options.max ?? 2000} characters`);
    if (options.enum && !options.enum.includes(text)) throw badRequest(`${this.name(key)} must be one of ${options.enum.join(', ')}`);
    if (options.pattern && !options.pattern.test(text)) throw badRequest(`${this.name(key)} ${options.patternText ?? 'has an invalid format'}`);
    this.out[key] = text;
    return text;
  }

  url(key: string, options: { required?: boolean; fallback?: string } = {}): string | undefined {
    const text = this.string(key, { required: options.required, fallback: options.fallback, max: 2000 });
    if (text === undefined) return undefined;
    let parsed: URL;
    try {
      parsed = new URL(text);
    } catch {
      throw badRequest(`${this.name(key)} must be an absolute URL`);
    }
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw badRequest(`${this.name(key)} must be an https:// URL`);
    if (parsed.username || parsed.password) throw badRequest(`${this.name(key)} must not carry credentials`);
    if (parsed.hash) throw badRequest(`${this.name(key)} must not have a #fragment`);
    return text;
  }

  strings(key: string, options: { required?: boolean; max?: number; item?: (value: string, name: string) => string; fallback?: string[] } = {}): string[] | undefined {
    const value = this.take(key);
    if (value === undefined) {
      if (options.required) throw badRequest(`${this.name(key)} is required`);
      if (options.fallback) this.out[key] = options.fallback;
      return options.fallback;
    }
    if (!Array.isArray(value)) throw badRequest(`${this.name(key)} must be an array of strings`);
    if (options.required && value.length === 0) throw badRequest(`${this.name(key)} must not be empty`);
    if (value.length > (options.max ?? 100)) throw badRequest(`${this.name(key)} must have at most ${options.max ?? 100} items`);
    const items: string[] = [];
    for (const [i, item] of value.entries()) {
      if (typeof item !== 'string' || !item.trim()) throw badRequest(`${this.name(key)}[${i}] must be a non-empty string`);
      if (item.length > 500) throw badRequest(`${this.name(key)}[${i}] must be at most 500 characters`);
      const normalised = options.item ? options.item(item.trim(), `${this.name(key)}[${i}]`) : item.trim();
      if (!items.includes(normalised)) items.push(normalised);
    }
    this.out[key] = items;
    return items;
  }

  integer(key: string, options: { min: number; max: number; fallback?: number }): number | undefined {
    const value = this.take(key);
    if (value === undefined) {
      if (options.fallback !== undefined) this.out[key] = options.fallback;
      return options.fallback;
    }
    if (typeof value !== 'number' || !Number.isInteger(value) || value < options.min || value > options.max) {
      throw badRequest(`${this.name(key)} must be an integer from ${options.min} to ${options.max}`);
    }
    this.out[key] = value;
    return value;
  }

  boolean(key: string, fallback: boolean): boolean {
    const value = this.take(key);
    if (value === undefined) {
      this.out[key] = fallback;
      return fallback;
    }
    if (typeof value !== 'boolean') throw badRequest(`${this.name(key)} must be true or false`);
    this.out[key] = value;
    return value;
  }

  object(key: string, read: (fields: Fields) => void): IntegrationConfig | undefined {
    const value = this.take(key);
    if (value === undefined) return undefined;
    if (!isObject(value)) throw badRequest(`${this.name(key)} must be an object`);
    const nested = new Fields(value, this.name(key));
    read(nested);
    nested.done();
    this.out[key] = nested.out;
    return nested.out;
  }

  headers(key: string): void {
    const value = this.take(key);
    if (value === undefined) return;
    if (!isObject(value)) throw badRequest(`${this.name(key)} must be an object of header names to string values`);
    const entries = Object.entries(value);
    if (entries.length > 20) throw badRequest(`${this.name(key)} must have at most 20 headers`);
    const headers: Record<string, string> = {};
    for (const [name, raw] of entries) {
      if (!HEADER_NAME.test(name)) throw badRequest(`${this.name(key)}: "${name}" is not a valid header name`);
      const lower = name.toLowerCase();
      if (RESERVED_HEADERS.has(lower) || lower.startsWith('x-controlgraph-')) throw badRequest(`${this.name(key)}: ${name} is set by the service and cannot be configured`);
      if (typeof raw !== 'string' || raw.length > 4000 || /[\r\n\0]/.test(raw)) throw badRequest(`${this.name(key)}.${name} must be a string without line breaks`);
      headers[name] = raw;
    }
    this.out[key] = headers;
  }

  /** Unknown fields are an error. */
  done(): void {
    for (const key of Object.keys(this.input)) {
      if (!this.seen.has(key)) throw badRequest(`${this.name(key)} is not a known field`);
    }
  }
}

function commonFields(fields: Fields, options: { eventsRequired: boolean }): void {
  fields.strings('events', {
    required: options.eventsRequired,
    max: EVENT_TYPES.length,
    item: (value, name) => {
      if (!(EVENT_TYPES as readonly string[]).includes(value)) throw badRequest(`${name}: unknown event type "${value}"`, { known: [...EVENT_TYPES] });
      return value;
    },
  });
  fields.object('filters', (filters) => {
    filters.strings('severity', {
      max: SEVERITIES.length,
      item: (value, name) => {
        const upper = value.toUpperCase();
        if (!(SEVERITIES as readonly string[]).includes(upper)) throw badRequest(`${name} must be one of ${SEVERITIES.join(', ')}`);
        return upper;
      },
    });
    // An unknown id would never match an event: refuse it, naming the valid ones.
    filters.strings('frameworks', { max: 100, item: (value, name) => requireFrameworkId(value, name) });
    filters.strings('resource_types', { max: 200 });
  });
  fields.strings('workspaces', {
    max: 100,
    item: (value, name) => {
      if (!UUID_PATTERN.test(value)) throw badRequest(`${name} must be a workspace id (UUID)`);
      return value.toLowerCase();
    },
  });
  fields.integer('timeout_seconds', { min: 1, max: MAX_TIMEOUT_SECONDS, fallback: DEFAULT_TIMEOUT_SECONDS });
}

const email = (value: string, name: string) => {
  if (!EMAIL.test(value)) throw badRequest(`${name} must be an e-mail address`);
  return value;
};

const TYPE_FIELDS: Record<IntegrationType, (fields: Fields) => void> = {
  webhook(fields) {
    fields.url('url', { required: true });
    fields.string('secret', { required: true, max: 512 });
    fields.headers('headers');
  },
  slack(fields) {
    fields.url('url', { required: true });
  },
  teams(fields) {
    fields.url('url', { required: true });
    fields.string('format', { enum: ['adaptive_card', 'message_card'], fallback: 'adaptive_card' });
  },
  jira(fields) {
    fields.url('base_url', { required: true });
    fields.string('project_key', { required: true, max: 50, pattern: /^[A-Z][A-Z0-9_]{0,49}$/, patternText: 'must be a Jira project key (e.g. SEC)' });
    fields.string('issue_type', { max: 100, fallback: 'Task' });
    fields.integer('api_version', { min: 2, max: 3, fallback: 3 });
    fields.string('email', { max: 300, pattern: EMAIL, patternText: 'must be an e-mail address' });
    fields.string('api_token', { required: true, max: 1000 });
    fields.strings('labels', {
      max: 20,
      fallback: ['controlgraph'],
      item: (v, name) => {
        if (/\s/.test(v)) throw badRequest(`${name}: Jira labels cannot contain spaces`);
        return v;
      },
    });
  },
  github(fields) {
    fields.url('api_url', { fallback: DEFAULT_GITHUB_API });
    fields.string('repository', { required: true, max: 200, pattern: /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/, patternText: 'must be owner/repo' });
    fields.string('token', { required: true, max: 1000 });
    fields.strings('labels', { max: 20, fallback: ['controlgraph'] });
  },
  pagerduty(fields) {
    fields.url('events_url', { fallback: DEFAULT_PAGERDUTY_EVENTS_URL });
    fields.string('routing_key', { required: true, max: 200 });
    fields.string('source', { max: 255, fallback: 'controlgraph' });
    fields.boolean('resolve_on_finding_resolved', true);
  },
  email(fields) {
    fields.strings('to', { required: true, max: 50, item: email });
    fields.strings('cc', { max: 50, item: email });
    fields.string('subject_prefix', { max: 100, fallback: '[ControlGraph]' });
    fields.object('smtp', (smtp) => {
      smtp.string('host', { required: true, max: 253 });
      smtp.integer('port', { min: 1, max: 65535, fallback: 587 });
      smtp.boolean('secure', false);
      smtp.string('username', { max: 300 });
      smtp.string('password', { max: 1000 });
      smtp.string('from', { required: true, max: 300, pattern: EMAIL, patternText: 'must be an e-mail address' });
    });
  },
};

/** Validates and normalises a full configuration of the type; throws 400 naming the first problem. */
export function normaliseConfig(type: IntegrationType, config: unknown): IntegrationConfig {
  if (!isObject(config)) throw badRequest('config must be an object');
  const fields = new Fields(config, 'config');
  TYPE_FIELDS[type](fields);
  commonFields(fields, { eventsRequired: true });
  fields.done();
  return fields.out;
}

/**
 * A PUT's config over the current one: given top-level fields replace, null removes an optional one.
 * A nested object given whole keeps the nested secrets it leaves out (`smtp` without `password` keeps
 * the stored password): secrets are never shown, so no client can send them back.
 */
export function mergeConfig(current: IntegrationConfig, patch: Record<string, unknown>, secretPaths: readonly string[] = []): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  for (const path of secretPaths) {
    const [parent, leaf, ...deeper] = path.split('.');
    if (!parent || !leaf || deeper.length) continue;
    const given = patch[parent];
    const before = current[parent];
    if (isObject(given) && isObject(before) && !(leaf in given) && before[leaf] !== undefined) merged[parent] = { ...given, [leaf]: before[leaf] };
  }
  return merged;
}

function getPath(config: IntegrationConfig, path: string): unknown {
  let value: unknown = config;
  for (const part of path.split('.')) value = isObject(value) ? value[part] : undefined;
  return value;
}

function deletePath(config: IntegrationConfig, path: string): void {
  const parts = path.split('.');
  let target: unknown = config;
  for (const part of parts.slice(0, -1)) target = isObject(target) ? target[part] : undefined;
  if (isObject(target)) delete target[parts.at(-1)!];
}

function setPath(config: IntegrationConfig, path: string, value: unknown): void {
  const parts = path.split('.');
  let target: Record<string, unknown> = config;
  for (const part of parts.slice(0, -1)) {
    if (!isObject(target[part])) target[part] = {};
    target = target[part] as Record<string, unknown>;
  }
  target[parts.at(-1)!] = value;
}

/** Splits a normalised configuration into what may be shown and what is sealed. */
export function splitSecrets(type: IntegrationType, config: IntegrationConfig): { visible: IntegrationConfig; secrets: Record<string, unknown> } {
  const visible = structuredClone(config);
  const secrets: Record<string, unknown> = {};
  for (const path of SECRET_FIELDS[type]) {
    const value = getPath(config, path);
    if (value !== undefined) secrets[path] = value;
    deletePath(visible, path);
  }
  return { visible, secrets };
}

/** The full configuration again, for sending. */
export function joinSecrets(visible: IntegrationConfig, secrets: Record<string, unknown>): IntegrationConfig {
  const config = structuredClone(visible);
  for (const [path, value] of Object.entries(secrets)) setPath(config, path, value);
  return config;
}

/**
 * What responses show of the secret fields after creation: secret URLs by their origin only, header
 * names with the values masked; signing secrets, tokens and passwords not at all.
 */
export function redactedSecrets(type: IntegrationType, secrets: Record<string, unknown>): IntegrationConfig {
  const shown: IntegrationConfig = {};
  for (const [path, value] of Object.entries(secrets)) {
    if (path === 'url' && typeof value === 'string') {
      try {
        shown.url = `${new URL(value).origin}/…`;
      } catch {
        // never stored unparsable
      }
    } else if (path === 'headers' && isObject(value)) {
      shown.headers = Object.fromEntries(Object.keys(value).map((name) => [name, '********']));
    }
  }
  void type;
  return shown;
}

export function filtersOf(config: IntegrationConfig): Filters {
  return (isObject(config.filters) ? config.filters : {}) as Filters;
}
