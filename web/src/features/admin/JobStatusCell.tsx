import { Badge, Stack, Text } from '@mantine/core';

/** A background job's state (discovery job, report) as a badge, with its error under it when it failed. */
export function JobStatusCell({ label, color, error }: { label: string; color: string; error?: string | null }) {
  return (
    <Stack gap={2}>
      {/* At its full width: in a crowded table the column would otherwise shrink the label to "SU…". */}
      <Badge color={color} variant="light" autoContrast style={{ minWidth: 'max-content' }}>
        {label}
      </Badge>
      {error && (
        <Text size="xs" c="red.8">
          {error}
        </Text>
      )}
    </Stack>
  );
}
