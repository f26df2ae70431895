import { MantineProvider } from '@mantine/core';
import { Notifications } from '@mantine/notifications';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { RouterProvider } from 'react-router';
import { ApiError } from '../api/errors';
import { meQuery } from '../session/queries';
import { router } from './routes';
import { theme } from './theme';

const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      staleTime: 15_000,
      // A refusal (4xx) will not change by asking again; a network blip might.
      retry: (count, error) => !(error instanceof ApiError && error.status < 500) && count < 2,
      refetchOnWindowFocus: false,
    },
  },
});
// Every page but sign-in starts from the session: ask for it now, while the page's code still loads,
// not after (a cold load of the findings screen waited 0.5 s for its chunks before asking).
void queryClient.prefetchQuery(meQuery);

/** Light and dark follow the system setting (defaultColorScheme "auto"). */
export function App() {
  return (
    <MantineProvider theme={theme} defaultColorScheme="auto">
      <Notifications position="top-right" />
      <QueryClientProvider client={queryClient}>
        <RouterProvider router={router} />
      </QueryClientProvider>
    </MantineProvider>
  );
}
