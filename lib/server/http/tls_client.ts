/**
 * The client certificate placeholders (`{http.request.tls.client.*}`, the Gatehousefile's
 * `{tls_client_*}` shorthands) from the certificate a client sent on a `node` engine listener:
 * `fingerprint` (SHA-256 of the DER, hex), `public_key` and `public_key_sha256` (PKIX DER,
 * hex), `issuer` and `subject` (distinguished names as Go prints them: last RDN first, comma
 * separated), `serial` (decimal), `certificate_pem`, `certificate_der_base64`, and
 * `san.dns_names`, `san.emails`, `san.ips`, `san.uris` (comma-joined, or one by `.<index>`).
 * Empty on a TLS connection whose client sent no certificate; unknown on plain HTTP.
 *
 * @module
 */
import type * as X509 from "@peculiar/x509";
import type { RequestContext } from "./context.ts";
import { x509IfLoaded } from "../pki/x509.ts";
import { sha256Hex } from "../pki/sha256.ts";

const SHORT: Record<string, string> = {
  "2.5.4.3": "CN",
  "2.5.4.6": "C",
  "2.5.4.7": "L",
  "2.5.4.8": "ST",
  "2.5.4.9": "STREET",
  "2.5.4.10": "O",
  "2.5.4.11": "OU",
  "2.5.4.5": "SERIALNUMBER",
  "2.5.4.17": "POSTALCODE",
};

function escapeValue(v: string): string {
  let out = v.replace(/[,+"\\<>;]/g, (ch) => "\\" + ch);
  if (out.startsWith("#") || out.startsWith(" ")) out = "\\" + out;
  if (out.endsWith(" ")) out = out.slice(0, -1) + "\\ ";
  return out;
}

/** A distinguished name the way Go's `pkix.Name.String()` writes it. */
function goName(name: X509.Name): string {
  const rdns = name.toJSON() as Record<string, string[]>[];
  return rdns.slice().reverse().map((rdn) =>
    Object.entries(rdn).map(([type, values]) =>
      values.map((v) => `${SHORT[type] ?? type}=${escapeValue(v)}`).join("+")
    ).join("+")
  ).join(",");
}

interface Facts {
  [key: string]: string | string[];
}

const cache = new WeakMap<Uint8Array, Facts>();

function hex(b: Uint8Array | ArrayBuffer): string {
  return [...new Uint8Array(b)].map((x) => x.toString(16).padStart(2, "0")).join("");
}

function factsOf(der: Uint8Array): Facts | null {
  let f = cache.get(der);
  if (f) return f;
  const lib = x509IfLoaded();
  if (!lib) return null;
  try {
    f = readFacts(lib, der);
  } catch {
    // a malformed certificate (accepted unverified in the request and require modes)
    return null;
  }
  cache.set(der, f);
  return f;
}

function readFacts(lib: typeof X509, der: Uint8Array): Facts {
  const cert = new lib.X509Certificate(der as BufferSource);
  const spki = new Uint8Array(cert.publicKey.rawData);
  const san = cert.getExtension(lib.SubjectAlternativeNameExtension);
  const names = (type: string) =>
    san ? san.names.items.filter((n) => n.type === type).map((n) => n.value) : [];
  const b64 = btoa(String.fromCharCode(...der));
  return {
    fingerprint: sha256Hex(der),
    public_key: hex(spki),
    public_key_sha256: sha256Hex(spki),
    issuer: goName(cert.issuerName),
    common_name: (cert.subjectName.getField("CN")[0] as string | undefined) ?? "",
    subject: goName(cert.subjectName),
    serial: BigInt("0x" + (cert.serialNumber || "0")).toString(10),
    certificate_der_base64: b64,
    certificate_pem: `-----BEGIN CERTIFICATE-----\n${
      b64.replace(/.{64}/g, "$&\n").replace(/\n$/, "")
    }\n-----END CERTIFICATE-----\n`,
    "san.dns_names": names("dns"),
    "san.emails": names("email"),
    "san.ips": names("ip"),
    "san.uris": names("url"),
  };
}

/**
 * The getter of one `http.request.tls.client.*` placeholder.
 *
 * @example
 * ```ts
 * import { tlsClientGetter } from "./tls_client.ts";
 * const subject = tlsClientGetter("http.request.tls.client.subject");
 * ```
 */
export function tlsClientGetter(key: string): (c: RequestContext) => string | undefined {
  const field = key.slice("http.request.tls.client.".length);
  const m = /^(san\.(?:dns_names|emails|ips|uris))\.(\d+)$/.exec(field);
  const name = m ? m[1] : field;
  const index = m ? Number(m[2]) : -1;
  return (c) => {
    const tls = c.info.tls;
    if (!tls) return undefined;
    // a TLS request without a client certificate: known and empty, as in Caddy (#7530)
    const der = tls.clientCertificates?.[0];
    if (!der) return "";
    const v = factsOf(der)?.[name];
    if (v === undefined) return undefined;
    if (Array.isArray(v)) return index >= 0 ? v[index] ?? "" : v.join(",");
    return v;
  };
}

/**
 * The access log's client certificate fields (`client_common_name`, `client_serial`), as
 * Caddy logs them for a connection that sent a certificate.
 *
 * @example
 * ```ts
 * import { clientLogFields } from "./tls_client.ts";
 * clientLogFields(new Uint8Array(0)); // {} (not a certificate)
 * ```
 */
export function clientLogFields(der: Uint8Array): Record<string, string> {
  const f = factsOf(der);
  if (!f) return {};
  return { client_common_name: f.common_name as string, client_serial: f.serial as string };
}
