import { useCallback } from 'react';
import { useSearchParams } from 'react-router';

/**
 * Filters, sort, page and tabs live in the URL, so a link reproduces the view. Values are strings;
 * an empty value removes the parameter. Changing anything but the page goes back to page 1.
 */
export function useUrlState() {
  const [params, setParams] = useSearchParams();
  const get = useCallback((name: string, fallback = ''): string => params.get(name) ?? fallback, [params]);
  const getNumber = useCallback(
    (name: string, fallback: number): number => {
      const value = Number(params.get(name));
      return Number.isFinite(value) && value > 0 ? value : fallback;
    },
    [params],
  );
  const set = useCallback(
    (changes: Record<string, string | number | null | undefined>) => {
      setParams(
        () => {
          // From the address bar, not from this render's params: the router renders a navigation in a
          // transition, so a second change made before it commits (two filters picked quickly) would
          // start from the old params and undo the first.
          const next = new URLSearchParams(window.location.search);
          for (const [name, value] of Object.entries(changes)) {
            if (value === null || value === undefined || value === '') next.delete(name);
            else next.set(name, String(value));
          }
          if (!('page' in changes)) next.delete('page');
          return next;
        },
        { replace: false },
      );
    },
    [setParams],
  );
  return { params, get, getNumber, set };
}
