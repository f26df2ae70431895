import { COMMON_FIELDS, KIND_FIELDS, SMTP_FIELDS, type FieldDef, type IntegrationKind } from './kinds';

/** A form field's value: text (text, url, secret, number, select, headers), a list, or a switch. */
export type FieldValue = string | string[] | boolean;
export type Values = Record<string, FieldValue>;

export interface Integration {
  id: string;
  type: string;
  name: string;
  status: string;
  disabled_reason: string | null;
  config: Record<string, unknown>;
  created_at: string;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function getPath(config: Record<string, unknown>, path: string): unknown {
  let value: unknown = config;
  for (const part of path.split('.')) value = isObject(value) ? value[part] : undefined;
  return value;
}

function setPath(config: Record<string, unknown>, path: string, value: unknown) {
  const parts = path.split('.');
  let target = config;
  for (const part of parts.slice(0, -1)) {
    if (!isObject(target[part])) target[part] = {};
    target = target[part] as Record<string, unknown>;
  }
  target[parts.at(-1)!] = value;
}

/** Every field the form shows for a type (SMTP only when its own server is chosen). */
export function fieldsOf(kind: IntegrationKind, smtp: boolean): FieldDef[] {
  return [...KIND_FIELDS[kind], ...(kind === 'email' && smtp ? SMTP_FIELDS : []), ...COMMON_FIELDS];
}

function emptyValue(field: FieldDef): FieldValue {
  if (field.kind === 'list') return [];
  if (field.kind === 'boolean') return field.key === 'resolve_on_finding_resolved';
  return '';
}

/** The form's starting values: the integration's visible config, secrets left empty (they are never shown). */
export function initialValues(kind: IntegrationKind, integration: Integration | null): Values {
  const values: Values = {};
  for (const field of fieldsOf(kind, true)) {
    const current = integration && field.kind !== 'secret' && field.kind !== 'headers' ? getPath(integration.config, field.key) : undefined;
    if (current === undefined || current === null) values[field.key] = field.key === 'events' && !integration ? ['finding.created'] : emptyValue(field);
    else if (field.kind === 'list') values[field.key] = Array.isArray(current) ? current.map(String) : [];
    else if (field.kind === 'boolean') values[field.key] = current === true;
    else values[field.key] = String(current);
  }
  return values;
}

/** "Name: value" lines of the headers field, or the first line that is not one. */
export function parseHeaders(text: string): { ok: true; headers: Record<string, string> } | { ok: false; line: string } {
  const headers: Record<string, string> = {};
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const colon = line.indexOf(':');
    if (colon <= 0) return { ok: false, line: line.trim() };
    headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return { ok: true, headers };
}

/**
 * The `config` to send. Creating: the filled fields. Editing (a PUT replaces the top-level fields it
 * gets): every shown field, an emptied optional one as null (removed, so the service's default
 * applies), secrets only when a new value was typed (left out, the stored one is kept).
 */
export function toConfig(kind: IntegrationKind, values: Values, options: { editing: boolean; smtp: boolean; hadSmtp: boolean }): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  for (const field of fieldsOf(kind, options.smtp)) {
    const value = values[field.key];
    const nested = field.key.includes('.');
    let out: unknown;
    if (field.kind === 'list') out = (value as string[]).length ? value : undefined;
    else if (field.kind === 'boolean') out = value;
    else if (field.kind === 'headers') {
      const parsed = parseHeaders(value as string);
      out = parsed.ok && Object.keys(parsed.headers).length ? parsed.headers : undefined;
    } else {
      const text = (value as string).trim();
      out = !text ? undefined : field.kind === 'number' || field.key === 'api_version' ? Number(text) : field.kind === 'secret' ? (value as string) : text;
    }
    if (out !== undefined) setPath(config, field.key, out);
    else if (options.editing && field.kind !== 'secret' && field.kind !== 'headers' && !nested) config[field.key] = null;
  }
  if (options.editing && !isObject(config.filters)) config.filters = null;
  if (options.editing && kind === 'email' && !options.smtp && options.hadSmtp) config.smtp = null;
  return config;
}
