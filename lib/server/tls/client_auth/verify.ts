/**
 * Verification of a client's certificate chain against a trust pool, as Go's
 * `x509.Certificate.Verify` does for `tls.Config.ClientCAs`: the leaf and every certificate
 * up to a trusted one must be within their validity period and signed by the next; the
 * intermediates come from what the client sent; a leaf or intermediate that states extended
 * key usages must allow client authentication (or any usage); CA certificates must be CAs.
 *
 * @module
 */
import type * as X509 from "@peculiar/x509";
import { x509 } from "../../pki/x509.ts";
import { derChildren } from "../../pki/der.ts";

const CLIENT_AUTH = "1.3.6.1.5.5.7.3.2";
const ANY_USAGE = "2.5.29.37.0";
const MAX_DEPTH = 8;

function sameName(a: X509.X509Certificate, b: X509.X509Certificate): boolean {
  // the issuer field of `a` names `b`
  const x = a.issuerName.toArrayBuffer();
  const y = b.subjectName.toArrayBuffer();
  if (x.byteLength !== y.byteLength) return false;
  const u = new Uint8Array(x);
  const v = new Uint8Array(y);
  for (let i = 0; i < u.length; i++) if (u[i] !== v[i]) return false;
  return true;
}

async function usageAllowsClient(c: X509.X509Certificate): Promise<boolean> {
  const lib = await x509();
  const eku = c.getExtension(lib.ExtendedKeyUsageExtension);
  if (!eku) return true;
  const usages = eku.usages.map(String);
  return usages.includes(CLIENT_AUTH) || usages.includes(ANY_USAGE);
}

async function isCA(c: X509.X509Certificate): Promise<boolean> {
  const lib = await x509();
  const bc = c.getExtension(lib.BasicConstraintsExtension);
  // a root without the extension (v1 certificates) is still trusted when listed
  return bc ? bc.ca : true;
}

/** A minimal DER INTEGER's contents: no needless leading zero, not negative, not empty. */
function minimalPositive(b: Uint8Array): boolean {
  if (b.length === 0 || b[0] & 0x80) return false;
  return !(b.length > 1 && b[0] === 0 && !(b[1] & 0x80));
}

/**
 * True when an ECDSA signature value is the DER `SEQUENCE { r INTEGER, s INTEGER }` Go's
 * `ecdsa.VerifyASN1` insists on: the library converts laxer encodings (another tag, extra
 * bytes) to the same r and s, and would accept them.
 */
function strictEcdsaSignature(sig: Uint8Array): boolean {
  try {
    const [seq, ...rest] = derChildren(sig);
    if (!seq || rest.length || seq.tag !== 0x30) return false;
    const parts = derChildren(seq.body);
    return parts.length === 2 &&
      parts.every((n) => n.tag === 0x02 && minimalPositive(n.body));
  } catch {
    return false;
  }
}

/** Walks DER elements to the end, each nested constructed one too; throws on any bad length. */
function wellFormed(der: Uint8Array, depth = 0): void {
  if (depth > 32) throw new Error("nested too deep");
  for (const n of derChildren(der)) {
    // constructed (0x20): SEQUENCE, SET and context-tagged structures hold elements
    if (n.tag & 0x20) wellFormed(n.body, depth + 1);
  }
}

/**
 * Why a certificate's DER is not the strict shape Go's `x509.ParseCertificate` reads (one
 * `SEQUENCE { tbsCertificate, signatureAlgorithm, signatureValue }` spanning every byte,
 * every length consistent, the outer signature algorithm the same as the signed one), or null.
 * The library reads laxer encodings (a shorter outer length, a bad algorithm length) and would
 * check the signature of what it made of them.
 */
export function strictCertificateShape(der: Uint8Array): string | null {
  try {
    const [cert, ...rest] = derChildren(der);
    if (!cert || rest.length || cert.tag !== 0x30) return "not one DER SEQUENCE";
    const parts = derChildren(cert.body);
    if (parts.length !== 3) return "not tbsCertificate, signatureAlgorithm, signatureValue";
    const [tbs, alg, sig] = parts;
    if (tbs.tag !== 0x30 || alg.tag !== 0x30 || sig.tag !== 0x03) return "bad element tags";
    wellFormed(tbs.body);
    wellFormed(alg.body);
    const fields = derChildren(tbs.body);
    const inner = fields[fields[0]?.tag === 0xa0 ? 2 : 1];
    if (
      !inner || inner.body.length !== alg.body.length ||
      inner.body.some((b, i) => b !== alg.body[i])
    ) return "inner and outer signature algorithm identifiers don't match";
    return null;
  } catch (e) {
    return (e as Error).message;
  }
}

async function signedBy(c: X509.X509Certificate, issuer: X509.X509Certificate): Promise<boolean> {
  if (!sameName(c, issuer)) return false;
  if (
    c.signatureAlgorithm.name === "ECDSA" && !strictEcdsaSignature(new Uint8Array(c.signature))
  ) return false;
  try {
    return await c.verify({ publicKey: issuer.publicKey, signatureOnly: true });
  } catch {
    return false;
  }
}

function current(c: X509.X509Certificate, now: Date): boolean {
  return c.notBefore.getTime() <= now.getTime() && now.getTime() <= c.notAfter.getTime();
}

/**
 * Verifies a chain (leaf first, then what the client sent); null when it leads to a trusted
 * certificate, else the reason in words.
 *
 * @example
 * ```ts
 * import { verifyClientChain } from "./verify.ts";
 * // await verifyClientChain([leafDer], trustedCerts) → null or "certificate signed by unknown authority"
 * ```
 */
export async function verifyClientChain(
  chain: Uint8Array[],
  trusted: X509.X509Certificate[],
  now = new Date(),
): Promise<string | null> {
  try {
    return await verifyChain(chain, trusted, now);
  } catch (e) {
    // a part of a certificate read lazily (an extension, the key) turned out malformed
    return `the client certificate cannot be parsed: ${(e as Error)?.message ?? e}`;
  }
}

async function verifyChain(
  chain: Uint8Array[],
  trusted: X509.X509Certificate[],
  now: Date,
): Promise<string | null> {
  const lib = await x509();
  for (const d of chain) {
    const why = strictCertificateShape(d);
    if (why) return `the client certificate cannot be parsed: ${why}`;
  }
  let certs: X509.X509Certificate[];
  try {
    certs = chain.map((d) => new lib.X509Certificate(d as BufferSource));
  } catch {
    return "the client certificate cannot be parsed";
  }
  if (!certs.length) return "no client certificate";
  const leaf = certs[0];
  if (!current(leaf, now)) return "the client certificate has expired or is not yet valid";
  if (!(await usageAllowsClient(leaf))) {
    return "the client certificate is not for client authentication (extended key usage)";
  }
  const intermediates = certs.slice(1);
  const rawEq = (a: X509.X509Certificate, b: X509.X509Certificate) =>
    a.rawData.byteLength === b.rawData.byteLength &&
    new Uint8Array(a.rawData).every((x, i) => x === new Uint8Array(b.rawData)[i]);
  // depth-first search for a path to a trusted certificate
  const walk = async (c: X509.X509Certificate, depth: number): Promise<boolean> => {
    if (trusted.some((t) => rawEq(t, c))) return true;
    for (const t of trusted) {
      if (current(t, now) && (await isCA(t)) && (await signedBy(c, t))) return true;
    }
    if (depth >= MAX_DEPTH) return false;
    for (const i of intermediates) {
      if (i === c || !current(i, now) || !(await isCA(i)) || !(await usageAllowsClient(i))) {
        continue;
      }
      if ((await signedBy(c, i)) && (await walk(i, depth + 1))) return true;
    }
    return false;
  };
  return (await walk(leaf, 0)) ? null : "certificate signed by unknown authority";
}
