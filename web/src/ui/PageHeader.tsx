import type { ReactNode } from 'react';
import { Group, Title } from '@mantine/core';

/** A screen's title (the page's only h1) and its actions. */
export function PageHeader({ title, actions }: { title: string; actions?: ReactNode }) {
  return (
    <Group justify="space-between" mb="md" wrap="wrap">
      <Title order={1} size="h2">
        {title}
      </Title>
      {actions && <Group gap="sm">{actions}</Group>}
    </Group>
  );
}
