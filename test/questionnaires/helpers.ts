import type { TestApp } from '../harness/app.js';
import { call } from '../harness/identity.js';

/** Shared requests of the questionnaire tests (all over HTTP, through app.inject). */

export interface QuestionJson {
  id: string;
  type: string;
  required: boolean;
  options?: Array<{ value: string; label: string }>;
  min?: number;
  max?: number;
  accepted_types?: string[];
  control_mappings: string[];
}

/** One question of every type, as a custom questionnaire sends them. */
export const ALL_TYPES = [
  { id: 'policy', text: 'Is there an approved policy?', type: 'yes_no', required: true, control_mappings: ['NIST-PE-1'] },
  {
    id: 'cadence',
    text: 'How often is it reviewed?',
    type: 'single_choice',
    required: true,
    options: [
      { value: 'yearly', label: 'Yearly' },
      { value: 'never', label: 'Never' },
    ],
    control_mappings: ['nist-800-53:PE-1'],
  },
  {
    id: 'areas',
    text: 'Which areas are covered?',
    type: 'multi_choice',
    options: [
      { value: 'doors', label: 'Doors' },
      { value: 'racks', label: 'Racks' },
      { value: 'cameras', label: 'Cameras' },
    ],
    control_mappings: ['nist-800-53:PE-3'],
  },
  { id: 'owner', text: 'Who owns it?', type: 'text_short' },
  { id: 'describe', text: 'Describe the procedure.', type: 'text_long', required: true, control_mappings: ['nist-800-53:PE-3', 'nist-800-171:3.10.1'] },
  { id: 'last-test', text: 'When was it last tested?', type: 'date' },
  { id: 'coverage', text: 'Share of sites covered', type: 'number', min: 0, max: 100, unit: 'percent' },
  { id: 'evidence', text: 'Upload the access list.', type: 'file_upload', required: true, accepted_types: ['PDF', '.csv'], control_mappings: ['nist-800-53:PE-2'] },
];

export const api = (tenantId: string) => `/api/v1/tenants/${tenantId}`;

export async function fromTemplate(t: TestApp, token: string, tenantId: string, body: Record<string, unknown> = {}) {
  const res = await call(t.app, token, {
    method: 'POST',
    url: `${api(tenantId)}/questionnaires/from-template`,
    payload: { template_id: 'fedramp-at', ...body },
    expect: 201,
  });
  return res.json();
}

export async function publish(t: TestApp, token: string, tenantId: string, qId: string) {
  return (await call(t.app, token, { method: 'POST', url: `${api(tenantId)}/questionnaires/${qId}/publish`, expect: 200 })).json();
}

export async function assign(t: TestApp, token: string, tenantId: string, qId: string, body: Record<string, unknown>) {
  return (await call(t.app, token, { method: 'POST', url: `${api(tenantId)}/questionnaires/${qId}/assign`, payload: body, expect: 201 })).json().items as Array<
    Record<string, any>
  >;
}

export function respond(t: TestApp, token: string, tenantId: string, aId: string, responses: unknown[]) {
  return call(t.app, token, { method: 'POST', url: `${api(tenantId)}/assessments/${aId}/respond`, payload: { responses } });
}

/** A valid answer for a question of each type (file_upload needs an evidence id). */
export function validAnswer(q: QuestionJson, evidenceIds: string[] = []): string {
  switch (q.type) {
    case 'yes_no':
      return 'yes';
    case 'single_choice':
      return q.options![0]!.value;
    case 'multi_choice':
      return q
        .options!.slice(0, 2)
        .map((o) => o.value)
        .join(',');
    case 'text_short':
      return 'one line';
    case 'text_long':
      return 'line one\nline two';
    case 'date':
      return '2026-06-30';
    case 'number':
      return String(q.min ?? q.max ?? 1);
    case 'file_upload':
      return evidenceIds.join(',');
    default:
      throw new Error(`no answer for type ${q.type}`);
  }
}

/** A multipart/form-data body (fields first, then the file) for app.inject. */
export function multipart(fields: Record<string, string>, file?: { filename: string; contentType: string; content: Buffer }) {
  const boundary = `----cg-test-${Math.random().toString(16).slice(2)}`;
  const chunks: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  }
  if (file) {
    chunks.push(
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${file.filename}"\r\nContent-Type: ${file.contentType}\r\n\r\n`),
      file.content,
      Buffer.from('\r\n'),
    );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

export const PDF = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.from('training records\n%%EOF\n')]);

export async function uploadEvidence(
  t: TestApp,
  token: string,
  tenantId: string,
  fields: Record<string, string>,
  file: { filename: string; contentType: string; content: Buffer } = { filename: 'records.pdf', contentType: 'application/pdf', content: PDF },
) {
  const body = multipart(fields, file);
  return call(t.app, token, { method: 'POST', url: `${api(tenantId)}/attestation-evidence`, payload: body.payload, headers: body.headers });
}

/** Outbox events of a type for a tenant, oldest first. */
export async function eventsOf(t: TestApp, tenantId: string, type: string) {
  return t.deps.database.db.selectFrom('outbox_events').selectAll().where('tenant_id', '=', tenantId).where('type', '=', type).orderBy('seq').execute();
}

export async function auditOf(t: TestApp, tenantId: string, action: string) {
  return t.deps.database.db.selectFrom('audit_logs').selectAll().where('tenant_id', '=', tenantId).where('action', '=', action).orderBy('created_at').execute();
}
