import type { RouteObject } from 'react-router';

export const questionnairesRoutes: RouteObject[] = [
  { path: 'questionnaires', lazy: async () => ({ Component: (await import('./QuestionnairesPage')).QuestionnairesPage }) },
  { path: 'questionnaires/new', lazy: async () => ({ Component: (await import('./NewQuestionnairePage')).NewQuestionnairePage }) },
  { path: 'questionnaires/:questionnaireId', lazy: async () => ({ Component: (await import('./QuestionnairePage')).QuestionnairePage }) },
];
