/**
 * FastCGI 1.0 records (the FastCGI specification, section 3): how a request is written
 * (`BEGIN_REQUEST` for the responder role, the `PARAMS` stream of name-value pairs, the
 * `STDIN` stream) and how the records of a response are read. Reading is strict: a record
 * with another version, another request id, a type a responder never sends, or an
 * `END_REQUEST` whose body is not 8 bytes is a `FastCGIProtocolError` (the client gets 502).
 * Pure functions over bytes, plus one incremental decoder: no I/O.
 *
 * @module
 */

/** `FCGI_BEGIN_REQUEST`. */
export const BEGIN_REQUEST = 1;
/** `FCGI_END_REQUEST`. */
export const END_REQUEST = 3;
/** `FCGI_PARAMS`. */
export const PARAMS = 4;
/** `FCGI_STDIN`. */
export const STDIN = 5;
/** `FCGI_STDOUT`. */
export const STDOUT = 6;
/** `FCGI_STDERR`. */
export const STDERR = 7;

/** The request id of the one request a connection carries. */
export const REQUEST_ID = 1;
/** Largest content of one record written (leaves room under 65535, as Caddy does). */
export const MAX_WRITE = 65500;

/** A response that does not follow the FastCGI protocol; the client gets 502. */
export class FastCGIProtocolError extends Error {
  /** Stable code. */
  readonly code = "fastcgi_protocol";
  /** The status a response not yet started answers with. */
  readonly status = 502;
}

/**
 * One record: the 8-byte header, the content and padding to a multiple of 8 bytes.
 *
 * @example
 * ```ts
 * import { encodeRecord, STDIN } from "./records.ts";
 * encodeRecord(STDIN, new Uint8Array(0)).length; // 8 (an empty record ends the stream)
 * ```
 */
export function encodeRecord(type: number, content: Uint8Array): Uint8Array {
  if (content.length > 0xffff) throw new RangeError("record content over 65535 bytes");
  const padding = -content.length & 7;
  const out = new Uint8Array(8 + content.length + padding);
  out[0] = 1;
  out[1] = type;
  out[2] = REQUEST_ID >> 8;
  out[3] = REQUEST_ID & 0xff;
  out[4] = content.length >> 8;
  out[5] = content.length & 0xff;
  out[6] = padding;
  out.set(content, 8);
  return out;
}

/** `BEGIN_REQUEST` for the responder role; the server closes the connection afterwards. */
export function beginRequest(): Uint8Array {
  // role FCGI_RESPONDER (1), flags 0 (no FCGI_KEEP_CONN)
  return encodeRecord(BEGIN_REQUEST, new Uint8Array([0, 1, 0, 0, 0, 0, 0, 0]));
}

const enc = new TextEncoder();

/** A name-value pair does not fit in one record. */
export class ParamTooLarge extends Error {
  /** Stable code. */
  readonly code = "param_too_large";
}

const NON_ASCII = /[\u0080-\uffff]/;

/** The UTF-8 length of a string and its bytes when it is not ASCII (null for ASCII). */
function utf8(s: string): { length: number; bytes: Uint8Array | null } {
  if (!NON_ASCII.test(s)) return { length: s.length, bytes: null };
  const bytes = enc.encode(s);
  return { length: bytes.length, bytes };
}

/**
 * The `PARAMS` stream for a set of CGI variables: records of whole name-value pairs (php-fpm
 * reads pairs record by record, so a pair never spans two), then the empty record. Names and
 * values are UTF-8. Throws `ParamTooLarge` for a pair over one record's size.
 *
 * @example
 * ```ts
 * import { encodeParams } from "./records.ts";
 * const bytes = encodeParams([["SCRIPT_NAME", "/index.php"]]);
 * ```
 */
export function encodeParams(pairs: Iterable<[string, string]>): Uint8Array {
  let out = new Uint8Array(4096);
  let len = 0;
  const ensure = (n: number) => {
    if (len + n <= out.length) return;
    let size = out.length * 2;
    while (size < len + n) size *= 2;
    const bigger = new Uint8Array(size);
    bigger.set(out.subarray(0, len));
    out = bigger;
  };
  let recStart = 0;
  const open = () => {
    ensure(8);
    recStart = len;
    len += 8;
  };
  const close = () => {
    const content = len - recStart - 8;
    if (content === 0) {
      len = recStart;
      return;
    }
    const padding = -content & 7;
    ensure(padding);
    out.set([1, PARAMS, 0, REQUEST_ID, content >> 8, content & 0xff, padding, 0], recStart);
    out.fill(0, len, len + padding);
    len += padding;
  };
  const size = (n: number) => {
    if (n <= 127) out[len++] = n;
    else {
      out[len++] = (n >>> 24) | 0x80;
      out[len++] = (n >>> 16) & 0xff;
      out[len++] = (n >>> 8) & 0xff;
      out[len++] = n & 0xff;
    }
  };
  open();
  for (const [name, value] of pairs) {
    const n = utf8(name);
    const v = utf8(value);
    const pairLen = (n.length > 127 ? 4 : 1) + (v.length > 127 ? 4 : 1) + n.length + v.length;
    if (pairLen > MAX_WRITE) {
      throw new ParamTooLarge(`CGI variable ${name} is over ${MAX_WRITE} bytes`);
    }
    if (len - recStart - 8 + pairLen > MAX_WRITE) {
      close();
      open();
    }
    ensure(pairLen);
    size(n.length);
    size(v.length);
    for (const [str, b] of [[name, n], [value, v]] as const) {
      if (b.bytes) out.set(b.bytes, len);
      else enc.encodeInto(str, out.subarray(len, len + b.length));
      len += b.length;
    }
  }
  close();
  ensure(8);
  out.set([1, PARAMS, 0, REQUEST_ID, 0, 0, 0, 0], len);
  len += 8;
  return out.subarray(0, len);
}

/**
 * `STDIN` records carrying `data` (split at `MAX_WRITE` bytes); not the closing empty record.
 *
 * @example
 * ```ts
 * import { encodeStdin } from "./records.ts";
 * encodeStdin(new Uint8Array(3)).length; // 16: header, 3 bytes, 5 bytes of padding
 * ```
 */
export function encodeStdin(data: Uint8Array): Uint8Array {
  if (data.length <= MAX_WRITE) return encodeRecord(STDIN, data);
  const out: Uint8Array[] = [];
  for (let off = 0; off < data.length; off += MAX_WRITE) {
    out.push(encodeRecord(STDIN, data.subarray(off, off + MAX_WRITE)));
  }
  return concat(out);
}

/** Joins byte arrays. */
export function concat(parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0];
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

/** One record of a response. */
export type ResponseRecord =
  | { type: typeof STDOUT | typeof STDERR; content: Uint8Array }
  | { type: typeof END_REQUEST; appStatus: number; protocolStatus: number };

const PROTOCOL_STATUS = ["request complete", "cannot multiplex", "overloaded", "unknown role"];

/** Words for an `END_REQUEST` protocol status. */
export function protocolStatusText(s: number): string {
  return PROTOCOL_STATUS[s] ?? `protocol status ${s}`;
}

/**
 * Decodes response records from bytes as they arrive.
 *
 * @example
 * ```ts
 * import { encodeRecord, RecordDecoder, STDOUT } from "./records.ts";
 * const d = new RecordDecoder();
 * const out = d.push(encodeRecord(STDOUT, new TextEncoder().encode("Status: 200\r\n\r\n")));
 * out.length; // 1
 * ```
 */
export class RecordDecoder {
  #buf: Uint8Array = new Uint8Array(0);

  /** Bytes received and not yet part of a whole record. */
  get pending(): number {
    return this.#buf.length;
  }

  /**
   * Consumes bytes (which must not be changed afterwards: contents are views into them);
   * returns the whole records they complete. Throws `FastCGIProtocolError` on anything
   * malformed.
   */
  push(input: Uint8Array): ResponseRecord[] {
    let buf = input;
    if (this.#buf.length) {
      buf = new Uint8Array(this.#buf.length + input.length);
      buf.set(this.#buf);
      buf.set(input, this.#buf.length);
    }
    const out: ResponseRecord[] = [];
    let off = 0;
    while (buf.length - off >= 8) {
      const version = buf[off];
      const type = buf[off + 1];
      const id = (buf[off + 2] << 8) | buf[off + 3];
      const length = (buf[off + 4] << 8) | buf[off + 5];
      const padding = buf[off + 6];
      if (version !== 1) {
        throw new FastCGIProtocolError(`record of FastCGI version ${version} (expected 1)`);
      }
      if (id !== REQUEST_ID) {
        throw new FastCGIProtocolError(`record for request id ${id} (expected ${REQUEST_ID})`);
      }
      if (type !== STDOUT && type !== STDERR && type !== END_REQUEST) {
        throw new FastCGIProtocolError(`unexpected record type ${type} in a response`);
      }
      if (type === END_REQUEST && length !== 8) {
        throw new FastCGIProtocolError(`END_REQUEST record of ${length} bytes (expected 8)`);
      }
      const total = 8 + length + padding;
      if (buf.length - off < total) break;
      const content = buf.subarray(off + 8, off + 8 + length);
      off += total;
      if (type === END_REQUEST) {
        const appStatus = ((content[0] << 24) | (content[1] << 16) | (content[2] << 8) |
          content[3]) >>> 0;
        out.push({ type, appStatus, protocolStatus: content[4] });
      } else out.push({ type, content } as ResponseRecord);
    }
    // Keep what is left in its own allocation: the input may be reused by the reader.
    this.#buf = off === buf.length ? new Uint8Array(0) : buf.slice(off);
    return out;
  }
}
