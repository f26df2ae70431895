import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, type Paths } from '../../api/client';
import { unwrap } from '../../api/errors';
import { useSession } from '../../session/session';
import { FRAMEWORK_IDS } from '../../api/frameworks';

type QPath = Paths['/api/v1/tenants/{tenantID}/questionnaires/{qID}'];
export type Questionnaire = QPath['get']['responses'][200]['content']['application/json'];
export type Question = Questionnaire['questions'][number];
export type QuestionType = Question['type'];
export type QuestionInput = Paths['/api/v1/tenants/{tenantID}/questionnaires/{qID}/questions/{questionID}']['put']['requestBody']['content']['application/json'];
export type Template = Paths['/api/v1/tenants/{tenantID}/questionnaires/templates']['get']['responses'][200]['content']['application/json']['items'][number];
export type QuestionnaireStatus = Questionnaire['status'];
export type CatalogFramework = Paths['/api/v1/tenants/{tenantID}/controls/catalog']['get']['parameters']['query']['framework'];

export const QUESTION_TYPES: QuestionType[] = ['yes_no', 'single_choice', 'multi_choice', 'text_short', 'text_long', 'date', 'number', 'file_upload'];
/** The frameworks with a control catalog in the service (content/frameworks), the picker's choices. */
export const CATALOG_FRAMEWORKS: CatalogFramework[] = [...FRAMEWORK_IDS];
/** Reviewers need assessment:review, which these roles hold (src/platform/rbac/roles.ts). */
export const REVIEWER_ROLES = ['security-analyst', 'tenant-admin', 'system-admin'];

export const questionnairesKey = ['questionnaires'] as const;

/** All 20 templates fit one page (the API allows 500 a page). */
export function useTemplates() {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: [...questionnairesKey, 'templates', tenantId],
    queryFn: async () => unwrap(await api.GET('/api/v1/tenants/{tenantID}/questionnaires/templates', { params: { path: { tenantID: tenantId }, query: { per_page: 100 } } })),
  });
}

export function useQuestionnaires(filter: { status?: QuestionnaireStatus; page: number; per_page: number }) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: [...questionnairesKey, 'list', tenantId, filter],
    queryFn: async () => unwrap(await api.GET('/api/v1/tenants/{tenantID}/questionnaires', { params: { path: { tenantID: tenantId }, query: filter } })),
  });
}

export function useQuestionnaire(id: string) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: [...questionnairesKey, 'one', tenantId, id],
    queryFn: async () => unwrap(await api.GET('/api/v1/tenants/{tenantID}/questionnaires/{qID}', { params: { path: { tenantID: tenantId, qID: id } } })),
  });
}

/** The assessments a questionnaire was assigned as (one per assignee). */
export function useQuestionnaireAssessments(id: string) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: [...questionnairesKey, 'assessments', tenantId, id],
    queryFn: async () =>
      unwrap(await api.GET('/api/v1/tenants/{tenantID}/assessments', { params: { path: { tenantID: tenantId }, query: { questionnaire_id: id, per_page: 100 } } })),
  });
}

/** The tenant's members, for the assignee and reviewer pickers (every role holds tenant:read). */
export function useTenantUsers() {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: [...questionnairesKey, 'users', tenantId],
    queryFn: async () => unwrap(await api.GET('/api/v1/tenants/{tenantID}/users', { params: { path: { tenantID: tenantId }, query: { per_page: 500 } } })),
  });
}

/**
 * Controls of a framework's catalog for the mapping picker (GET /controls/catalog, the whole catalog
 * searched by the service, withdrawn controls left out): the first hundred that match what is typed.
 */
export function useFrameworkControls(framework: CatalogFramework | null, search: string) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: [...questionnairesKey, 'catalog', tenantId, framework, search],
    enabled: framework !== null,
    staleTime: 5 * 60_000,
    placeholderData: (previous) => previous,
    queryFn: async () =>
      unwrap(
        await api.GET('/api/v1/tenants/{tenantID}/controls/catalog', {
          params: { path: { tenantID: tenantId }, query: { framework: framework!, per_page: 100, ...(search ? { search } : {}) } },
        }),
      ),
  });
}

/** After any change: the lists and the questionnaire itself are stale. */
function useInvalidate() {
  const client = useQueryClient();
  return () => client.invalidateQueries({ queryKey: questionnairesKey });
}

export function useCreateFromTemplate() {
  const { tenantId } = useSession();
  const invalidate = useInvalidate();
  return useMutation({
    mutationFn: async (templateId: string) =>
      unwrap(await api.POST('/api/v1/tenants/{tenantID}/questionnaires/from-template', { params: { path: { tenantID: tenantId } }, body: { template_id: templateId } })),
    onSuccess: invalidate,
  });
}

export function useCreateQuestionnaire() {
  const { tenantId } = useSession();
  const invalidate = useInvalidate();
  return useMutation({
    mutationFn: async (body: { title: string; description?: string }) =>
      unwrap(await api.POST('/api/v1/tenants/{tenantID}/questionnaires', { params: { path: { tenantID: tenantId } }, body })),
    onSuccess: invalidate,
  });
}

/** Adds a question (no id) or replaces one (with the id of the question it edits). */
export function useSaveQuestion(qID: string) {
  const { tenantId } = useSession();
  const invalidate = useInvalidate();
  return useMutation({
    mutationFn: async ({ questionId, input }: { questionId?: string; input: QuestionInput }) =>
      questionId
        ? unwrap(
            await api.PUT('/api/v1/tenants/{tenantID}/questionnaires/{qID}/questions/{questionID}', {
              params: { path: { tenantID: tenantId, qID, questionID: questionId } },
              body: input,
            }),
          )
        : unwrap(await api.POST('/api/v1/tenants/{tenantID}/questionnaires/{qID}/questions', { params: { path: { tenantID: tenantId, qID } }, body: input })),
    onSuccess: invalidate,
  });
}

export function useDeleteQuestion(qID: string) {
  const { tenantId } = useSession();
  const invalidate = useInvalidate();
  return useMutation({
    mutationFn: async (questionId: string) =>
      unwrap(
        await api.DELETE('/api/v1/tenants/{tenantID}/questionnaires/{qID}/questions/{questionID}', {
          params: { path: { tenantID: tenantId, qID, questionID: questionId } },
        }),
      ),
    onSuccess: invalidate,
  });
}

export type Lifecycle = 'publish' | 'archive' | 'versions';

/** publish (draft → published), archive, or a new draft version (returns the new questionnaire). */
export function useLifecycle(qID: string) {
  const { tenantId } = useSession();
  const invalidate = useInvalidate();
  return useMutation({
    mutationFn: async (step: Lifecycle) => {
      const params = { params: { path: { tenantID: tenantId, qID } } };
      if (step === 'publish') return unwrap(await api.POST('/api/v1/tenants/{tenantID}/questionnaires/{qID}/publish', params));
      if (step === 'archive') return unwrap(await api.POST('/api/v1/tenants/{tenantID}/questionnaires/{qID}/archive', params));
      return unwrap(await api.POST('/api/v1/tenants/{tenantID}/questionnaires/{qID}/versions', params));
    },
    onSuccess: invalidate,
  });
}

export function useAssign(qID: string) {
  const { tenantId } = useSession();
  const client = useQueryClient();
  return useMutation({
    mutationFn: async (body: { assignees: string[]; reviewer_id: string | null; due_date: string | null }) =>
      unwrap(await api.POST('/api/v1/tenants/{tenantID}/questionnaires/{qID}/assign', { params: { path: { tenantID: tenantId, qID } }, body })),
    // Assigning moves controls to questionnaire_assigned too.
    onSuccess: () => client.invalidateQueries({ predicate: (query) => query.queryKey[0] !== 'me' }),
  });
}
