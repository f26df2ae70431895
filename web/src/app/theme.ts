import { createTheme } from '@mantine/core';

/**
 * Colours that meet WCAG AA contrast (checked by the browser tests' axe-core run): filled controls use
 * shade 8, whose white text reaches 4.5:1. Light-variant texts (badges, alerts), dimmed text and form
 * errors are darkened in the light scheme in ui/contrast.css (a stylesheet, not Mantine's
 * cssVariablesResolver, whose values lost to Mantine's own stylesheet).
 */
export const theme = createTheme({
  primaryColor: 'blue',
  primaryShade: { light: 8, dark: 8 },
  autoContrast: true,
  fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif',
});
