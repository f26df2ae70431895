import type { CSSProperties, ReactNode } from 'react';
import classes from './light-cells.module.css';

/**
 * Mantine's light Badge as one <span>, for lists with hundreds of them. The colours are Mantine's
 * light-variant variables, which contrast.css darkens to WCAG AA in the light scheme.
 */
export function LightBadge({ color, children }: { color: string; children: ReactNode }) {
  const style = { '--badge-bg': `var(--mantine-color-${color}-light)`, '--badge-color': `var(--mantine-color-${color}-light-color)` } as CSSProperties;
  return (
    <span className={classes.badge} style={style}>
      {children}
    </span>
  );
}
