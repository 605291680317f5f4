/**
 * Certificates and keys for the local CA and the `internal` issuer, on `@peculiar/x509` and
 * WebCrypto: ECDSA P-256 keys, PEM in both private-key forms Caddy's storage holds (`EC PRIVATE
 * KEY` as written here and by Caddy, `PRIVATE KEY` PKCS#8 as read), and the three certificate
 * profiles of Caddy's local CA (root, intermediate, leaf). `@peculiar/x509` loads on first use.
 *
 * @module
 */
import type * as X509 from "@peculiar/x509";
import {
  certificateFactsOf,
  concatBytes as concat,
  derChildren,
  pemDecode,
  pemEncode,
} from "./der.ts";

/** ECDSA P-256 with SHA-256: the key type and signature of every certificate made here. */
export const EC_P256 = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;

let lib: Promise<typeof X509> | undefined;
let loaded: typeof X509 | null = null;

/**
 * `@peculiar/x509` when {@linkcode x509} has loaded it, else null: for code that must answer
 * synchronously (placeholders) once something on its path (client authentication) loaded it.
 */
export function x509IfLoaded(): typeof X509 | null {
  return loaded;
}

/** Loads `@peculiar/x509` (once), giving it the small metadata API its DI container wants. */
export function x509(): Promise<typeof X509> {
  return lib ??= (async () => {
    const R = Reflect as unknown as Record<string, unknown>;
    if (typeof R.getMetadata !== "function") {
      // @peculiar/x509's container reads constructor parameter types through the
      // reflect-metadata API; a per-target map is all it needs.
      const store = new WeakMap<object, Map<unknown, unknown>>();
      const map = (t: object) => {
        let m = store.get(t);
        if (!m) store.set(t, m = new Map());
        return m;
      };
      R.defineMetadata = (k: unknown, v: unknown, t: object) => void map(t).set(k, v);
      R.getOwnMetadata = (k: unknown, t: object) => store.get(t)?.get(k);
      R.getMetadata = (k: unknown, t: object) => store.get(t)?.get(k);
      R.hasMetadata = (k: unknown, t: object) => store.get(t)?.has(k) ?? false;
      // reflect-metadata (loaded later by another package, e.g. acme-client's own x509)
      // takes an existing API as its fallback provider and needs these too.
      R.hasOwnMetadata = R.hasMetadata;
      R.getOwnMetadataKeys = (t: object) => [...(store.get(t)?.keys() ?? [])];
      R.getMetadataKeys = R.getOwnMetadataKeys;
      R.deleteMetadata = (k: unknown, t: object) => store.get(t)?.delete(k) ?? false;
      R.metadata = (k: unknown, v: unknown) => (t: object) => void map(t).set(k, v);
    }
    const m = await import("@peculiar/x509");
    m.cryptoProvider.set(crypto);
    return loaded = m;
  })();
}

// --- DER, just enough for EC private keys -------------------------------------------------

function tlv(tag: number, body: Uint8Array): Uint8Array {
  const len = body.length;
  const head = len < 0x80
    ? [tag, len]
    : len < 0x100
    ? [tag, 0x81, len]
    : [tag, 0x82, len >> 8, len & 0xff];
  const out = new Uint8Array(head.length + len);
  out.set(head);
  out.set(body, head.length);
  return out;
}

const OID_EC_PUBLIC_KEY = new Uint8Array([0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01]);

/** PKCS#8 (WebCrypto export) → SEC1 `ECPrivateKey` with the curve named (RFC 5915). */
export function pkcs8ToSec1(pkcs8: Uint8Array): Uint8Array {
  const [info] = derChildren(pkcs8);
  const [, alg, key] = derChildren(info.body);
  const curve = derChildren(alg.body)[1];
  const ec = derChildren(derChildren(key.body)[0].body); // version, privateKey, [0]?, [1]?
  const parts = [tlv(0x02, ec[0].body), tlv(0x04, ec[1].body), tlv(0xa0, tlv(0x06, curve.body))];
  const pub = ec.find((n) => n.tag === 0xa1);
  if (pub) parts.push(tlv(0xa1, pub.body));
  return tlv(0x30, concat(...parts));
}

/** SEC1 `ECPrivateKey` → PKCS#8 (what WebCrypto imports). */
function sec1ToPkcs8(sec1: Uint8Array): Uint8Array {
  const ec = derChildren(derChildren(sec1)[0].body);
  const params = ec.find((n) => n.tag === 0xa0);
  if (!params) throw new Error("EC private key without a named curve");
  const curve = derChildren(params.body)[0];
  const inner = tlv(
    0x30,
    concat(
      tlv(0x02, ec[0].body),
      tlv(0x04, ec[1].body),
      ...ec.filter((n) => n.tag === 0xa1).map((n) => tlv(0xa1, n.body)),
    ),
  );
  const alg = tlv(0x30, concat(tlv(0x06, OID_EC_PUBLIC_KEY), tlv(0x06, curve.body)));
  return tlv(0x30, concat(tlv(0x02, new Uint8Array([0])), alg, tlv(0x04, inner)));
}

/** A key pair with its private key in PEM (`EC PRIVATE KEY`, as Caddy writes it). */
export interface KeyPair {
  /** WebCrypto keys (the private key is extractable only while the PEM is made). */
  keys: CryptoKeyPair;
  /** PEM of the private key. */
  pem: string;
}

/**
 * A new ECDSA P-256 key pair.
 *
 * @example
 * ```ts
 * import { generateKey } from "./x509.ts";
 * (await generateKey()).pem.startsWith("-----BEGIN EC PRIVATE KEY-----"); // true
 * ```
 */
export async function generateKey(): Promise<KeyPair> {
  const keys = await crypto.subtle.generateKey(EC_P256, true, ["sign", "verify"]) as CryptoKeyPair;
  const pkcs8 = new Uint8Array(await crypto.subtle.exportKey("pkcs8", keys.privateKey));
  return { keys, pem: pemEncode("EC PRIVATE KEY", pkcs8ToSec1(pkcs8)) };
}

/**
 * Reads an ECDSA P-256 private key from PEM (`EC PRIVATE KEY` or `PRIVATE KEY`), with its
 * public key. Throws on anything else (RSA, Ed25519, other curves).
 */
export async function importKey(pem: string): Promise<KeyPair> {
  const block = pemDecode(pem).find((b) => /PRIVATE KEY$/.test(b.label));
  if (!block) throw new Error("no PEM private key block");
  const pkcs8 = block.label === "EC PRIVATE KEY" ? sec1ToPkcs8(block.der) : block.der;
  const privateKey = await crypto.subtle.importKey(
    "pkcs8",
    pkcs8 as Uint8Array<ArrayBuffer>,
    EC_P256,
    true,
    ["sign"],
  );
  const jwk = await crypto.subtle.exportKey("jwk", privateKey);
  delete jwk.d;
  jwk.key_ops = ["verify"];
  const publicKey = await crypto.subtle.importKey("jwk", jwk, EC_P256, true, ["verify"]);
  return { keys: { privateKey, publicKey }, pem };
}

function serial(): string {
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[0] &= 0x7f; // positive
  b[0] |= 0x01; // and 16 bytes long
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

const HOUR = 3_600_000;

/** Lifetimes of Caddy's local CA: root 3600 days, intermediate 7 days, leaf 12 hours. */
export const LIFETIMES = {
  root: 3600 * 24 * HOUR,
  intermediate: 7 * 24 * HOUR,
  leaf: 12 * HOUR,
} as const;

/** A made certificate: its PEM and the facts the CA needs. */
export interface MadeCertificate {
  /** PEM of the certificate alone. */
  pem: string;
  /** Validity end. */
  notAfter: Date;
  /** Validity start. */
  notBefore: Date;
}

/**
 * The self-signed root: `CN=<name>`, CA with path length 1, keyCertSign and cRLSign.
 */
export async function makeRoot(
  commonName: string,
  key: KeyPair,
  lifetimeMs: number = LIFETIMES.root,
): Promise<MadeCertificate> {
  const x = await x509();
  const notBefore = new Date();
  const notAfter = new Date(notBefore.getTime() + lifetimeMs);
  const cert = await x.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: [{ CN: [commonName] }],
    notBefore,
    notAfter,
    keys: key.keys,
    signingAlgorithm: EC_P256,
    extensions: [
      new x.KeyUsagesExtension(x.KeyUsageFlags.keyCertSign | x.KeyUsageFlags.cRLSign, true),
      new x.BasicConstraintsExtension(true, 1, true),
      await x.SubjectKeyIdentifierExtension.create(key.keys.publicKey),
    ],
  });
  return { pem: cert.toString("pem") + "\n", notBefore, notAfter };
}

/** The intermediate (signing) certificate: CA with path length 0, signed by the root. */
export async function makeIntermediate(
  commonName: string,
  key: KeyPair,
  issuerPem: string,
  issuerKey: KeyPair,
  lifetimeMs: number = LIFETIMES.intermediate,
): Promise<MadeCertificate> {
  const x = await x509();
  const issuer = new x.X509Certificate(issuerPem);
  const notBefore = new Date();
  let notAfter = new Date(notBefore.getTime() + lifetimeMs);
  if (notAfter > issuer.notAfter) notAfter = issuer.notAfter;
  const cert = await x.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: [{ CN: [commonName] }],
    issuer: issuer.subjectName,
    notBefore,
    notAfter,
    publicKey: key.keys.publicKey,
    signingKey: issuerKey.keys.privateKey,
    signingAlgorithm: EC_P256,
    extensions: [
      new x.KeyUsagesExtension(x.KeyUsageFlags.keyCertSign | x.KeyUsageFlags.cRLSign, true),
      new x.BasicConstraintsExtension(true, 0, true),
      await x.SubjectKeyIdentifierExtension.create(key.keys.publicKey),
      await x.AuthorityKeyIdentifierExtension.create(issuerKey.keys.publicKey),
    ],
  });
  return { pem: cert.toString("pem") + "\n", notBefore, notAfter };
}

/** True when `name` is an IPv4 or IPv6 literal. */
export function isIP(name: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(name) ||
    (name.includes(":") && /^[0-9a-f:.]+$/i.test(name));
}

/**
 * A leaf (server) certificate for `names` (DNS names and IP addresses in the
 * subjectAltName, no subject, as Caddy's internal issuer): digitalSignature (and
 * keyEncipherment for an RSA key), serverAuth and clientAuth, signed by the issuer; its
 * lifetime never passes the issuer's. `publicKey` may be of any key type of `key_types.ts`.
 */
export async function makeLeaf(
  names: string[],
  publicKey: CryptoKey,
  issuerPem: string,
  issuerKey: KeyPair,
  lifetimeMs: number = LIFETIMES.leaf,
): Promise<MadeCertificate> {
  const x = await x509();
  const issuer = new x.X509Certificate(issuerPem);
  const notBefore = new Date();
  let notAfter = new Date(notBefore.getTime() + lifetimeMs);
  if (notAfter > issuer.notAfter) notAfter = issuer.notAfter;
  const cert = await x.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: "",
    issuer: issuer.subjectName,
    notBefore,
    notAfter,
    publicKey,
    signingKey: issuerKey.keys.privateKey,
    signingAlgorithm: EC_P256,
    extensions: [
      new x.KeyUsagesExtension(
        publicKey.algorithm.name === "RSASSA-PKCS1-v1_5"
          ? x.KeyUsageFlags.digitalSignature | x.KeyUsageFlags.keyEncipherment
          : x.KeyUsageFlags.digitalSignature,
        true,
      ),
      new x.ExtendedKeyUsageExtension([
        x.ExtendedKeyUsage.serverAuth,
        x.ExtendedKeyUsage.clientAuth,
      ]),
      await x.SubjectKeyIdentifierExtension.create(publicKey),
      await x.AuthorityKeyIdentifierExtension.create(issuerKey.keys.publicKey),
      new x.SubjectAlternativeNameExtension(
        names.map((value) => ({ type: isIP(value) ? "ip" as const : "dns" as const, value })),
        true,
      ),
    ],
  });
  return { pem: cert.toString("pem") + "\n", notBefore, notAfter };
}

/** Validity and names of a PEM certificate (the first block). */
export interface CertificateFacts {
  /** Validity start. */
  notBefore: Date;
  /** Validity end. */
  notAfter: Date;
  /** Subject common name ("" when none). */
  commonName: string;
  /** DNS names and IPs of the subjectAltName, lower case. */
  names: string[];
  /** Serial number (hex). */
  serial: string;
}

/**
 * Reads the facts of the first certificate of a PEM chain. Throws on bad PEM. Read with the
 * DER walker of `der.ts`, not `@peculiar/x509`: a server restarting with its CA and
 * certificates in storage reads these of each and needs nothing else, and loading the library
 * costs 70–160 ms and ~25 MiB resident (measured, `bench/http/README.md`).
 */
export function certificateFacts(pem: string): Promise<CertificateFacts> {
  try {
    const [first] = pemDecode(pem);
    if (!first?.der.length) throw new Error("no PEM certificate");
    return Promise.resolve(certificateFactsOf(first.der));
  } catch (e) {
    return Promise.reject(e);
  }
}

/** True when a certificate is inside its renewal window (`ratio` of its lifetime left). */
export function inRenewalWindow(
  notBefore: Date,
  notAfter: Date,
  ratio: number,
  now = Date.now(),
): boolean {
  const lifetime = notAfter.getTime() - notBefore.getTime();
  return now > notAfter.getTime() - lifetime * ratio;
}
