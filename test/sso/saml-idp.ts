import { execFileSync } from 'node:child_process';
import { createSign, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateRawSync } from 'node:zlib';
import { SignedXml } from 'xml-crypto';

/**
 * A test SAML identity provider: a key and certificate made with the openssl CLI at test time (a
 * throw-away test key, never committed), metadata, and signed responses and log-out requests built
 * like an IdP builds them, signed with xml-crypto.
 */
export interface TestKeyPair {
  key: string;
  cert: string;
  /** The certificate body (base64 DER) as metadata carries it. */
  certBase64: string;
}

export function makeKeyPair(days = 365, subject = '/CN=ControlGraph Test IdP'): TestKeyPair {
  const dir = mkdtempSync(join(tmpdir(), 'cg-saml-idp-'));
  try {
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-sha256', '-days', String(days), '-subj', subject, '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')],
      { stdio: 'pipe' },
    );
    const key = readFileSync(join(dir, 'key.pem'), 'utf8');
    const cert = readFileSync(join(dir, 'cert.pem'), 'utf8');
    return { key, cert, certBase64: cert.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const IDP_ENTITY_ID = 'https://idp.test.example/saml';
export const IDP_SSO_URL = 'http://127.0.0.1:9/idp/sso';
export const IDP_SLO_URL = 'http://127.0.0.1:9/idp/slo';

export function idpMetadata(certs: TestKeyPair[], options: { entityId?: string; withSlo?: boolean } = {}): string {
  const keys = certs
    .map((c) => `<md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${c.certBase64}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>`)
    .join('');
  return `<?xml version="1.0"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="${options.entityId ?? IDP_ENTITY_ID}">
  <md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    ${keys}
    ${options.withSlo === false ? '' : `<md:SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${IDP_SLO_URL}"/>`}
    <md:NameIDFormat>urn:oasis:names:tc:SAML:2.0:nameid-format:persistent</md:NameIDFormat>
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${IDP_SSO_URL}"/>
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${IDP_SSO_URL}"/>
  </md:IDPSSODescriptor>
</md:EntityDescriptor>`;
}

export interface ResponseOptions {
  now: Date;
  acs: string;
  audience: string;
  nameId: string;
  nameIdFormat?: string;
  issuer?: string;
  recipient?: string;
  destination?: string | null;
  inResponseTo?: string;
  /** Validity of Conditions and SubjectConfirmationData, from `now`. */
  notBeforeMs?: number;
  notOnOrAfterMs?: number;
  email?: string;
  sessionIndex?: string;
  assertionId?: string;
  /** What gets signed: the assertion (default), the whole response, or nothing. */
  sign?: 'assertion' | 'response' | 'none';
  /** Signature and digest algorithms (URIs); default RSA-SHA256 and SHA-256. A legacy IdP signs with SHA-1. */
  signatureAlgorithm?: string;
  digestAlgorithm?: string;
}

export const RSA_SHA1 = 'http://www.w3.org/2000/09/xmldsig#rsa-sha1';
export const SHA1_DIGEST = 'http://www.w3.org/2000/09/xmldsig#sha1';

const iso = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

export function buildResponse(idp: TestKeyPair, o: ResponseOptions): string {
  const issuer = o.issuer ?? IDP_ENTITY_ID;
  const notBefore = new Date(o.now.getTime() + (o.notBeforeMs ?? -60_000));
  const notOnOrAfter = new Date(o.now.getTime() + (o.notOnOrAfterMs ?? 5 * 60_000));
  const inResponseTo = o.inResponseTo ? ` InResponseTo="${o.inResponseTo}"` : '';
  const destination = o.destination === null ? '' : ` Destination="${o.destination ?? o.acs}"`;
  const assertionId = o.assertionId ?? `_a${randomUUID().replace(/-/g, '')}`;
  const xml =
    `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_r${randomUUID().replace(/-/g, '')}" Version="2.0" IssueInstant="${iso(o.now)}"${destination}${inResponseTo}>` +
    `<saml:Issuer>${issuer}</saml:Issuer>` +
    `<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>` +
    `<saml:Assertion ID="${assertionId}" Version="2.0" IssueInstant="${iso(o.now)}">` +
    `<saml:Issuer>${issuer}</saml:Issuer>` +
    `<saml:Subject><saml:NameID Format="${o.nameIdFormat ?? 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent'}">${o.nameId}</saml:NameID>` +
    `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData NotOnOrAfter="${iso(notOnOrAfter)}" Recipient="${o.recipient ?? o.acs}"${inResponseTo}/></saml:SubjectConfirmation></saml:Subject>` +
    `<saml:Conditions NotBefore="${iso(notBefore)}" NotOnOrAfter="${iso(notOnOrAfter)}"><saml:AudienceRestriction><saml:Audience>${o.audience}</saml:Audience></saml:AudienceRestriction></saml:Conditions>` +
    `<saml:AuthnStatement AuthnInstant="${iso(o.now)}" SessionIndex="${o.sessionIndex ?? '_session1'}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>` +
    `<saml:AttributeStatement><saml:Attribute Name="email"><saml:AttributeValue>${o.email ?? `${o.nameId}@example.com`}</saml:AttributeValue></saml:Attribute></saml:AttributeStatement>` +
    `</saml:Assertion></samlp:Response>`;
  if (o.sign === 'none') return xml;
  const signed = new SignedXml({
    privateKey: idp.key,
    publicCert: idp.cert,
    signatureAlgorithm: o.signatureAlgorithm ?? 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    canonicalizationAlgorithm: 'http://www.w3.org/2001/10/xml-exc-c14n#',
  });
  const target = o.sign === 'response' ? 'Response' : 'Assertion';
  signed.addReference({
    xpath: `//*[local-name(.)='${target}']`,
    transforms: ['http://www.w3.org/2000/09/xmldsig#enveloped-signature', 'http://www.w3.org/2001/10/xml-exc-c14n#'],
    digestAlgorithm: o.digestAlgorithm ?? 'http://www.w3.org/2001/04/xmlenc#sha256',
  });
  signed.computeSignature(xml, { location: { reference: `//*[local-name(.)='${target}']/*[local-name(.)='Issuer']`, action: 'after' } });
  return signed.getSignedXml();
}

/** The ACS form body of a response (HTTP-POST binding). */
export function acsForm(xml: string, relayState?: string): string {
  const params = new URLSearchParams({ SAMLResponse: Buffer.from(xml).toString('base64') });
  if (relayState) params.set('RelayState', relayState);
  return params.toString();
}

/** A LogoutRequest in the HTTP-Redirect binding (deflated, signed over the query string), as a query string. */
export function logoutRequestQuery(
  idp: TestKeyPair | null,
  o: { destination: string; nameId: string; issuer?: string; relayState?: string; sessionIndex?: string; notOnOrAfter?: Date; now: Date; sha1?: boolean },
): string {
  const xml =
    `<samlp:LogoutRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_l${randomUUID().replace(/-/g, '')}" Version="2.0" IssueInstant="${iso(o.now)}" Destination="${o.destination}"${o.notOnOrAfter ? ` NotOnOrAfter="${iso(o.notOnOrAfter)}"` : ''}>` +
    `<saml:Issuer>${o.issuer ?? IDP_ENTITY_ID}</saml:Issuer>` +
    `<saml:NameID Format="urn:oasis:names:tc:SAML:2.0:nameid-format:persistent">${o.nameId}</saml:NameID>` +
    `<samlp:SessionIndex>${o.sessionIndex ?? '_session1'}</samlp:SessionIndex></samlp:LogoutRequest>`;
  let query = `SAMLRequest=${encodeURIComponent(deflateRawSync(Buffer.from(xml)).toString('base64'))}`;
  if (o.relayState) query += `&RelayState=${encodeURIComponent(o.relayState)}`;
  if (!idp) return query;
  query += `&SigAlg=${encodeURIComponent(o.sha1 ? RSA_SHA1 : 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256')}`;
  const signature = createSign(o.sha1 ? 'RSA-SHA1' : 'RSA-SHA256')
    .update(query)
    .sign(idp.key, 'base64');
  return `${query}&Signature=${encodeURIComponent(signature)}`;
}

/** Serves a document (IdP metadata) on a loopback port; `body` may be changed between requests. */
export async function serveDocument(initial: string, contentType = 'application/samlmetadata+xml'): Promise<{ url: string; body: string; status: number; close(): Promise<void> }> {
  const state = { body: initial, status: 200 };
  const server: Server = createServer((_req, res) => {
    res.writeHead(state.status, { 'content-type': contentType });
    res.end(state.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}/metadata.xml`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}
