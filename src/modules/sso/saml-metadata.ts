import { X509Certificate } from 'node:crypto';
// node-saml's own XML helpers (its @xmldom/xmldom parser and xpath): the same parser that checks the
// signatures reads the metadata, and no second XML library is needed.
import { parseDomFromString, xpath } from '@node-saml/node-saml/lib/xml.js';

/** IdP metadata and SAML messages larger than this are refused before parsing. */
export const MAX_METADATA_BYTES = 1024 * 1024;

const REDIRECT_BINDING = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';

export class XmlProblem extends Error {
  override name = 'XmlProblem';
}

/**
 * Refuses what a SAML party never needs and XML attacks rely on: a DOCTYPE (entity expansion,
 * external entities) and oversized input. The parser resolves no external entities either; this
 * check makes the refusal explicit and cheap.
 */
export function assertSafeXml(xml: string, maxBytes: number): void {
  if (Buffer.byteLength(xml, 'utf8') > maxBytes) throw new XmlProblem(`is larger than ${maxBytes} bytes`);
  if (/<!DOCTYPE/i.test(xml) || /<!ENTITY/i.test(xml)) throw new XmlProblem('contains a DOCTYPE or entity declaration, which is not allowed');
}

export interface CertificateInfo {
  subject: string;
  issuer: string;
  not_before: string;
  not_after: string;
  fingerprint_sha256: string;
}

export interface IdpMetadata {
  entityId: string;
  ssoUrl: string | null;
  sloUrl: string | null;
  /** Signing certificates as PEM. */
  certificates: string[];
}

export function toPem(base64: string): string {
  const body = base64.replace(/\s+/g, '');
  return `-----BEGIN CERTIFICATE-----\n${body.match(/.{1,64}/g)?.join('\n') ?? ''}\n-----END CERTIFICATE-----\n`;
}

export function certificateInfo(pem: string): CertificateInfo {
  const cert = new X509Certificate(pem);
  return {
    subject: cert.subject.replace(/\n/g, ', '),
    issuer: cert.issuer.replace(/\n/g, ', '),
    not_before: new Date(cert.validFrom).toISOString(),
    not_after: new Date(cert.validTo).toISOString(),
    fingerprint_sha256: cert.fingerprint256,
  };
}

/** Parses IdP metadata (an EntityDescriptor, or the first IdP in an EntitiesDescriptor). */
export async function parseIdpMetadata(xml: string): Promise<IdpMetadata> {
  assertSafeXml(xml, MAX_METADATA_BYTES);
  let doc: Awaited<ReturnType<typeof parseDomFromString>>;
  try {
    doc = await parseDomFromString(xml);
  } catch (error) {
    throw new XmlProblem(`is not well-formed XML: ${(error as Error).message.split('\n')[0]}`);
  }
  const entities = xpath.selectElements(doc, "//*[local-name()='EntityDescriptor'][*[local-name()='IDPSSODescriptor']]");
  const entity = entities[0];
  if (!entity) throw new XmlProblem('has no EntityDescriptor with an IDPSSODescriptor (is this the IdP metadata?)');
  const entityId = entity.getAttribute('entityID');
  if (!entityId) throw new XmlProblem('EntityDescriptor has no entityID');
  const idp = xpath.selectElements(entity, "./*[local-name()='IDPSSODescriptor']")[0]!;

  const location = (service: string): string | null => {
    const nodes = xpath.selectElements(idp, `./*[local-name()='${service}']`);
    const redirect = nodes.find((n) => n.getAttribute('Binding') === REDIRECT_BINDING);
    return redirect?.getAttribute('Location') || null;
  };

  const keyNodes = xpath.selectElements(idp, "./*[local-name()='KeyDescriptor']").filter((k) => !k.getAttribute('use') || k.getAttribute('use') === 'signing');
  const certificates: string[] = [];
  for (const key of keyNodes) {
    for (const node of xpath.selectElements(key, ".//*[local-name()='X509Certificate']")) {
      const text = (node.textContent ?? '').replace(/\s+/g, '');
      if (!text) continue;
      const pem = toPem(text);
      try {
        new X509Certificate(pem);
      } catch {
        throw new XmlProblem('contains a signing certificate that cannot be parsed');
      }
      if (!certificates.includes(pem)) certificates.push(pem);
    }
  }
  if (certificates.length === 0) throw new XmlProblem('has no signing certificate (KeyDescriptor/X509Certificate)');
  return { entityId, ssoUrl: location('SingleSignOnService'), sloUrl: location('SingleLogoutService'), certificates };
}
