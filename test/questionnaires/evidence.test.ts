import { createHash } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { request as httpRequest } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { bearer, buildTenant, call, type TenantFixture } from '../harness/identity.js';
import { MAX_EVIDENCE_BYTES } from '../../src/modules/questionnaires/evidence-service.js';
import { api, assign, fromTemplate, multipart, PDF, publish, respond, uploadEvidence, validAnswer, type QuestionJson } from './helpers.js';

/**
 * Attestation evidence: multipart upload streamed to the artifact store (SHA-256, 50 MiB limit with
 * 413 above and nothing kept, no memory growth), accepted_types and content checks, who may upload
 * and read, download, and 503 without artifact storage.
 */
let t: TestApp;
let tenant: TenantFixture;
let other: TenantFixture;
let aId: string;
let questions: QuestionJson[];
let upload: QuestionJson;
const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
  other = await buildTenant(t);
  const q = await fromTemplate(t, tenant.admin.token, tenant.id, { template_id: 'fedramp-at' });
  await publish(t, tenant.admin.token, tenant.id, q.id);
  const [a] = await assign(t, tenant.admin.token, tenant.id, q.id, { assignees: [tenant.users['read-only'].user_id] });
  aId = a!.id;
  questions = q.questions;
  upload = questions.find((x) => x.type === 'file_upload')!;
});
afterAll(() => t.close());

const respondent = () => tenant.users['read-only'].token;
const fields = (overrides: Record<string, string> = {}) => ({ assessment_id: aId, question_id: upload.id, ...overrides });
const artifactRoot = () => t.deps.config.artifactStore.slice('file://'.length);
function filesUnder(dir: string): string[] {
  try {
    return readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => join(e.parentPath, e.name));
  } catch {
    return [];
  }
}
const evidenceFiles = () => filesUnder(join(artifactRoot(), 'tenants', tenant.id, 'attestation-evidence'));

describe('POST /attestation-evidence', () => {
  it('201: the assignee (a read-only user) uploads a PDF; SHA-256, size and type are recorded and the file is stored', async () => {
    const res = await uploadEvidence(t, respondent(), tenant.id, { ...fields(), description: 'LMS completion export' });
    expect(res.statusCode).toBe(201);
    const e = res.json();
    expect(e).toMatchObject({
      assessment_id: aId,
      question_id: upload.id,
      filename: 'records.pdf',
      extension: '.pdf',
      content_type: 'application/pdf',
      size_bytes: PDF.length,
      sha256: createHash('sha256').update(PDF).digest('hex'),
      description: 'LMS completion export',
      uploaded_by: tenant.users['read-only'].user_id,
      download_url: `${api(tenant.id)}/attestation-evidence/${e.id}/download`,
    });
    expect(evidenceFiles().map((f) => f.split('/').at(-1))).toContain(e.id);
  });

  it('records the extension type for a generic content type, and accepts a zip-based .xlsx', async () => {
    const xlsx = Buffer.concat([Buffer.from('PK\x03\x04', 'latin1'), Buffer.alloc(100, 1)]);
    const res = await uploadEvidence(t, respondent(), tenant.id, fields(), { filename: 'Roster 2026.XLSX', contentType: 'application/octet-stream', content: xlsx });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ extension: '.xlsx', content_type: XLSX_TYPE, filename: 'Roster 2026.XLSX', size_bytes: 104 });
  });

  it('400: extension not in accepted_types, content type not fitting the extension, content not of the format', async () => {
    const cases: Array<[{ filename: string; contentType: string; content: Buffer }, RegExp]> = [
      [
        { filename: 'tool.exe', contentType: 'application/octet-stream', content: Buffer.from('MZ') },
        /file type ".exe" is not accepted for question .* \(accepted: \.pdf, \.xlsx, \.csv, \.docx, \.pptx\)/,
      ],
      [{ filename: 'noextension', contentType: 'application/pdf', content: PDF }, /is not accepted/],
      [{ filename: 'records.pdf', contentType: 'image/png', content: PDF }, /content type "image\/png" does not match a \.pdf file/],
      [{ filename: 'records.pdf', contentType: 'application/pdf', content: Buffer.from('MZ\x90\x00 not a pdf at all') }, /the file's content is not a \.pdf file/],
      [{ filename: 'slides.pptx', contentType: 'application/vnd.openxmlformats-officedocument.presentationml.presentation', content: PDF }, /not a \.pptx file/],
    ];
    const before = evidenceFiles().length;
    for (const [file, message] of cases) {
      const res = await uploadEvidence(t, respondent(), tenant.id, fields(), file);
      expect(res.statusCode, file.filename).toBe(400);
      expect(res.json().error.message).toMatch(message);
    }
    expect(evidenceFiles().length).toBe(before);
  });

  it('400: a question that is not file_upload, an unknown question, fields after the file, no file, not multipart', async () => {
    const text = questions.find((q) => q.type === 'text_long')!;
    const notUpload = await uploadEvidence(t, respondent(), tenant.id, fields({ question_id: text.id }));
    expect(notUpload.statusCode).toBe(400);
    expect(notUpload.json().error.message).toBe(`question "${text.id}" is not a file_upload question`);
    expect((await uploadEvidence(t, respondent(), tenant.id, fields({ question_id: 'nope' }))).json().error.message).toMatch(/not in this assessment's questionnaire/);
    const late = multipart({}, { filename: 'records.pdf', contentType: 'application/pdf', content: PDF });
    const lateRes = await call(t.app, respondent(), { method: 'POST', url: `${api(tenant.id)}/attestation-evidence`, payload: late.payload, headers: late.headers });
    expect(lateRes.statusCode).toBe(400);
    expect(lateRes.json().error.message).toBe('the fields assessment_id and question_id must come before the file part');
    const none = multipart(fields());
    const noneRes = await call(t.app, respondent(), { method: 'POST', url: `${api(tenant.id)}/attestation-evidence`, payload: none.payload, headers: none.headers });
    expect(noneRes.statusCode).toBe(400);
    expect(noneRes.json().error.message).toMatch(/no file part/);
    const json = await call(t.app, respondent(), { method: 'POST', url: `${api(tenant.id)}/attestation-evidence`, payload: fields() });
    expect(json.statusCode).toBe(400);
    expect(json.json().error.message).toBe('expected a multipart/form-data upload');
  });

  it('403 for anyone but the assignee; 404 for an assessment of another tenant; 401 without a token', async () => {
    const analyst = await uploadEvidence(t, tenant.users['security-analyst'].token, tenant.id, fields());
    expect(analyst.statusCode).toBe(403);
    expect(analyst.json().error.message).toBe('only the assignee may answer this assessment');
    const foreign = await uploadEvidence(t, other.admin.token, other.id, fields());
    expect(foreign.statusCode).toBe(404);
    const body = multipart(fields(), { filename: 'records.pdf', contentType: 'application/pdf', content: PDF });
    expect((await t.app.inject({ method: 'POST', url: `${api(tenant.id)}/attestation-evidence`, payload: body.payload, headers: body.headers })).statusCode).toBe(401);
  });
});

describe('reading evidence', () => {
  it('list and read need attestation_evidence:read: auditors yes, read-only no', async () => {
    const denied = await call(t.app, respondent(), { url: `${api(tenant.id)}/attestation-evidence` });
    expect(denied.statusCode).toBe(403);
    expect(denied.json().error.message).toBe('missing permission attestation_evidence:read');
    const list = await call(t.app, tenant.users.auditor.token, { url: `${api(tenant.id)}/attestation-evidence?assessment_id=${aId}`, expect: 200 });
    expect(list.json().total).toBeGreaterThanOrEqual(2);
    const first = list.json().items.at(-1);
    const one = await call(t.app, tenant.users.auditor.token, { url: `${api(tenant.id)}/attestation-evidence/${first.id}`, expect: 200 });
    expect(one.json()).toEqual(first);
    expect((await call(t.app, other.admin.token, { url: `${api(other.id)}/attestation-evidence/${first.id}` })).statusCode).toBe(404);
    expect((await call(t.app, other.admin.token, { url: `${api(other.id)}/attestation-evidence` })).json().total).toBe(0);
  });

  it('download returns the bytes with type, length, attachment name and checksum', async () => {
    const list = (await call(t.app, tenant.users.auditor.token, { url: `${api(tenant.id)}/attestation-evidence?question_id=${upload.id}`, expect: 200 })).json();
    const pdf = list.items.find((e: { extension: string }) => e.extension === '.pdf');
    const res = await call(t.app, tenant.users.auditor.token, { url: `${api(tenant.id)}/attestation-evidence/${pdf.id}/download`, expect: 200 });
    expect(res.rawPayload.equals(PDF)).toBe(true);
    expect(res.headers).toMatchObject({
      'content-type': 'application/pdf',
      'content-length': String(PDF.length),
      'content-disposition': `attachment; filename="records.pdf"; filename*=UTF-8''records.pdf`,
      'x-checksum-sha256': pdf.sha256,
      'x-content-type-options': 'nosniff',
    });
    expect((await call(t.app, respondent(), { url: `${api(tenant.id)}/attestation-evidence/${pdf.id}/download` })).statusCode).toBe(403);
  });

  it('download shows a PDF in the page only when asked (disposition=inline), and never a file a browser could run', async () => {
    const list = (await call(t.app, tenant.users.auditor.token, { url: `${api(tenant.id)}/attestation-evidence?question_id=${upload.id}`, expect: 200 })).json();
    const pdf = list.items.find((e: { extension: string }) => e.extension === '.pdf');
    const url = `${api(tenant.id)}/attestation-evidence/${pdf.id}/download`;
    const inline = await call(t.app, tenant.users.auditor.token, { url: `${url}?disposition=inline`, expect: 200 });
    expect(inline.headers['content-disposition']).toBe(`inline; filename="records.pdf"; filename*=UTF-8''records.pdf`);
    expect(inline.headers['content-type']).toBe('application/pdf');
    expect(inline.rawPayload.equals(PDF)).toBe(true);
    // The same permission as the attachment: the respondent may not read it this way either.
    expect((await call(t.app, respondent(), { url: `${url}?disposition=inline` })).statusCode).toBe(403);
    expect((await call(t.app, tenant.users.auditor.token, { url: `${url}?disposition=open` })).statusCode).toBe(400);
    // The .xlsx uploaded above: never shown in the page, whatever is asked.
    const xlsx = list.items.find((e: { extension: string }) => e.extension === '.xlsx');
    const res = await call(t.app, tenant.users.auditor.token, { url: `${api(tenant.id)}/attestation-evidence/${xlsx.id}/download?disposition=inline`, expect: 200 });
    expect(res.headers['content-disposition']).toMatch(/^attachment; /);
  });

  it('an answer may only name evidence of the same assessment and question', async () => {
    const list = (await call(t.app, tenant.users.auditor.token, { url: `${api(tenant.id)}/attestation-evidence`, expect: 200 })).json();
    const ids = list.items.map((e: { id: string }) => e.id);
    const ok = await respond(t, respondent(), tenant.id, aId, [{ question_id: upload.id, answer: ids.join(',') }]);
    expect(ok.statusCode).toBe(200);
    expect(ok.json().evidence).toHaveLength(ids.length);
    const unknown = await respond(t, respondent(), tenant.id, aId, [{ question_id: upload.id, answer: '00000000-0000-4000-8000-000000000000' }]);
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().error.details.errors[0]).toMatchObject({ question_id: upload.id, message: expect.stringMatching(/was not uploaded to this assessment and question/) });
  });
});

// Garbage (socket buffers) is collected late; a forced collection before sampling shows what is retained.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
/** Bytes between two memory samples: a dozen samples per 50 MiB, whatever the speed of the machine. */
const SAMPLE_EVERY = 4 * 1024 * 1024;

/**
 * Streams a multipart upload of `size` bytes (a PDF header, then zeros) over a real socket. Memory is
 * sampled (after a forced collection) every few MiB the client has written: sending waits for the
 * server to take the bytes (backpressure), so a server holding the file would show it growing.
 */
async function streamUpload(base: string, token: string, size: number): Promise<{ status: number; body: any; peakRssGrowth: number; sha256: string }> {
  const boundary = '----cg-big-upload';
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="assessment_id"\r\n\r\n${aId}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="question_id"\r\n\r\n${upload.id}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.pdf"\r\nContent-Type: application/pdf\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const chunk = Buffer.alloc(256 * 1024);
  const hash = createHash('sha256');
  gc();
  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  const sample = () => {
    gc();
    peak = Math.max(peak, process.memoryUsage().rss);
  };
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}${api(tenant.id)}/attestation-evidence`, {
      method: 'POST',
      headers: { ...bearer(token), 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(head.length + size + tail.length) },
    });
    req.on('response', (res) => {
      sample();
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(parts).toString()), peakRssGrowth: peak - baseline, sha256: hash.digest('hex') }));
    });
    req.on('error', reject);
    const write = async () => {
      const pdfHead = Buffer.from('%PDF-1.7\n');
      req.write(head);
      req.write(pdfHead);
      hash.update(pdfHead);
      let left = size - pdfHead.length;
      let sinceSample = 0;
      while (left > 0) {
        const piece = left >= chunk.length ? chunk : chunk.subarray(0, left);
        hash.update(piece);
        left -= piece.length;
        sinceSample += piece.length;
        if (!req.write(piece)) await new Promise((r) => req.once('drain', r));
        if (sinceSample >= SAMPLE_EVERY) {
          sinceSample = 0;
          sample();
        }
      }
      req.end(tail);
    };
    write().catch(reject);
  });
}

describe('the 50 MiB limit, streamed', () => {
  let base: string;
  beforeAll(async () => {
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });

  it('exactly 50 MiB passes, without the process growing by anything near the file size', async () => {
    const result = await streamUpload(base, respondent(), MAX_EVIDENCE_BYTES);
    expect(result.status, JSON.stringify(result.body)).toBe(201);
    expect(result.body).toMatchObject({ size_bytes: MAX_EVIDENCE_BYTES, sha256: result.sha256 });
    expect(statSync(evidenceFiles().find((f) => f.endsWith(result.body.id))!).size).toBe(MAX_EVIDENCE_BYTES);
    expect(result.peakRssGrowth).toBeLessThan(MAX_EVIDENCE_BYTES / 3);
    // The download streams the same bytes back.
    const download = await fetch(`${base}${api(tenant.id)}/attestation-evidence/${result.body.id}/download`, { headers: bearer(tenant.users.auditor.token) });
    const back = createHash('sha256');
    for await (const part of download.body as unknown as AsyncIterable<Uint8Array>) back.update(part);
    expect(back.digest('hex')).toBe(result.sha256);
  }, 180_000);

  it('one byte more is 413; no record and no file are kept, and memory stays flat', async () => {
    const before = (await call(t.app, tenant.users.auditor.token, { url: `${api(tenant.id)}/attestation-evidence`, expect: 200 })).json().total;
    const files = evidenceFiles().length;
    const result = await streamUpload(base, respondent(), MAX_EVIDENCE_BYTES + 1);
    expect(result.status).toBe(413);
    expect(result.body.error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', message: 'evidence file exceeds the 50 MiB limit' });
    expect(result.peakRssGrowth).toBeLessThan(MAX_EVIDENCE_BYTES / 3);
    expect((await call(t.app, tenant.users.auditor.token, { url: `${api(tenant.id)}/attestation-evidence`, expect: 200 })).json().total).toBe(before);
    expect(evidenceFiles().length).toBe(files);
    expect(evidenceFiles().filter((f) => f.endsWith('.partial'))).toEqual([]);
  }, 180_000);
});

describe('after submission', () => {
  it('400: no uploads to a submitted assessment', async () => {
    const answers = questions.filter((q) => q.type !== 'file_upload').map((q) => ({ question_id: q.id, answer: validAnswer(q) }));
    await respond(t, respondent(), tenant.id, aId, answers);
    await call(t.app, respondent(), { method: 'POST', url: `${api(tenant.id)}/assessments/${aId}/submit`, expect: 200 });
    const res = await uploadEvidence(t, respondent(), tenant.id, fields());
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toBe('assessment is submitted: responses are read-only');
  });
});

describe('without artifact storage (ARTIFACT_STORE=none)', () => {
  let bare: TestApp;
  let owner: TenantFixture;
  beforeAll(async () => {
    bare = await createTestApp({ artifactStore: 'none' });
    owner = await buildTenant(bare);
  });
  afterAll(() => bare.close());

  it('every evidence endpoint answers 503 artifact storage not configured', async () => {
    const id = '00000000-0000-4000-8000-000000000000';
    const body = multipart({ assessment_id: id, question_id: 'x' }, { filename: 'records.pdf', contentType: 'application/pdf', content: PDF });
    const requests = [
      { method: 'POST' as const, url: `${api(owner.id)}/attestation-evidence`, payload: body.payload, headers: body.headers },
      { method: 'GET' as const, url: `${api(owner.id)}/attestation-evidence` },
      { method: 'GET' as const, url: `${api(owner.id)}/attestation-evidence/${id}` },
      { method: 'GET' as const, url: `${api(owner.id)}/attestation-evidence/${id}/download` },
    ];
    for (const r of requests) {
      const res = await call(bare.app, owner.admin.token, r);
      expect(res.statusCode, `${r.method} ${r.url}`).toBe(503);
      expect(res.json().error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: 'artifact storage not configured' });
    }
  });
});
