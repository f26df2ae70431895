import { createTheme, MultiSelect, Select } from '@mantine/core';

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
  components: {
    // Mantine keeps every closed dropdown in the page and positions each on mount: the findings
    // screen's six filters spent a tenth of a second of its first render placing lists nobody opened.
    Select: Select.extend({ defaultProps: { comboboxProps: { keepMounted: false } } }),
    MultiSelect: MultiSelect.extend({ defaultProps: { comboboxProps: { keepMounted: false } } }),
  },
});
