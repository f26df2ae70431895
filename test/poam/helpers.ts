import type { TestApp } from '../harness/app.js';
import { call } from '../harness/identity.js';

export const DAY = 86_400_000;

export const manualItem = (overrides: Record<string, unknown> = {}) => ({
  weakness_name: 'MFA not enforced for console users',
  weakness_description: 'Three IAM users can sign in to the console without MFA.',
  control_ids: ['IA-2(1)', 'ac-2'],
  severity: 'HIGH',
  point_of_contact: 'identity-team',
  ...overrides,
});

export function poamApi(t: TestApp, tenantId: string) {
  const base = `/api/v1/tenants/${tenantId}/poam`;
  return {
    base,
    create: (token: string, payload: Record<string, unknown>, expect?: number) => call(t.app, token, { method: 'POST', url: base, payload, expect }),
    get: (token: string, id: string, expect?: number) => call(t.app, token, { url: `${base}/${id}`, expect }),
    list: (token: string, query = '', expect?: number) => call(t.app, token, { url: `${base}${query ? `?${query}` : ''}`, expect }),
    put: (token: string, id: string, payload: Record<string, unknown>, expect?: number) => call(t.app, token, { method: 'PUT', url: `${base}/${id}`, payload, expect }),
    remove: (token: string, id: string, expect?: number) => call(t.app, token, { method: 'DELETE', url: `${base}/${id}`, expect }),
    status: (token: string, id: string, payload: Record<string, unknown>, expect?: number) => call(t.app, token, { method: 'PATCH', url: `${base}/${id}/status`, payload, expect }),
    comment: (token: string, id: string, text: string, expect?: number) => call(t.app, token, { method: 'POST', url: `${base}/${id}/comments`, payload: { text }, expect }),
    upload: (token: string, id: string, content: Buffer | string, filename = 'evidence.txt', options: { description?: string; contentType?: string } = {}) => {
      const boundary = '----cgpoamtest';
      const parts: Buffer[] = [];
      if (options.description !== undefined) {
        parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="description"\r\n\r\n${options.description}\r\n`));
      }
      parts.push(
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: ${options.contentType ?? 'text/plain'}\r\n\r\n`),
        Buffer.isBuffer(content) ? content : Buffer.from(content),
        Buffer.from(`\r\n--${boundary}--\r\n`),
      );
      return call(t.app, token, {
        method: 'POST',
        url: `${base}/${id}/evidence`,
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
        payload: Buffer.concat(parts),
      });
    },
  };
}

/** Audit-log entries of a target, oldest first. */
export function auditOf(t: TestApp, tenantId: string, targetId: string) {
  return t.deps.database.db.selectFrom('audit_logs').selectAll().where('tenant_id', '=', tenantId).where('target_id', '=', targetId).orderBy('created_at').execute();
}
