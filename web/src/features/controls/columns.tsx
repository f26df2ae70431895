import { Text } from '@mantine/core';
import type { ColumnDef } from '@tanstack/react-table';

interface ControlIdentity {
  control_id: string;
  framework: string;
  title: string;
}

/** The first two columns of both control tables (all controls, gaps): the control with its framework, its title. */
export function controlIdentityColumns<Row extends ControlIdentity>(headers: { control: string; title: string }): ColumnDef<Row>[] {
  return [
    {
      id: 'control',
      header: headers.control,
      cell: ({ row }) => (
        <div>
          <Text size="sm" fw={600} style={{ whiteSpace: 'nowrap' }}>
            {row.original.control_id}
          </Text>
          <Text size="xs" c="dimmed">
            {row.original.framework}
          </Text>
        </div>
      ),
    },
    { id: 'title', header: headers.title, cell: ({ row }) => <Text size="sm">{row.original.title}</Text> },
  ];
}
