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

/** What the form shows of an assessment: the outside respondent's view; only theirs has a link. */
export type FormAssessment = Omit<RespondentAssessment, 'link'> & { link?: RespondentAssessment['link'] };

/**
 * What the form needs of the service. Two implementations: this one (a link's token) and the
 * signed-in assignee's (features/assessments/assignee-api.ts), so one form serves both.
 */
export interface RespondentApi<A extends FormAssessment = FormAssessment> {
  load(): Promise<A>;
  save(responses: Array<{ question_id: string; answer: string }>): Promise<A>;
  submit(): Promise<A>;
  /** Uploads one file for a question, reporting progress. */
  upload(questionId: string, file: File, onProgress: (fraction: number) => void): Promise<Evidence>;
}

/**
 * POSTs a multipart form with upload progress (fetch cannot report an upload's progress). Resolves
 * with the 201's body; anything else becomes the service's error.
 */
export function postWithProgress<T>(
  url: string,
  form: FormData,
  options: { headers: Record<string, string>; withCredentials: boolean },
  onProgress: (fraction: number) => void,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open('POST', url);
    request.withCredentials = options.withCredentials;
    for (const [name, value] of Object.entries(options.headers)) request.setRequestHeader(name, value);
    request.upload.onprogress = (event) => event.lengthComputable && onProgress(event.loaded / event.total);
    request.onerror = () => reject(new ApiError(0, 'NETWORK', 'the upload was interrupted'));
    request.onload = () => {
      let body: unknown = null;
      try {
        body = JSON.parse(request.responseText);
      } catch {
        // Not JSON (a proxy's page): the status says enough.
      }
      if (request.status === 201) resolve(body as T);
      else reject(apiErrorOf(request.status, request.statusText, body));
    };
    request.send(form);
  });
}

export function respondentApi(token: string, lang: string): RespondentApi<RespondentAssessment> {
  const client = createClient<paths>({ baseUrl: '', credentials: 'omit', headers: { authorization: `Bearer ${token}` } });
  // The questionnaire in the page's language where its template has it (every answer returns it again).
  const params = { query: { lang } };
  return {
    load: async () => unwrap(await client.GET('/api/v1/respond/assessment', { params })),
    save: async (responses) => unwrap(await client.POST('/api/v1/respond/assessment/responses', { params, body: { responses } })),
    submit: async () => unwrap(await client.POST('/api/v1/respond/assessment/submit', { params })),
    upload: async (questionId, file, onProgress) => {
      const form = new FormData();
      form.append('question_id', questionId);
      form.append('file', file, file.name);
      return postWithProgress<Evidence>('/api/v1/respond/evidence', form, { headers: { authorization: `Bearer ${token}` }, withCredentials: false }, onProgress);
    },
  };
}
