/**
 * A minimal TLS 1.3 server handshake (RFC 8446) for one purpose: presenting a TLS-ALPN-01
 * challenge certificate (RFC 8737) to an ACME validator. Deno's TLS stack (rustls) refuses to
 * load a certificate carrying the critical `acmeIdentifier` extension, so the challenge is
 * answered here instead: ServerHello (X25519 or P-256 key share, TLS_AES_128_GCM_SHA256),
 * EncryptedExtensions with ALPN `acme-tls/1`, Certificate, CertificateVerify
 * (ecdsa_secp256r1_sha256), Finished — then the connection is closed. No application data is
 * ever exchanged, so nothing else of TLS is needed; a hello this cannot answer (no TLS 1.3,
 * no acme-tls/1, no usable key share or signature scheme) gets a fatal alert.
 *
 * @module
 */
import { concatBytes as concat } from "../../pki/der.ts";
import type { ClientHello } from "./client_hello.ts";

const TLS13 = 0x0304;
const AES_128_GCM_SHA256 = 0x1301;
const ECDSA_P256_SHA256 = 0x0403;
const X25519 = 0x001d;
const SECP256R1 = 0x0017;
const enc = new TextEncoder();

/** What the handshake presents. */
export interface ChallengeIdentity {
  /** DER of the challenge certificate. */
  certDer: Uint8Array;
  /** Its ECDSA P-256 private key. */
  privateKey: CryptoKey;
}

/** Why a hello cannot be answered (sent as a fatal alert). */
export class HandshakeRefused extends Error {
  /** TLS alert description. */
  readonly alert: number;
  /** Creates the refusal. */
  constructor(alert: number, message: string) {
    super(message);
    this.alert = alert;
  }
}

function u16(n: number): Uint8Array {
  return new Uint8Array([n >> 8, n & 0xff]);
}

function u24(n: number): Uint8Array {
  return new Uint8Array([n >> 16, (n >> 8) & 0xff, n & 0xff]);
}

function vec8(b: Uint8Array): Uint8Array {
  return concat(new Uint8Array([b.length]), b);
}

function vec16(b: Uint8Array): Uint8Array {
  return concat(u16(b.length), b);
}

function handshake(type: number, body: Uint8Array): Uint8Array {
  return concat(new Uint8Array([type]), u24(body.length), body);
}

/** HMAC-SHA256 of `data` under `key` (HKDF-Extract with `key` as the salt). */
export async function hmac(key: Uint8Array, data: Uint8Array): Promise<Uint8Array> {
  const k = await crypto.subtle.importKey(
    "raw",
    key as Uint8Array<ArrayBuffer>,
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  return new Uint8Array(await crypto.subtle.sign("HMAC", k, data as Uint8Array<ArrayBuffer>));
}

/** SHA-256 of `data`. */
export async function sha256(data: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", data as Uint8Array<ArrayBuffer>));
}

/** HKDF-Expand-Label (RFC 8446 §7.1) for lengths up to 32 (one HMAC block). */
export async function expandLabel(
  secret: Uint8Array,
  label: string,
  context: Uint8Array,
  length: number,
): Promise<Uint8Array> {
  const info = concat(u16(length), vec8(enc.encode(`tls13 ${label}`)), vec8(context));
  return (await hmac(secret, concat(info, new Uint8Array([1])))).slice(0, length);
}

/** The server's key share and the shared secret, for the client's share of `group`. */
async function keyExchange(
  group: number,
  clientShare: Uint8Array,
): Promise<{ share: Uint8Array; secret: Uint8Array }> {
  const alg = group === X25519 ? { name: "X25519" } : { name: "ECDH", namedCurve: "P-256" };
  const pair = await crypto.subtle.generateKey(alg, true, ["deriveBits"]) as CryptoKeyPair;
  const share = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey));
  let peer: CryptoKey;
  try {
    peer = await crypto.subtle.importKey(
      "raw",
      clientShare as Uint8Array<ArrayBuffer>,
      alg,
      false,
      [],
    );
  } catch {
    throw new HandshakeRefused(47, "client key share is not a valid public key");
  }
  const bits = await crypto.subtle.deriveBits(
    { name: alg.name, public: peer } as EcdhKeyDeriveParams,
    pair.privateKey,
    256,
  );
  return { share, secret: new Uint8Array(bits) };
}

/** IEEE P1363 (r || s) ECDSA signature → DER `SEQUENCE { INTEGER r, INTEGER s }`. */
function derSignature(raw: Uint8Array): Uint8Array {
  const int = (b: Uint8Array) => {
    let i = 0;
    while (i < b.length - 1 && b[i] === 0) i++;
    let v = b.subarray(i);
    if (v[0] & 0x80) v = concat(new Uint8Array([0]), v);
    return concat(new Uint8Array([0x02, v.length]), v);
  };
  const body = concat(int(raw.subarray(0, 32)), int(raw.subarray(32)));
  return concat(new Uint8Array([0x30, body.length]), body);
}

/** A record-layer writer with the server's handshake traffic keys. */
class Sealer {
  #seq = 0n;
  constructor(readonly key: CryptoKey, readonly iv: Uint8Array) {}
  async seal(type: number, content: Uint8Array): Promise<Uint8Array> {
    const nonce = this.iv.slice();
    let s = this.#seq++;
    for (let i = 11; i >= 4; i--) {
      nonce[i] ^= Number(s & 0xffn);
      s >>= 8n;
    }
    const inner = concat(content, new Uint8Array([type]));
    const header = concat(new Uint8Array([0x17, 3, 3]), u16(inner.length + 16));
    const sealed = new Uint8Array(
      await crypto.subtle.encrypt(
        {
          name: "AES-GCM",
          iv: nonce as Uint8Array<ArrayBuffer>,
          additionalData: header as Uint8Array<ArrayBuffer>,
        },
        this.key,
        inner as Uint8Array<ArrayBuffer>,
      ),
    );
    return concat(header, sealed);
  }
}

/** A fatal alert record (plaintext: sent before keys exist or instead of them). */
export function alertRecord(description: number): Uint8Array {
  return new Uint8Array([0x15, 3, 3, 0, 2, 2, description]);
}

/**
 * The server's flight answering `hello` with `identity`: ServerHello and a
 * ChangeCipherSpec in plaintext, then the encrypted EncryptedExtensions, Certificate,
 * CertificateVerify and Finished. Throws HandshakeRefused for a hello it cannot answer.
 *
 * @example
 * ```ts ignore
 * const flight = await serverFlight(hello, { certDer, privateKey });
 * await conn.write(flight);
 * ```
 */
export async function serverFlight(
  hello: ClientHello,
  identity: ChallengeIdentity,
): Promise<Uint8Array> {
  if (!hello.versions.includes(TLS13)) throw new HandshakeRefused(70, "TLS 1.3 not offered");
  if (!hello.cipherSuites.includes(AES_128_GCM_SHA256)) {
    throw new HandshakeRefused(40, "TLS_AES_128_GCM_SHA256 not offered");
  }
  if (!hello.alpn.includes("acme-tls/1")) {
    throw new HandshakeRefused(120, "acme-tls/1 not offered");
  }
  if (!hello.signatureAlgorithms.includes(ECDSA_P256_SHA256)) {
    throw new HandshakeRefused(40, "ecdsa_secp256r1_sha256 not offered");
  }
  const group = hello.keyShares.has(X25519)
    ? X25519
    : hello.keyShares.has(SECP256R1)
    ? SECP256R1
    : 0;
  if (!group) throw new HandshakeRefused(40, "no X25519 or P-256 key share");
  const { share, secret } = await keyExchange(group, hello.keyShares.get(group)!);

  const serverHello = handshake(
    2,
    concat(
      u16(0x0303),
      crypto.getRandomValues(new Uint8Array(32)),
      vec8(hello.sessionId),
      u16(AES_128_GCM_SHA256),
      new Uint8Array([0]),
      vec16(concat(
        u16(43),
        vec16(u16(TLS13)),
        u16(51),
        vec16(concat(u16(group), vec16(share))),
      )),
    ),
  );
  const zeros = new Uint8Array(32);
  const early = await hmac(zeros, zeros);
  const derived = await expandLabel(early, "derived", await sha256(new Uint8Array()), 32);
  const hsSecret = await hmac(derived, secret);
  const transcript1 = await sha256(concat(hello.message, serverHello));
  const sTraffic = await expandLabel(hsSecret, "s hs traffic", transcript1, 32);
  const key = await crypto.subtle.importKey(
    "raw",
    (await expandLabel(sTraffic, "key", new Uint8Array(), 16)) as Uint8Array<ArrayBuffer>,
    "AES-GCM",
    false,
    ["encrypt"],
  );
  const sealer = new Sealer(key, await expandLabel(sTraffic, "iv", new Uint8Array(), 12));

  const alpn = vec16(vec8(enc.encode("acme-tls/1")));
  const encryptedExtensions = handshake(8, vec16(concat(u16(16), vec16(alpn))));
  const certEntry = concat(u24(identity.certDer.length), identity.certDer, u16(0));
  const certificate = handshake(11, concat(new Uint8Array([0]), u24(certEntry.length), certEntry));
  const transcript2 = await sha256(
    concat(hello.message, serverHello, encryptedExtensions, certificate),
  );
  const signed = concat(
    new Uint8Array(64).fill(0x20),
    enc.encode("TLS 1.3, server CertificateVerify"),
    new Uint8Array([0]),
    transcript2,
  );
  const raw = new Uint8Array(
    await crypto.subtle.sign(
      { name: "ECDSA", hash: "SHA-256" },
      identity.privateKey,
      signed as Uint8Array<ArrayBuffer>,
    ),
  );
  const certificateVerify = handshake(
    15,
    concat(u16(ECDSA_P256_SHA256), vec16(derSignature(raw))),
  );
  const transcript3 = await sha256(
    concat(hello.message, serverHello, encryptedExtensions, certificate, certificateVerify),
  );
  const finishedKey = await expandLabel(sTraffic, "finished", new Uint8Array(), 32);
  const finished = handshake(20, await hmac(finishedKey, transcript3));

  const record = (type: number, body: Uint8Array) =>
    concat(new Uint8Array([type, 3, 3]), u16(body.length), body);
  return concat(
    record(0x16, serverHello),
    record(0x14, new Uint8Array([1])),
    await sealer.seal(0x16, concat(encryptedExtensions, certificate, certificateVerify, finished)),
  );
}
