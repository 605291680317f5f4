/**
 * The certificate signing request of an order and the TLS-ALPN-01 challenge certificate
 * (RFC 8737), made with `@peculiar/x509` (loaded through `pki/x509.ts`) and WebCrypto.
 *
 * @module
 */
import { EC_P256, generateKey, isIP, type KeyPair, x509 } from "../../pki/x509.ts";
import { signingAlgorithmOf } from "../../pki/key_types.ts";

function sanEntries(names: string[]): { type: "dns" | "ip"; value: string }[] {
  return names.map((n) => ({ type: isIP(n) ? "ip" : "dns", value: n }));
}

/**
 * A PEM certificate signing request for `names` (subjectAltName DNS and IP entries; the
 * first DNS name of 64 characters or less is also the common name), signed with `key` (any
 * key type of `pki/key_types.ts`).
 *
 * @example
 * ```ts
 * import { generateKey } from "../../pki/x509.ts";
 * import { createCsr } from "./crypto.ts";
 * const csr = await createCsr(["example.com", "www.example.com"], await generateKey());
 * csr.startsWith("-----BEGIN CERTIFICATE REQUEST-----"); // true
 * ```
 */
export async function createCsr(names: string[], key: KeyPair): Promise<string> {
  const x = await x509();
  const cn = names.find((n) => !isIP(n) && n.length <= 64);
  const req = await x.Pkcs10CertificateRequestGenerator.create({
    name: cn ? [{ CN: [cn] }] : undefined,
    keys: key.keys,
    signingAlgorithm: signingAlgorithmOf(key.keys.privateKey),
    extensions: [new x.SubjectAlternativeNameExtension(sanEntries(names))],
  });
  return req.toString("pem");
}

/** OID of the `acmeIdentifier` extension (RFC 8737 §3). */
const ACME_IDENTIFIER_OID = "1.3.6.1.5.5.7.1.31";

/**
 * The self-signed certificate a server presents for a TLS-ALPN-01 challenge: the name as its
 * only subjectAltName and the critical `acmeIdentifier` extension holding the SHA-256 digest
 * of the key authorization (an ASN.1 OCTET STRING).
 *
 * @example
 * ```ts
 * import { tlsAlpnCertificate } from "./crypto.ts";
 * const { cert } = await tlsAlpnCertificate("example.com", "token.thumbprint");
 * cert.startsWith("-----BEGIN CERTIFICATE-----"); // true
 * ```
 */
export async function tlsAlpnCertificate(
  name: string,
  keyAuthorization: string,
): Promise<{ cert: string; certDer: Uint8Array; privateKey: CryptoKey }> {
  const x = await x509();
  const key = await generateKey();
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(keyAuthorization)),
  );
  const value = new Uint8Array(2 + digest.length);
  value.set([0x04, digest.length]);
  value.set(digest, 2);
  const serial = crypto.getRandomValues(new Uint8Array(16));
  serial[0] = (serial[0] & 0x7f) | 0x01;
  const now = Date.now();
  const cert = await x.X509CertificateGenerator.createSelfSigned({
    serialNumber: Array.from(serial, (b) => b.toString(16).padStart(2, "0")).join(""),
    name: [{ CN: ["ACME challenge"] }],
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 7 * 86_400_000),
    keys: key.keys,
    signingAlgorithm: EC_P256,
    extensions: [
      new x.SubjectAlternativeNameExtension(sanEntries([name])),
      new x.Extension(ACME_IDENTIFIER_OID, true, value),
    ],
  });
  return {
    cert: cert.toString("pem"),
    certDer: new Uint8Array(cert.rawData),
    privateKey: key.keys.privateKey,
  };
}
