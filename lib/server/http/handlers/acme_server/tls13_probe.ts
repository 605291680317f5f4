/**
 * A TLS 1.3 client that goes as far as the server's certificate (RFC 8446), for tls-alpn-01:
 * Deno's TLS client refuses a certificate with an unknown critical extension — the
 * acmeIdentifier one this challenge puts there — even with verification off. It offers
 * TLS_AES_128_GCM_SHA256 with X25519 and P-256 key shares and one ALPN protocol, derives the
 * handshake keys, decrypts EncryptedExtensions (the ALPN answer) and Certificate (the leaf),
 * then closes. It does not check CertificateVerify: tls-alpn-01 proves control of the
 * endpoint answering for the name, not possession of the certificate's key. Anything
 * malformed, another version or suite, a HelloRetryRequest or an alert is a `TlsProbeError`.
 *
 * @module
 */

import { concatBytes as concat } from "../../../pki/der.ts";
import { expandLabel, hmac, sha256 } from "../../../tls/acme/tls13.ts";

/** A failed probe, in words. */
export class TlsProbeError extends Error {
  /** Stable code. */
  readonly code = "tls_probe";
}

/** What the server answered. */
export interface ProbeResult {
  /** The ALPN protocol it selected ("" for none). */
  alpn: string;
  /** Its leaf certificate (DER). */
  certificate: Uint8Array;
}

const MAX_RECORD = (1 << 14) + 256;
const MAX_HANDSHAKE = 64 * 1024;
const enc = new TextEncoder();

function u16(n: number): number[] {
  return [(n >> 8) & 0xff, n & 0xff];
}
function vec8(b: number[] | Uint8Array): number[] {
  return [b.length, ...b];
}
function vec16(b: number[] | Uint8Array): number[] {
  return [...u16(b.length), ...b];
}
function ext(type: number, body: number[]): number[] {
  return [...u16(type), ...vec16(body)];
}
/** Reads TLS records from a connection. */
class Records {
  #buf: Uint8Array = new Uint8Array(0);
  constructor(readonly conn: Deno.Conn) {}
  async next(): Promise<{ type: number; body: Uint8Array }> {
    while (true) {
      if (this.#buf.length >= 5) {
        const len = (this.#buf[3] << 8) | this.#buf[4];
        if (len > MAX_RECORD) throw new TlsProbeError("record too large");
        if (this.#buf.length >= 5 + len) {
          const rec = { type: this.#buf[0], body: this.#buf.slice(5, 5 + len) };
          this.#buf = this.#buf.slice(5 + len);
          return rec;
        }
      }
      const chunk = new Uint8Array(16384);
      const n = await this.conn.read(chunk);
      if (n === null) throw new TlsProbeError("the server closed the connection");
      this.#buf = concat(this.#buf, chunk.subarray(0, n));
    }
  }
}

/** Splits handshake messages out of a byte stream. */
class Handshakes {
  #buf: Uint8Array = new Uint8Array(0);
  push(b: Uint8Array): void {
    if (this.#buf.length + b.length > MAX_HANDSHAKE) {
      throw new TlsProbeError("handshake messages too large");
    }
    this.#buf = concat(this.#buf, b);
  }
  take(): { type: number; body: Uint8Array; raw: Uint8Array } | null {
    if (this.#buf.length < 4) return null;
    const len = (this.#buf[1] << 16) | (this.#buf[2] << 8) | this.#buf[3];
    if (this.#buf.length < 4 + len) return null;
    const raw = this.#buf.slice(0, 4 + len);
    this.#buf = this.#buf.slice(4 + len);
    return { type: raw[0], body: raw.subarray(4), raw };
  }
}

/** A cursor over a message body; reads past the end throw. */
class Reader {
  pos = 0;
  constructor(readonly b: Uint8Array) {}
  need(n: number): void {
    if (this.pos + n > this.b.length) throw new TlsProbeError("truncated handshake message");
  }
  u8(): number {
    this.need(1);
    return this.b[this.pos++];
  }
  u16(): number {
    this.need(2);
    const v = (this.b[this.pos] << 8) | this.b[this.pos + 1];
    this.pos += 2;
    return v;
  }
  u24(): number {
    this.need(3);
    const v = (this.b[this.pos] << 16) | (this.b[this.pos + 1] << 8) | this.b[this.pos + 2];
    this.pos += 3;
    return v;
  }
  bytes(n: number): Uint8Array {
    this.need(n);
    const v = this.b.subarray(this.pos, this.pos + n);
    this.pos += n;
    return v;
  }
}

/** Parses ServerHello: the chosen group's key share. */
function parseServerHello(body: Uint8Array): { group: number; share: Uint8Array } {
  const r = new Reader(body);
  r.u16();
  const random = r.bytes(32);
  // HelloRetryRequest has this fixed random (RFC 8446 section 4.1.3)
  if (random[0] === 0xcf && random[1] === 0x21 && random[31] === 0x9c) {
    throw new TlsProbeError("the server asked for a hello retry (no acceptable key share)");
  }
  r.bytes(r.u8());
  const suite = r.u16();
  if (suite !== 0x1301) throw new TlsProbeError(`the server chose cipher suite ${suite}`);
  r.u8();
  const end = r.u16() + r.pos;
  let version = 0;
  let share: { group: number; share: Uint8Array } | null = null;
  while (r.pos < end) {
    const type = r.u16();
    const data = new Reader(r.bytes(r.u16()));
    if (type === 43) version = data.u16();
    if (type === 51) share = { group: data.u16(), share: data.bytes(data.u16()).slice() };
  }
  if (version !== 0x0304) throw new TlsProbeError("the server does not speak TLS 1.3");
  if (!share) throw new TlsProbeError("the server sent no key share");
  return share;
}

/**
 * Connects to `host:port` with SNI `serverName` (none when empty) offering `alpn`; returns
 * the ALPN answer and the leaf certificate. `timeoutMs` limits the whole exchange.
 *
 * @example
 * ```ts
 * import { probeTls13 } from "./tls13_probe.ts";
 * // const { alpn, certificate } = await probeTls13("example.com", 443, "example.com", "acme-tls/1", 10000);
 * ```
 */
export async function probeTls13(
  host: string,
  port: number,
  serverName: string,
  alpn: string,
  timeoutMs: number,
): Promise<ProbeResult> {
  const x = await crypto.subtle.generateKey({ name: "X25519" }, true, [
    "deriveBits",
  ]) as CryptoKeyPair;
  const p = await crypto.subtle.generateKey({ name: "ECDH", namedCurve: "P-256" }, true, [
    "deriveBits",
  ]) as CryptoKeyPair;
  const xPub = new Uint8Array(await crypto.subtle.exportKey("raw", x.publicKey));
  const pPub = new Uint8Array(await crypto.subtle.exportKey("raw", p.publicKey));
  const exts: number[] = [
    ...(serverName ? ext(0, vec16([0, ...vec16(enc.encode(serverName))])) : []),
    ...ext(43, vec8(u16(0x0304))),
    ...ext(10, vec16([...u16(0x001d), ...u16(0x0017)])),
    ...ext(13, vec16([0x04, 0x03, 0x08, 0x04, 0x05, 0x03, 0x08, 0x05, 0x08, 0x07, 0x04, 0x01])),
    ...ext(51, vec16([...u16(0x001d), ...vec16(xPub), ...u16(0x0017), ...vec16(pPub)])),
    ...ext(16, vec16(vec8(enc.encode(alpn)))),
  ];
  const hello = [
    ...u16(0x0303),
    ...crypto.getRandomValues(new Uint8Array(32)),
    ...vec8(crypto.getRandomValues(new Uint8Array(32))),
    ...vec16(u16(0x1301)),
    ...vec8([0]),
    ...vec16(exts),
  ];
  const ch = new Uint8Array([1, 0, (hello.length >> 8) & 0xff, hello.length & 0xff, ...hello]);
  const conn = await Deno.connect({ hostname: host, port });
  const timer = setTimeout(() => conn.close(), timeoutMs);
  try {
    await conn.write(new Uint8Array([22, 3, 1, ...u16(ch.length), ...ch]));
    const records = new Records(conn);
    const plain = new Handshakes();
    let sh: { type: number; body: Uint8Array; raw: Uint8Array } | null = null;
    while (!sh) {
      const rec = await records.next();
      if (rec.type === 21) throw new TlsProbeError(`the server sent alert ${rec.body[1]}`);
      if (rec.type !== 22) throw new TlsProbeError(`unexpected record type ${rec.type}`);
      plain.push(rec.body);
      sh = plain.take();
    }
    if (sh.type !== 2) throw new TlsProbeError("expected ServerHello");
    const share = parseServerHello(sh.body);
    let shared: Uint8Array;
    try {
      shared = share.group === 0x001d
        ? new Uint8Array(
          await crypto.subtle.deriveBits(
            {
              name: "X25519",
              public: await crypto.subtle.importKey(
                "raw",
                share.share as BufferSource,
                { name: "X25519" },
                false,
                [],
              ),
            },
            x.privateKey,
            256,
          ),
        )
        : new Uint8Array(
          await crypto.subtle.deriveBits(
            {
              name: "ECDH",
              public: await crypto.subtle.importKey(
                "raw",
                share.share as BufferSource,
                { name: "ECDH", namedCurve: "P-256" },
                false,
                [],
              ),
            },
            p.privateKey,
            256,
          ),
        );
    } catch {
      throw new TlsProbeError("the server's key share is not valid");
    }
    const empty = await sha256(new Uint8Array(0));
    const early = await hmac(new Uint8Array(32), new Uint8Array(32));
    const derived = await expandLabel(early, "derived", empty, 32);
    const hs = await hmac(derived, shared);
    const transcript = await sha256(concat(ch, sh.raw));
    const sts = await expandLabel(hs, "s hs traffic", transcript, 32);
    const key = await crypto.subtle.importKey(
      "raw",
      (await expandLabel(sts, "key", new Uint8Array(0), 16)) as BufferSource,
      "AES-GCM",
      false,
      ["decrypt"],
    );
    const iv = await expandLabel(sts, "iv", new Uint8Array(0), 12);
    let seq = 0;
    const messages = new Handshakes();
    let chosen = "";
    while (true) {
      const rec = await records.next();
      if (rec.type === 20) continue; // middlebox-compatibility ChangeCipherSpec
      if (rec.type === 21) throw new TlsProbeError(`the server sent alert ${rec.body[1]}`);
      if (rec.type !== 23) throw new TlsProbeError(`unexpected record type ${rec.type}`);
      const nonce = iv.slice();
      for (let i = 0; i < 8; i++) nonce[11 - i] ^= Math.floor(seq / 2 ** (8 * i)) & 0xff;
      seq++;
      let inner: Uint8Array;
      try {
        inner = new Uint8Array(
          await crypto.subtle.decrypt(
            {
              name: "AES-GCM",
              iv: nonce,
              additionalData: new Uint8Array([23, 3, 3, ...u16(rec.body.length)]),
            },
            key,
            rec.body as BufferSource,
          ),
        );
      } catch {
        throw new TlsProbeError("a handshake record failed to decrypt");
      }
      let end = inner.length;
      while (end > 0 && inner[end - 1] === 0) end--;
      if (end === 0) throw new TlsProbeError("a record without a content type");
      const type = inner[end - 1];
      if (type === 21) throw new TlsProbeError(`the server sent alert ${inner[1]}`);
      if (type !== 22) throw new TlsProbeError(`unexpected inner content type ${type}`);
      messages.push(inner.subarray(0, end - 1));
      for (let m = messages.take(); m; m = messages.take()) {
        if (m.type === 8) {
          const r = new Reader(m.body);
          const stop = r.u16() + r.pos;
          while (r.pos < stop) {
            const t = r.u16();
            const d = new Reader(r.bytes(r.u16()));
            if (t === 16) {
              d.u16();
              chosen = new TextDecoder().decode(d.bytes(d.u8()));
            }
          }
        } else if (m.type === 11) {
          const r = new Reader(m.body);
          r.bytes(r.u8());
          if (r.u24() === 0) throw new TlsProbeError("the server sent no certificate");
          return { alpn: chosen, certificate: r.bytes(r.u24()).slice() };
        } else throw new TlsProbeError(`unexpected handshake message ${m.type}`);
      }
    }
  } catch (e) {
    if (e instanceof TlsProbeError) throw e;
    throw new TlsProbeError(`TLS with ${host}:${port}: ${(e as Error).message}`);
  } finally {
    clearTimeout(timer);
    try {
      conn.close();
    } catch { /* closed by the timer */ }
  }
}
