import type { ReactNode } from 'react';
import { Alert, Button, Center, Loader, Stack, Text, Title } from '@mantine/core';
import type { UseQueryResult } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { ApiError, errorMessage } from '../api/errors';

export function PageLoader() {
  const { t } = useTranslation();
  return (
    <Center py="xl" role="status" aria-live="polite">
      <Loader aria-label={t('loading')} />
    </Center>
  );
}

/** The service's own message, and a retry. A 403 says the role does not allow it. */
export function QueryError({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  const { t } = useTranslation();
  const message = error instanceof ApiError && error.status === 403 ? `${t('forbidden')} (${error.message})` : errorMessage(error);
  return (
    <Alert color="red" title={t('errorTitle')} role="alert">
      <Stack gap="xs" align="flex-start">
        <Text size="sm">{message}</Text>
        {onRetry && (
          <Button size="xs" variant="light" color="red" onClick={onRetry}>
            {t('retry')}
          </Button>
        )}
      </Stack>
    </Alert>
  );
}

export function EmptyState({ title, children }: { title?: string; children?: ReactNode }) {
  const { t } = useTranslation();
  return (
    <Stack align="center" py="xl" gap="xs">
      <Title order={3} size="h4">
        {title ?? t('emptyTitle')}
      </Title>
      {children && (
        <Text c="dimmed" size="sm" ta="center">
          {children}
        </Text>
      )}
    </Stack>
  );
}

/**
 * A query's three states in one place: loading, error (with retry) and, when `isEmpty` says so, empty;
 * otherwise `children` with the data.
 */
export function QueryView<T>({
  query,
  isEmpty,
  empty,
  children,
}: {
  query: UseQueryResult<T>;
  isEmpty?: (data: T) => boolean;
  empty?: ReactNode;
  children: (data: T) => ReactNode;
}) {
  if (query.isPending) return <PageLoader />;
  if (query.isError) return <QueryError error={query.error} onRetry={() => void query.refetch()} />;
  if (isEmpty?.(query.data)) return <>{empty ?? <EmptyState />}</>;
  return <>{children(query.data)}</>;
}
