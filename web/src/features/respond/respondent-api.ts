import createClient from 'openapi-fetch';
import type { paths } from '../../api/schema';
import { ApiError, apiErrorOf, unwrap } from '../../api/errors';

/**
 * The outside respondent's API: the link's token as a bearer, never a cookie. A client of its own,
 * without the console session's middleware: a 401 here means the link ended, not the session, and
 * the console's own session (if the browser has one) must not ride along.
 */
export type RespondentAssessment = paths['/api/v1/respond/assessment']['get']['responses'][200]['content']['application/json'];
export type Question = RespondentAssessment['questions'][number];
export type Evidence = RespondentAssessment['evidence'][number];

/** The largest file the service takes (the evidence routes' limit), checked before an upload starts. */
export const MAX_UPLOAD_BYTES = 50 * 1024 * 1024;

/** The token from the link (`/respond#cgr_…`): in the fragment, which browsers never send to a server. */
export function tokenFromLocation(hash: string): string | null {
  const token = decodeURIComponent(hash.replace(/^#/, '')).trim();
  return /^cgr_[0-9A-Za-z]+$/.test(token) ? token : null;
}

export function respondentApi(token: string) {
  const client = createClient<paths>({ baseUrl: '', credentials: 'omit', headers: { authorization: `Bearer ${token}` } });
  return {
    load: async () => unwrap(await client.GET('/api/v1/respond/assessment')),
    save: async (responses: Array<{ question_id: string; answer: string }>) =>
      unwrap(await client.POST('/api/v1/respond/assessment/responses', { body: { responses } })),
    submit: async () => unwrap(await client.POST('/api/v1/respond/assessment/submit')),
    /** Uploads one file for a question, reporting progress (fetch cannot report an upload's progress). */
    upload: (questionId: string, file: File, onProgress: (fraction: number) => void) =>
      new Promise<Evidence>((resolve, reject) => {
        const form = new FormData();
        form.append('question_id', questionId);
        form.append('file', file, file.name);
        const request = new XMLHttpRequest();
        request.open('POST', '/api/v1/respond/evidence');
        request.withCredentials = false;
        request.setRequestHeader('authorization', `Bearer ${token}`);
        request.upload.onprogress = (event) => event.lengthComputable && onProgress(event.loaded / event.total);
        request.onerror = () => reject(new ApiError(0, 'NETWORK', 'the upload was interrupted'));
        request.onload = () => {
          let body: unknown = null;
          try {
            body = JSON.parse(request.responseText);
          } catch {
            // Not JSON (a proxy's page): the status says enough.
          }
          if (request.status === 201) resolve(body as Evidence);
          else reject(apiErrorOf(request.status, request.statusText, body));
        };
        request.send(form);
      }),
  };
}

export type RespondentApi = ReturnType<typeof respondentApi>;
