import { Anchor } from '@mantine/core';
import { Link } from 'react-router';

/** The way back to the list a detail page was opened from. */
export function BackLink({ to, children }: { to: string; children: string }) {
  return (
    <Anchor component={Link} to={to} size="sm" mb="sm" display="inline-block">
      ← {children}
    </Anchor>
  );
}
