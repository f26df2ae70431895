import { useCallback } from 'react';
import { useUrlState } from './url-state';

/**
 * A paged list's page and page size, kept in the URL (`page`, `per_page`; 1 and 50 by default), and
 * the Pager's change: a new page keeps the size, a new size starts again at page 1.
 */
export function useUrlPaging(): { page: number; perPage: number; setPaging: (next: { page?: number; perPage?: number }) => void } {
  const { getNumber, set } = useUrlState();
  const page = getNumber('page', 1);
  const perPage = getNumber('per_page', 50);
  const setPaging = useCallback((next: { page?: number; perPage?: number }) => set({ page: next.page ?? 1, per_page: next.perPage ?? perPage }), [set, perPage]);
  return { page, perPage, setPaging };
}
