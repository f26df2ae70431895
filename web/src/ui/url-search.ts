import { useDebouncedValue } from '@mantine/hooks';
import { useEffect, useState } from 'react';
import { useUrlState } from './url-state';

/**
 * A search box whose words go into the URL's `search` a moment after the last keystroke (not a
 * request per key). `typed` and `setTyped` drive the box; `applied` is what the URL says, the filter
 * the list's query uses.
 */
export function useUrlSearch(delayMs = 300): { typed: string; setTyped: (value: string) => void; applied: string } {
  const url = useUrlState();
  const [typed, setTyped] = useState(url.get('search'));
  const [debounced] = useDebouncedValue(typed.trim(), delayMs);
  const applied = url.get('search');
  const { set } = url;
  useEffect(() => {
    if (debounced !== applied) set({ search: debounced || null });
  }, [debounced, applied, set]);
  return { typed, setTyped, applied };
}
