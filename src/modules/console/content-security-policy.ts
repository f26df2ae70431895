/**
 * The console's Content-Security-Policy: everything from this origin, no inline script, no plugins,
 * no framing. Inline styles stay allowed because Mantine writes its CSS variables into a <style>
 * element at run time; scripts are the attack surface and get no exception.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  // QR codes and exported PNG previews arrive as data: and blob: URLs.
  "img-src 'self' data: blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Headers on every console file: the policy and the usual companions. */
export const CONSOLE_HEADERS = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
} as const;
