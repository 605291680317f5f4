/**
 * A TLS ClientHello parser (RFC 8446 §4.1.2), for the TLS-ALPN-01 responder: the fields a
 * TLS 1.3 server needs (random, session id, cipher suites, server name, ALPN protocols,
 * supported versions, signature algorithms, key shares). Bytes from the network: it never
 * throws, it returns `null` for anything malformed or incomplete, and it reads nothing past
 * the lengths it was given.
 *
 * @module
 */

/** The parts of a ClientHello the responder uses. */
export interface ClientHello {
  /** The handshake message itself (type + length + body), for the transcript hash. */
  message: Uint8Array;
  /** `legacy_session_id` (echoed in the ServerHello). */
  sessionId: Uint8Array;
  /** Offered cipher suites. */
  cipherSuites: number[];
  /** `server_name` host name ("" when absent). */
  serverName: string;
  /** ALPN protocol names. */
  alpn: string[];
  /** `supported_versions` (empty when absent: TLS 1.2 or older only). */
  versions: number[];
  /** `signature_algorithms`. */
  signatureAlgorithms: number[];
  /** `key_share` entries by named group. */
  keyShares: Map<number, Uint8Array>;
}

class Reader {
  pos = 0;
  constructor(readonly b: Uint8Array, readonly end = b.length) {}
  u8(): number {
    if (this.pos + 1 > this.end) throw RangeError();
    return this.b[this.pos++];
  }
  u16(): number {
    if (this.pos + 2 > this.end) throw RangeError();
    const v = (this.b[this.pos] << 8) | this.b[this.pos + 1];
    this.pos += 2;
    return v;
  }
  u24(): number {
    if (this.pos + 3 > this.end) throw RangeError();
    const v = (this.b[this.pos] << 16) | (this.b[this.pos + 1] << 8) | this.b[this.pos + 2];
    this.pos += 3;
    return v;
  }
  bytes(n: number): Uint8Array {
    if (n < 0 || this.pos + n > this.end) throw RangeError();
    const v = this.b.subarray(this.pos, this.pos + n);
    this.pos += n;
    return v;
  }
  sub(n: number): Reader {
    if (n < 0 || this.pos + n > this.end) throw RangeError();
    const r = new Reader(this.b, this.pos + n);
    r.pos = this.pos;
    this.pos += n;
    return r;
  }
  get left(): number {
    return this.end - this.pos;
  }
}

const SNI = 0, SIG_ALGS = 13, ALPN = 16, VERSIONS = 43, KEY_SHARE = 51;

function extensions(r: Reader, hello: ClientHello): void {
  const seen = new Set<number>();
  while (r.left > 0) {
    const type = r.u16();
    const data = r.sub(r.u16());
    if (seen.has(type)) throw RangeError(); // a repeated extension is a fatal error
    seen.add(type);
    if (type === SNI) {
      const list = data.sub(data.u16());
      while (list.left > 0) {
        const kind = list.u8();
        const name = list.bytes(list.u16());
        if (kind === 0 && !hello.serverName) {
          hello.serverName = String.fromCharCode(...name).toLowerCase();
        }
      }
    } else if (type === ALPN) {
      const list = data.sub(data.u16());
      while (list.left > 0) hello.alpn.push(String.fromCharCode(...list.bytes(list.u8())));
    } else if (type === VERSIONS) {
      const list = data.sub(data.u8());
      while (list.left > 0) hello.versions.push(list.u16());
    } else if (type === SIG_ALGS) {
      const list = data.sub(data.u16());
      while (list.left > 0) hello.signatureAlgorithms.push(list.u16());
    } else if (type === KEY_SHARE) {
      const list = data.sub(data.u16());
      while (list.left > 0) {
        const group = list.u16();
        const key = list.bytes(list.u16());
        if (!hello.keyShares.has(group)) hello.keyShares.set(group, key);
      }
    }
  }
}

/**
 * Parses one ClientHello handshake message (type 1 + 24-bit length + body); null when the
 * bytes are not exactly one well-formed ClientHello.
 *
 * @example
 * ```ts
 * import { parseClientHello } from "./client_hello.ts";
 * parseClientHello(new Uint8Array([1, 0, 0, 0])); // null
 * ```
 */
export function parseClientHello(message: Uint8Array): ClientHello | null {
  try {
    const r = new Reader(message);
    if (r.u8() !== 1) return null;
    const body = r.sub(r.u24());
    if (r.left !== 0) return null;
    const hello: ClientHello = {
      message,
      sessionId: new Uint8Array(),
      cipherSuites: [],
      serverName: "",
      alpn: [],
      versions: [],
      signatureAlgorithms: [],
      keyShares: new Map(),
    };
    body.u16(); // legacy_version
    body.bytes(32); // random
    const sid = body.u8();
    if (sid > 32) return null;
    hello.sessionId = body.bytes(sid).slice();
    const suites = body.sub(body.u16());
    while (suites.left > 1) hello.cipherSuites.push(suites.u16());
    if (suites.left !== 0) return null;
    body.bytes(body.u8()); // legacy_compression_methods
    if (body.left > 0) extensions(body.sub(body.u16()), hello);
    if (body.left !== 0) return null;
    return hello;
  } catch {
    return null;
  }
}

/** Longest ClientHello accepted (real ones are well under 2 KiB; post-quantum ones ~1.8 KiB). */
export const MAX_CLIENT_HELLO = 16_384;

/**
 * Collects the ClientHello handshake message from TLS records read so far: returns the
 * message once complete, `undefined` while more bytes are needed, and null when the bytes are
 * not a TLS handshake (or the hello is longer than {@link MAX_CLIENT_HELLO}).
 *
 * @example
 * ```ts
 * import { clientHelloFromRecords } from "./client_hello.ts";
 * clientHelloFromRecords(new Uint8Array([0x16, 3, 1, 0])); // undefined: incomplete
 * clientHelloFromRecords(new Uint8Array([0x47, 0x45, 0x54, 0x20, 0x2f])); // null: not TLS
 * ```
 */
export function clientHelloFromRecords(bytes: Uint8Array): Uint8Array | null | undefined {
  const parts: Uint8Array[] = [];
  let have = 0;
  let pos = 0;
  for (;;) {
    if (bytes.length - pos < 5) {
      return bytes.length - pos > 0 && bytes[pos] !== 0x16 ? null : undefined;
    }
    if (bytes[pos] !== 0x16 || bytes[pos + 1] !== 3) return null;
    const len = (bytes[pos + 3] << 8) | bytes[pos + 4];
    if (len === 0 || len > 16_384) return null;
    if (bytes.length - pos - 5 < len) return undefined;
    parts.push(bytes.subarray(pos + 5, pos + 5 + len));
    have += len;
    pos += 5 + len;
    const first = parts[0];
    if (have >= 4) {
      const joined = new Uint8Array(have);
      let o = 0;
      for (const p of parts) {
        joined.set(p, o);
        o += p.length;
      }
      if (first[0] !== 1) return null;
      const need = 4 + ((joined[1] << 16) | (joined[2] << 8) | joined[3]);
      if (need > MAX_CLIENT_HELLO) return null;
      if (have >= need) return have === need ? joined : null;
    }
  }
}
