/** The URLs of a tenant's SSO endpoints, derived from the configured public base URL and the slug. */
export interface SsoUrls {
  oidcLogin: string;
  oidcCallback: string;
  samlLogin: string;
  spEntityId: string;
  acs: string;
  spMetadata: string;
  slo: string;
}

export function ssoUrls(serviceUrl: string, slug: string): SsoUrls {
  const base = serviceUrl.replace(/\/+$/, '');
  const oidc = `${base}/api/v1/auth/oidc/${slug}`;
  const saml = `${base}/api/v1/auth/saml/${slug}`;
  return {
    oidcLogin: `${oidc}/login`,
    oidcCallback: `${oidc}/callback`,
    samlLogin: `${saml}/login`,
    // The metadata URL doubles as the entity id: unique per tenant and resolvable.
    spEntityId: `${saml}/metadata`,
    acs: `${saml}/acs`,
    spMetadata: `${saml}/metadata`,
    slo: `${saml}/slo`,
  };
}

/** An absolute http(s) base URL without query, fragment or trailing slash; null if it is none. */
export function normaliseServiceUrl(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  if (!['http:', 'https:'].includes(url.protocol) || url.username || url.password || url.search || url.hash) return null;
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}
