import type { RouteObject } from 'react-router';

export const rulesRoutes: RouteObject[] = [
  { path: 'rules', lazy: async () => ({ Component: (await import('./RulesPage')).RulesPage }) },
  { path: 'rules/new', lazy: async () => ({ Component: (await import('./RuleFormPage')).RuleFormPage }) },
  { path: 'rules/:ruleId', lazy: async () => ({ Component: (await import('./RuleDetailPage')).RuleDetailPage }) },
  { path: 'rules/:ruleId/edit', lazy: async () => ({ Component: (await import('./RuleFormPage')).RuleFormPage }) },
];
