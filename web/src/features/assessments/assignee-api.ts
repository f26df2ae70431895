import { api, CSRF_HEADER, refreshSession } from '../../api/client';
import { ApiError, unwrap } from '../../api/errors';
import { postWithProgress, type Evidence, type RespondentApi } from '../respond/respondent-api';
import type { Assessment } from './queries';

/**
 * The respondent form's API for the signed-in assignee: the console's session (cookies, CSRF header,
 * refresh on an expired access cookie) instead of a link's token, the same form on top. Answers go to
 * POST /assessments/{id}/respond (incremental), files to /attestation-evidence.
 */
export function assigneeApi(tenantId: string, assessmentId: string, lang: string): RespondentApi<Assessment> {
  const path = { tenantID: tenantId, aID: assessmentId };
  // The questionnaire in the console's language where its template has it (every answer returns it again).
  const query = { lang };
  const upload = (questionId: string, file: File, onProgress: (fraction: number) => void) => {
    // The form's fields come before the file: the service reads them while streaming the file.
    const form = new FormData();
    form.append('assessment_id', assessmentId);
    form.append('question_id', questionId);
    form.append('file', file, file.name);
    return postWithProgress<Evidence>(`/api/v1/tenants/${tenantId}/attestation-evidence`, form, { headers: { [CSRF_HEADER]: '1' }, withCredentials: true }, onProgress);
  };
  return {
    load: async () => unwrap(await api.GET('/api/v1/tenants/{tenantID}/assessments/{aID}', { params: { path, query } })),
    save: async (responses) => unwrap(await api.POST('/api/v1/tenants/{tenantID}/assessments/{aID}/respond', { params: { path, query }, body: { responses } })),
    submit: async () => unwrap(await api.POST('/api/v1/tenants/{tenantID}/assessments/{aID}/submit', { params: { path, query } })),
    upload: async (questionId, file, onProgress) => {
      try {
        return await upload(questionId, file, onProgress);
      } catch (failure) {
        // The XHR does not go through the client's middleware: renew an expired access cookie here, once.
        if (failure instanceof ApiError && failure.status === 401 && (await refreshSession())) return upload(questionId, file, onProgress);
        throw failure;
      }
    },
  };
}
