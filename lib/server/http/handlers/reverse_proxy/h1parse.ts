/**
 * Strict parsing of HTTP/1.1 response heads from upstreams (RFC 9112 §2-6): where the head
 * ends, the status line, the field lines, and how the body is framed. Anything that is not
 * well-formed is an `UpstreamProtocolError` (the proxy answers 502 and drops the
 * connection): bare CR or LF, NUL and other control bytes, obs-fold, field names that are not
 * tokens, whitespace before a colon, an invalid or conflicting Content-Length, a
 * Transfer-Encoding other than one final `chunked`, Content-Length together with
 * Transfer-Encoding, heads over the size or line limits. Pure functions over bytes: no I/O.
 *
 * @module
 */

/** A malformed or unacceptable upstream response; the client gets 502. */
export class UpstreamProtocolError extends Error {
  /** Stable code. */
  readonly code = "upstream_protocol";
  /** The status a response not yet started answers with. */
  readonly status = 502;
}

/** The limits the upstream client applies (documented in docs/security.md). */
export const H1_LIMITS: {
  /** Bytes of one response head: status line, field lines and the empty line. */
  readonly maxHeadBytes: number;
  /** Field lines in one head (and in one trailer section). */
  readonly maxFieldLines: number;
  /** Interim (1xx) responses before the final one. */
  readonly maxInterim: number;
  /** Bytes of one chunk-size line, extensions included, CRLF excluded. */
  readonly maxChunkLine: number;
  /** Bytes of the trailer section of a chunked body. */
  readonly maxTrailerBytes: number;
} = {
  maxHeadBytes: 64 * 1024,
  maxFieldLines: 256,
  maxInterim: 5,
  maxChunkLine: 4096,
  maxTrailerBytes: 64 * 1024,
};

/** `tchar` (RFC 9110 §5.6.2) by byte value. */
const TCHAR = new Uint8Array(256);
for (const ch of "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") {
  TCHAR[ch.charCodeAt(0)] = 1;
}

/**
 * True when `s` is a non-empty token (a field name, a chunk extension name...).
 *
 * @example
 * ```ts
 * import { isToken } from "./h1parse.ts";
 * isToken("Content-Type"); // true
 * isToken("X A"); // false
 * ```
 */
export function isToken(s: string): boolean {
  if (s.length === 0) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c > 255 || TCHAR[c] === 0) return false;
  }
  return true;
}

/** True when `s` holds only field-value bytes: HTAB, SP, VCHAR, obs-text (no CTL, no DEL). */
export function isFieldValue(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09) || c === 0x7f || c > 0xff) return false;
  }
  return true;
}

/** Bytes as a latin1 string (one char per byte). */
export function latin1(b: Uint8Array): string {
  let s = "";
  for (let i = 0; i < b.length; i += 8192) {
    s += String.fromCharCode.apply(null, b.subarray(i, i + 8192) as unknown as number[]);
  }
  return s;
}

/**
 * Splits one field line into a lower-case name and its value without surrounding whitespace;
 * throws on obs-fold, a missing colon, a name that is not a token (whitespace before the
 * colon included) and control bytes in the value.
 */
export function parseFieldLine(line: string, what: string): [string, string] {
  const first = line.charCodeAt(0);
  if (first === 0x20 || first === 0x09) {
    throw new UpstreamProtocolError(`${what}: obsolete line folding`);
  }
  const colon = line.indexOf(":");
  if (colon < 0) throw new UpstreamProtocolError(`${what}: field line without a colon`);
  const name = line.slice(0, colon);
  if (!isToken(name)) throw new UpstreamProtocolError(`${what}: invalid field name`);
  let a = colon + 1;
  let b = line.length;
  while (a < b && (line.charCodeAt(a) === 0x20 || line.charCodeAt(a) === 0x09)) a++;
  while (b > a && (line.charCodeAt(b - 1) === 0x20 || line.charCodeAt(b - 1) === 0x09)) b--;
  const value = line.slice(a, b);
  if (!isFieldValue(value)) {
    throw new UpstreamProtocolError(`${what}: control character in the value of ${name}`);
  }
  return [name.toLowerCase(), value];
}

/**
 * Finds the end of a response head while its bytes arrive, checking line endings on the way
 * so that a hostile head fails at once rather than at the size limit.
 *
 * @example
 * ```ts
 * import { HeadScanner } from "./h1parse.ts";
 * const s = new HeadScanner();
 * s.scan(new TextEncoder().encode("HTTP/1.1 204 No Content\r\n\r\n")); // 27
 * ```
 */
export class HeadScanner {
  #pos = 0;
  #lineStart = 0;
  #lines = 0;

  /** A scanner refusing heads longer than `maxBytes` (`max_response_header_size`). */
  constructor(readonly maxBytes: number = H1_LIMITS.maxHeadBytes) {}

  /**
   * Scans `buf` (the bytes received so far, from the head's first byte; earlier calls saw a
   * prefix of it). Returns the head's length with its final empty line, or -1 when more
   * bytes are needed. Throws on a bare CR or LF, a NUL, too many lines or too many bytes.
   */
  scan(buf: Uint8Array): number {
    const max = this.maxBytes;
    for (let i = this.#pos; i < buf.length; i++) {
      if (i >= max) throw new UpstreamProtocolError(`response head larger than ${max} bytes`);
      const b = buf[i];
      if (i > 0 && buf[i - 1] === 13 && b !== 10) {
        throw new UpstreamProtocolError("response head: CR not followed by LF");
      }
      if (b === 10) {
        if (i === 0 || buf[i - 1] !== 13) {
          throw new UpstreamProtocolError("response head: LF without CR");
        }
        if (i - 1 === this.#lineStart) return i + 1;
        if (++this.#lines > H1_LIMITS.maxFieldLines + 1) {
          throw new UpstreamProtocolError(
            `response head: more than ${H1_LIMITS.maxFieldLines} field lines`,
          );
        }
        this.#lineStart = i + 1;
      } else if (b === 0) {
        throw new UpstreamProtocolError("response head: NUL byte");
      }
    }
    this.#pos = buf.length;
    return -1;
  }
}

/** A parsed response head. */
export interface ResponseHead {
  /** Minor version: 0 for HTTP/1.0, 1 for HTTP/1.1. */
  minor: 0 | 1;
  /** Status code (100-599). */
  status: number;
  /** Reason phrase ("" when absent). */
  reason: string;
  /** Field lines in order, names in lower case; Content-Length reduced to one field. */
  headers: [string, string][];
  /** The connection cannot carry another request (HTTP/1.0 or `Connection: close`). */
  close: boolean;
  /** The Content-Length value, or null. */
  contentLength: number | null;
  /** Transfer-Encoding is `chunked`. */
  chunked: boolean;
}

const STATUS_LINE = /^HTTP\/1\.([01]) ([1-5][0-9][0-9])(?: ([\t\x20-\x7e\x80-\xff]*))?$/;

function contentLength(values: string[]): number {
  let n: number | null = null;
  for (const v of values) {
    for (const part of v.split(",")) {
      const t = part.trim();
      if (!/^[0-9]{1,15}$/.test(t)) {
        throw new UpstreamProtocolError(`invalid Content-Length ${JSON.stringify(v)}`);
      }
      const m = Number(t);
      if (n !== null && m !== n) {
        throw new UpstreamProtocolError("conflicting Content-Length values");
      }
      n = m;
    }
  }
  return n!;
}

/**
 * Parses a response head (the bytes `HeadScanner` delimited, final empty line included or
 * not).
 *
 * @example
 * ```ts
 * import { parseResponseHead } from "./h1parse.ts";
 * const h = parseResponseHead(new TextEncoder().encode("HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\n\r\n"));
 * h.contentLength; // 2
 * h.headers; // [["content-length", "2"]]
 * ```
 */
export function parseResponseHead(bytes: Uint8Array): ResponseHead {
  const text = latin1(bytes);
  const lines = text.split("\r\n");
  while (lines.length && lines[lines.length - 1] === "") lines.pop();
  const m = STATUS_LINE.exec(lines[0] ?? "");
  if (!m) {
    throw new UpstreamProtocolError(
      `invalid status line ${JSON.stringify((lines[0] ?? "").slice(0, 64))}`,
    );
  }
  const minor = m[1] === "0" ? 0 : 1;
  const headers: [string, string][] = [];
  let close = minor === 0;
  let clValues: string[] | null = null;
  let clIndex = -1;
  let codings: string[] | null = null;
  for (let i = 1; i < lines.length; i++) {
    const field = parseFieldLine(lines[i], "response head");
    const name = field[0];
    if (name === "content-length") {
      if (clValues === null) {
        clValues = [];
        clIndex = headers.length;
        headers.push(field);
      }
      clValues.push(field[1]);
      continue;
    }
    if (name === "transfer-encoding") {
      codings ??= [];
      for (const c of field[1].split(",")) {
        const t = c.trim();
        if (t) codings.push(t.toLowerCase());
      }
    } else if (name === "connection") {
      for (const t of field[1].split(",")) if (t.trim().toLowerCase() === "close") close = true;
    }
    headers.push(field);
  }
  let length: number | null = null;
  if (clValues !== null) {
    length = contentLength(clValues);
    headers[clIndex] = ["content-length", String(length)];
  }
  let chunked = false;
  if (codings !== null) {
    if (minor === 0) throw new UpstreamProtocolError("Transfer-Encoding in an HTTP/1.0 response");
    if (clValues !== null) {
      throw new UpstreamProtocolError("both Content-Length and Transfer-Encoding");
    }
    if (codings.length !== 1 || codings[0] !== "chunked") {
      throw new UpstreamProtocolError(
        `unsupported Transfer-Encoding ${JSON.stringify(codings.join(", "))}`,
      );
    }
    chunked = true;
  }
  return {
    minor,
    status: Number(m[2]),
    reason: m[3] ?? "",
    headers,
    close,
    contentLength: length,
    chunked,
  };
}

/** How a response body ends. */
export type Framing = "none" | "length" | "chunked" | "close";

/**
 * How the body of a response to `method` is delimited (RFC 9112 §6.3): none for HEAD, 1xx,
 * 204 and 304; chunked; Content-Length; otherwise by the connection closing.
 *
 * @example
 * ```ts
 * import { framing, parseResponseHead } from "./h1parse.ts";
 * const h = parseResponseHead(new TextEncoder().encode("HTTP/1.1 200 OK\r\n\r\n"));
 * framing(h, "GET"); // "close"
 * ```
 */
export function framing(head: ResponseHead, method: string): Framing {
  const s = head.status;
  if (method === "HEAD" || s < 200 || s === 204 || s === 304) return "none";
  if (head.chunked) return "chunked";
  if (head.contentLength !== null) return "length";
  return "close";
}
