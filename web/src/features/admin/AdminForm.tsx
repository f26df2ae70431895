import type { FormEvent, ReactNode } from 'react';
import { Alert, Group, Stack, Title } from '@mantine/core';

/**
 * The create/add forms above the administration tables: a small heading, the service's refusal
 * (if any) and the fields in one wrapping row, the submit button last.
 */
export function AdminForm({ title, error, onSubmit, children }: { title: string; error: string | null; onSubmit: () => void; children: ReactNode }) {
  return (
    <form
      onSubmit={(event: FormEvent) => {
        event.preventDefault();
        onSubmit();
      }}
    >
      <Stack gap="xs">
        <Title order={3} size="h5">
          {title}
        </Title>
        {error && (
          <Alert color="red" role="alert">
            {error}
          </Alert>
        )}
        <Group align="flex-end" wrap="wrap">
          {children}
        </Group>
      </Stack>
    </form>
  );
}
