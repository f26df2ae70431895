import { useId, type ReactNode } from 'react';
import { Card, Text, Title } from '@mantine/core';

/** A titled card of the detail screens, a region named by its title. */
export function Section({ title, children }: { title: string; children: ReactNode }) {
  const id = useId();
  return (
    <Card withBorder padding="md" component="section" aria-labelledby={id}>
      <Title order={2} size="h4" mb="sm" id={id}>
        {title}
      </Title>
      {children}
    </Card>
  );
}

/** A label and its value in a <dl>. */
export function Field({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div>
      <Text size="xs" c="dimmed" component="dt">
        {label}
      </Text>
      {/* Vectors and URLs are long words: they wrap rather than run into the next column. */}
      <Text size="sm" component="dd" m={0} style={{ overflowWrap: 'anywhere' }}>
        {children}
      </Text>
    </div>
  );
}
