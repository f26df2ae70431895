import { QueryClient } from '@tanstack/react-query';
import { ApiError } from '../api/errors';
import { meQuery } from '../session/queries';

/** The console's one query cache; route loaders prefetch into it before their page's code arrives. */
export const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      staleTime: 15_000,
      // A refusal (4xx) will not change by asking again; a network blip might.
      retry: (count, error) => !(error instanceof ApiError && error.status < 500) && count < 2,
      refetchOnWindowFocus: false,
    },
  },
});
// Every signed-in page starts from the session: ask for it now, while the page's code still loads,
// not after (a cold load of the findings screen waited 0.5 s for its chunks before asking). Not on the
// pages outside the session: sign-in, and an outside respondent's link.
const OUTSIDE_SESSION = ['/sign-in', '/respond'];
if (typeof window !== 'undefined' && !OUTSIDE_SESSION.some((path) => window.location.pathname.startsWith(path))) void queryClient.prefetchQuery(meQuery);
