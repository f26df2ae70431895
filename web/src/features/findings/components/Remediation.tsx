import { List, Stack, Text } from '@mantine/core';
import { CopyText } from '../../../ui/CopyText';
import { QueryView } from '../../../ui/QueryState';
import type { useRemediation } from '../queries';

/** The remediation's summary and ordered steps, each command copyable. */
export function Remediation({ query }: { query: ReturnType<typeof useRemediation> }) {
  return (
    <QueryView query={query}>
      {(remediation) => (
        <Stack gap="sm">
          <Text size="sm">{remediation.summary}</Text>
          {remediation.steps.length > 0 && (
            <List type="ordered" spacing="sm">
              {[...remediation.steps]
                .sort((a, b) => a.order - b.order)
                .map((step) => (
                  <List.Item key={step.order}>
                    <Stack gap={4}>
                      <Text size="sm">{step.action}</Text>
                      {step.command && <CopyText value={step.command} />}
                    </Stack>
                  </List.Item>
                ))}
            </List>
          )}
        </Stack>
      )}
    </QueryView>
  );
}
