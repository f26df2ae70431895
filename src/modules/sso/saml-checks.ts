import type { Profile } from '@node-saml/node-saml';
import { XmlProblem, type IdpMetadata } from './saml-metadata.js';
import type { SsoUrls } from './urls.js';

/**
 * The checks of SAML messages that node-saml leaves to us (it verifies signatures, audience and
 * InResponseTo). Pure functions of the message and `now`, the service clock: node-saml would compare
 * times with the system clock.
 */

/** Tolerated difference between the IdP's clock and ours for NotBefore / NotOnOrAfter. */
export const CLOCK_SKEW_MS = 60_000;
/** A LogoutRequest older than this (by its IssueInstant) is refused: a captured one cannot be replayed later. */
export const LOGOUT_MAX_AGE_MS = 5 * 60_000;

const BEARER = 'urn:oasis:names:tc:SAML:2.0:cm:bearer';
const TRANSIENT = 'urn:oasis:names:tc:SAML:2.0:nameid-format:transient';

/** xml2js nodes as node-saml returns them (prefixes stripped, attributes under `$`, text under `_`). */
type XmlNode = { $?: Record<string, string>; _?: string; [child: string]: unknown };
const children = (node: XmlNode | undefined, name: string): XmlNode[] => (Array.isArray(node?.[name]) ? (node![name] as XmlNode[]) : []);
const first = (node: XmlNode | undefined, name: string): XmlNode | undefined => children(node, name)[0];

/** A refusal, or the assertion id to remember (once) until the assertion could no longer be accepted. */
export type AssertionCheck = { problem: string } | { id: string; expiresAt: Date };

/** What node-saml does not check: issuer, recipient, destination, the time window (our clock), the id. */
export function validateAssertion(profile: Profile, responseDestination: string | null, urls: SsoUrls, metadata: IdpMetadata, now: number): AssertionCheck {
  const assertion = (profile.getAssertion?.() as { Assertion?: XmlNode } | undefined)?.Assertion;
  if (!assertion) return { problem: 'the response has no assertion' };
  if (profile.issuer !== metadata.entityId) return { problem: `unexpected issuer ${JSON.stringify(profile.issuer ?? null)} (expected ${metadata.entityId})` };
  const id = assertion.$?.ID;
  if (!id) return { problem: 'the assertion has no ID' };
  if (responseDestination !== null && responseDestination !== urls.acs) {
    return { problem: `destination mismatch: the response is addressed to ${responseDestination}, this endpoint is ${urls.acs}` };
  }
  const subject = first(assertion, 'Subject');
  const confirmations = children(subject, 'SubjectConfirmation').filter((c) => c.$?.Method === BEARER);
  if (confirmations.length === 0) return { problem: 'the assertion has no bearer subject confirmation' };
  const recipients = confirmations.map((c) => first(c, 'SubjectConfirmationData')?.$?.Recipient ?? null);
  const confirmation = confirmations.find((c) => first(c, 'SubjectConfirmationData')?.$?.Recipient === urls.acs);
  if (!confirmation) {
    return { problem: `recipient mismatch: the assertion is for ${recipients.filter(Boolean).join(', ') || '(no Recipient)'}, this endpoint is ${urls.acs}` };
  }
  const time = (value: string | undefined, name: string) => {
    if (value === undefined) return null;
    const ms = Date.parse(value);
    if (Number.isNaN(ms)) throw new XmlProblem(`has an invalid ${name} ${value}`);
    return ms;
  };
  const conditions = first(assertion, 'Conditions');
  const notBefore = time(conditions?.$?.NotBefore, 'NotBefore');
  const notOnOrAfter = time(conditions?.$?.NotOnOrAfter, 'NotOnOrAfter');
  const confirmationData = first(confirmation, 'SubjectConfirmationData');
  const confirmationUntil = time(confirmationData?.$?.NotOnOrAfter, 'NotOnOrAfter');
  if (notBefore !== null && now + CLOCK_SKEW_MS < notBefore) return { problem: `the assertion is not yet valid (NotBefore ${conditions!.$!.NotBefore})` };
  if (notOnOrAfter !== null && now - CLOCK_SKEW_MS >= notOnOrAfter) return { problem: `the assertion has expired (NotOnOrAfter ${conditions!.$!.NotOnOrAfter})` };
  if (confirmationUntil === null) return { problem: 'the subject confirmation has no NotOnOrAfter' };
  if (now - CLOCK_SKEW_MS >= confirmationUntil) return { problem: `the subject confirmation has expired (NotOnOrAfter ${confirmationData!.$!.NotOnOrAfter})` };
  if (profile.nameIDFormat === TRANSIENT) {
    return { problem: 'the NameID is transient and cannot identify a user: configure a persistent (or e-mail) NameID at the IdP' };
  }
  if (!profile.nameID) return { problem: 'the assertion has no NameID' };
  // Kept until the assertion could no longer be accepted anyway.
  const expiresAt = new Date(Math.max(confirmationUntil, notOnOrAfter ?? 0) + CLOCK_SKEW_MS);
  return { id, expiresAt };
}

/**
 * What node-saml does not check on a LogoutRequest: its destination, its age (IssueInstant within
 * LOGOUT_MAX_AGE_MS, NotOnOrAfter when given) and that it has an ID, which is then used once.
 */
export function checkLogoutRequest(root: { getAttribute(name: string): string | null } | null, urls: SsoUrls, now: number): { id: string; expiresAt: Date } {
  const destination = root?.getAttribute('Destination') || null;
  if (destination !== null && destination !== urls.slo) throw new Error(`destination mismatch: addressed to ${destination}, this endpoint is ${urls.slo}`);
  const id = root?.getAttribute('ID');
  if (!id) throw new Error('the request has no ID');
  const issueInstant = root?.getAttribute('IssueInstant') ?? '';
  const issued = Date.parse(issueInstant);
  if (Number.isNaN(issued)) throw new Error('the request has no valid IssueInstant');
  if (issued - CLOCK_SKEW_MS > now) throw new Error(`the request is issued in the future (IssueInstant ${issueInstant})`);
  if (now - CLOCK_SKEW_MS >= issued + LOGOUT_MAX_AGE_MS) throw new Error(`the request is too old (IssueInstant ${issueInstant})`);
  const notOnOrAfter = root?.getAttribute('NotOnOrAfter');
  if (notOnOrAfter && now - CLOCK_SKEW_MS >= Date.parse(notOnOrAfter)) throw new Error(`the request has expired (NotOnOrAfter ${notOnOrAfter})`);
  return { id, expiresAt: new Date(issued + LOGOUT_MAX_AGE_MS + 2 * CLOCK_SKEW_MS) };
}

const XMLDSIG = 'http://www.w3.org/2000/09/xmldsig#';
/** rsa-sha1, dsa-sha1, hmac-sha1, ecdsa-sha1 and the sha1 digest: collisions are practical, so a signature over SHA-1 proves little. */
const SHA1_ALGORITHM = /[#-]sha1$/i;

type DomDocument = { getElementsByTagNameNS(namespace: string, name: string): ArrayLike<{ getAttribute(name: string): string | null }> };

/**
 * The SHA-1 algorithms named by the message's XML-signature methods and digests (ds:SignatureMethod,
 * ds:DigestMethod anywhere in it: a message carrying one is refused, whichever element it signs),
 * each once. Empty for a message signed with SHA-256 or better.
 */
export function sha1AlgorithmsOf(doc: DomDocument): string[] {
  const found = new Set<string>();
  for (const name of ['SignatureMethod', 'DigestMethod']) {
    for (const element of Array.from(doc.getElementsByTagNameNS(XMLDSIG, name))) {
      const algorithm = element.getAttribute('Algorithm') ?? '';
      if (SHA1_ALGORITHM.test(algorithm)) found.add(algorithm);
    }
  }
  return [...found];
}

/** The SigAlg of a redirect-binding message, when it is a SHA-1 algorithm. */
export function isSha1SigAlg(sigAlg: string): boolean {
  return SHA1_ALGORITHM.test(sigAlg);
}

export function sha1Refusal(algorithms: string[]): string {
  return `the message is signed with SHA-1 (${algorithms.join(', ')}), which is refused: configure the IdP to sign with RSA-SHA256, or set allow_sha1 in this tenant's SSO configuration for a legacy IdP`;
}
