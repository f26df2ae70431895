import { Group, Text } from '@mantine/core';
import { LightBadge } from '../../ui/LightBadge';

/** The controls an approval attests, as "<framework> <control>" badges. */
export function AttestedControls({ controls, label }: { controls: string[]; label: string }) {
  return (
    <Group gap={6} component="ul" aria-label={label} m={0} p={0} style={{ listStyle: 'none' }}>
      {controls.map((key) => {
        const [framework, control] = key.split(/:(.*)/);
        return (
          <li key={key}>
            <LightBadge color="teal">
              <Text span size="xs" fw={600}>
                {control ?? framework}
              </Text>{' '}
              {control ? framework : ''}
            </LightBadge>
          </li>
        );
      })}
    </Group>
  );
}
