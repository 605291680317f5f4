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

async function signedBy(c: X509.X509Certificate, issuer: X509.X509Certificate): Promise<boolean> {
  if (!sameName(c, issuer)) return false;
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
