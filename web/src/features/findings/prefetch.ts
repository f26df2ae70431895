import type { LoaderFunctionArgs } from 'react-router';
import { queryClient } from '../../app/query-client';
import { meQuery } from '../../session/queries';
import { findingsListQuery } from './queries';
import { apiFilters, findingsUrlOf } from './url';

/**
 * The findings route's loader: asks for the list's page as soon as the session is known, while the
 * page's code still loads and the shell renders (the page would otherwise ask only once mounted).
 * It returns at once, so navigation never waits on it; the page's own query finds the answer, or the
 * request in flight, under the same key.
 */
export function prefetchFindingsPage({ request }: LoaderFunctionArgs): null {
  const url = findingsUrlOf(new URL(request.url).searchParams);
  if (url.view === 'list') {
    void queryClient.ensureQueryData(meQuery).then((me) => {
      if (me) void queryClient.prefetchQuery(findingsListQuery(me.tenant_id, { ...apiFilters(url), sort: url.sort }));
    });
  }
  return null;
}
