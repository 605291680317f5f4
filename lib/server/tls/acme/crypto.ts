/**
 * Keys, certificate signing requests and the TLS-ALPN-01 challenge certificate, made with
 * WebCrypto and `@peculiar/x509`.
 *
 * @module
 */
import * as x509 from "@peculiar/x509";

/** Key types of Caddy's `key_type` (automation policies). */
export type KeyType = "p256" | "p384" | "rsa2048" | "rsa4096" | "ed25519";

/** The key types accepted in config. */
export const KEY_TYPES: readonly KeyType[] = ["p256", "p384", "rsa2048", "rsa4096", "ed25519"];

/** A generated key pair with its PKCS#8 PEM. */
export interface GeneratedKey {
  /** The WebCrypto key pair. */
  keys: CryptoKeyPair;
  /** The private key, PKCS#8 PEM. */
  pem: string;
  /** The signing algorithm matching the key, for certificates and CSRs. */
  signing: Algorithm | EcdsaParams | RsaHashedImportParams;
}

function algorithm(type: KeyType): {
  gen: EcKeyGenParams | RsaHashedKeyGenParams | Algorithm;
  signing: Algorithm | EcdsaParams | RsaHashedImportParams;
} {
  switch (type) {
    case "p256":
      return {
        gen: { name: "ECDSA", namedCurve: "P-256" },
        signing: { name: "ECDSA", hash: "SHA-256" } as EcdsaParams,
      };
    case "p384":
      return {
        gen: { name: "ECDSA", namedCurve: "P-384" },
        signing: { name: "ECDSA", hash: "SHA-384" } as EcdsaParams,
      };
    case "rsa2048":
    case "rsa4096": {
      const gen: RsaHashedKeyGenParams = {
        name: "RSASSA-PKCS1-v1_5",
        modulusLength: type === "rsa2048" ? 2048 : 4096,
        publicExponent: new Uint8Array([1, 0, 1]),
        hash: "SHA-256",
      };
      return { gen, signing: gen };
    }
    case "ed25519":
      return { gen: { name: "Ed25519" }, signing: { name: "Ed25519" } };
  }
}

/** Base64 lines of a PEM block. */
export function toPem(label: string, der: ArrayBuffer | Uint8Array): string {
  const bytes = der instanceof Uint8Array ? der : new Uint8Array(der);
  let bin = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  const b64 = btoa(bin).replace(/.{64}/g, "$&\n").replace(/\n$/, "");
  return `-----BEGIN ${label}-----\n${b64}\n-----END ${label}-----\n`;
}

/**
 * Generates a private key of a `key_type`.
 *
 * @example
 * ```ts
 * import { generateKey } from "./crypto.ts";
 * const { pem } = await generateKey("p256");
 * pem.startsWith("-----BEGIN PRIVATE KEY-----"); // true
 * ```
 */
export async function generateKey(type: KeyType = "p256"): Promise<GeneratedKey> {
  const { gen, signing } = algorithm(type);
  const keys = await crypto.subtle.generateKey(gen, true, ["sign", "verify"]) as CryptoKeyPair;
  const pkcs8 = await crypto.subtle.exportKey("pkcs8", keys.privateKey);
  return { keys, pem: toPem("PRIVATE KEY", pkcs8), signing };
}

/** True for an IPv4 or IPv6 literal (ACME identifier type `ip`). */
export function isIPAddress(name: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(name) || name.includes(":");
}

function sanEntries(names: string[]): x509.JsonGeneralName[] {
  return names.map((n) => ({ type: isIPAddress(n) ? "ip" : "dns", value: n }));
}

/**
 * A PEM certificate signing request for `names` (subjectAltName DNS and IP entries; the
 * first DNS name, if any, is also the common name).
 *
 * @example
 * ```ts
 * import { createCsr, generateKey } from "./crypto.ts";
 * const key = await generateKey("p256");
 * const csr = await createCsr(["example.com", "www.example.com"], key);
 * ```
 */
export async function createCsr(names: string[], key: GeneratedKey): Promise<string> {
  const cn = names.find((n) => !isIPAddress(n) && n.length <= 64);
  const req = await x509.Pkcs10CertificateRequestGenerator.create({
    name: cn ? [{ CN: [cn] }] : undefined,
    keys: key.keys,
    signingAlgorithm: key.signing,
    extensions: [new x509.SubjectAlternativeNameExtension(sanEntries(names))],
  });
  return req.toString("pem");
}

/** OID of the `acmeIdentifier` extension (RFC 8737). */
const ACME_IDENTIFIER_OID = "1.3.6.1.5.5.7.1.31";

/**
 * The self-signed certificate a server presents for a TLS-ALPN-01 challenge (RFC 8737): the
 * name as its only subjectAltName and the critical `acmeIdentifier` extension holding the
 * SHA-256 of the key authorization.
 *
 * @example
 * ```ts
 * import { tlsAlpnCertificate } from "./crypto.ts";
 * const { cert, key } = await tlsAlpnCertificate("example.com", "token.thumbprint");
 * ```
 */
export async function tlsAlpnCertificate(
  name: string,
  keyAuthorization: string,
): Promise<{ cert: string; key: string }> {
  const key = await generateKey("p256");
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(keyAuthorization)),
  );
  const value = new Uint8Array(2 + digest.length);
  value.set([0x04, digest.length]);
  value.set(digest, 2);
  const now = Date.now();
  const serial = crypto.getRandomValues(new Uint8Array(16));
  serial[0] &= 0x7f;
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: Array.from(serial, (b) => b.toString(16).padStart(2, "0")).join(""),
    name: [{ CN: ["ACME challenge"] }],
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 7 * 86_400_000),
    keys: key.keys,
    signingAlgorithm: key.signing,
    extensions: [
      new x509.SubjectAlternativeNameExtension(sanEntries([name])),
      new x509.Extension(ACME_IDENTIFIER_OID, true, value),
    ],
  });
  return { cert: cert.toString("pem"), key: key.pem };
}

/** What the manager needs to know about an issued certificate. */
export interface CertificateFacts {
  /** Start of validity. */
  notBefore: Date;
  /** End of validity. */
  notAfter: Date;
  /** subjectAltName DNS and IP entries, lower case. */
  names: string[];
  /** Serial number, hex without leading zeros stripped. */
  serial: string;
}

/**
 * Reads the validity, names and serial of the first certificate of a PEM chain.
 *
 * @example
 * ```ts ignore
 * const { notAfter } = certificateFacts(chainPem);
 * ```
 */
export function certificateFacts(chainPem: string): CertificateFacts {
  const first = chainPem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/);
  if (!first) throw new Error("no certificate in PEM");
  const cert = new x509.X509Certificate(first[0]);
  const san = cert.getExtension(x509.SubjectAlternativeNameExtension);
  const names = (san?.names.toJSON() ?? [])
    .filter((n) => n.type === "dns" || n.type === "ip")
    .map((n) => n.value.toLowerCase());
  return { notBefore: cert.notBefore, notAfter: cert.notAfter, names, serial: cert.serialNumber };
}
