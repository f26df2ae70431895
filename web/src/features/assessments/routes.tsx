import type { RouteObject } from 'react-router';

/** The respondent's own assessments and the reviewer's queue, each page loaded on demand. */
export const assessmentsRoutes: RouteObject[] = [
  { path: 'assessments/mine', lazy: async () => ({ Component: (await import('./MyAssessmentsPage')).MyAssessmentsPage }) },
  { path: 'assessments/mine/:assessmentId', lazy: async () => ({ Component: (await import('./MyAssessmentPage')).MyAssessmentPage }) },
  { path: 'assessments/review', lazy: async () => ({ Component: (await import('./ReviewQueuePage')).ReviewQueuePage }) },
  { path: 'assessments/review/:assessmentId', lazy: async () => ({ Component: (await import('./ReviewPage')).ReviewPage }) },
];
