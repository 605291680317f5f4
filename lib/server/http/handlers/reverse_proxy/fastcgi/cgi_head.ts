/**
 * The CGI response head a FastCGI responder writes at the start of its stdout (RFC 3875
 * section 6): header lines ended by CRLF (or LF, which CGI programs also use), an empty line,
 * then the body. `Status: <code> [reason]` sets the status (200 without it). Field lines are
 * parsed as strictly as an HTTP upstream's (h1parse.ts): no obs-fold, names are tokens, no
 * control bytes in values, one valid Content-Length, Transfer-Encoding only a final
 * `chunked`; anything else is a `FastCGIProtocolError` (502). Pure functions: no I/O.
 *
 * @module
 */
import { H1_LIMITS, latin1, parseResponseHead, UpstreamProtocolError } from "../h1parse.ts";
import { FastCGIProtocolError } from "./records.ts";

/** A parsed CGI response head. */
export interface CGIHead {
  /** The status code (`Status` field, else 200). */
  status: number;
  /** The reason phrase of the `Status` field, "" when none. */
  reason: string;
  /** Header fields in order, names in lower case (`Status` included, as Caddy relays it). */
  headers: [string, string][];
  /** The Content-Length value, or null. */
  contentLength: number | null;
  /** The body is chunked (`Transfer-Encoding: chunked`). */
  chunked: boolean;
}

/**
 * Where the head in `buf` ends: the index of the first body byte, or -1 when the empty line
 * has not arrived yet. Throws when the head is over the size limit (64 KiB).
 *
 * @example
 * ```ts
 * import { headEnd } from "./cgi_head.ts";
 * headEnd(new TextEncoder().encode("Content-Type: text/plain\r\n\r\nhi")); // 28
 * headEnd(new TextEncoder().encode("\nbody")); // 1: no fields at all
 * ```
 */
export function headEnd(buf: Uint8Array): number {
  const max = H1_LIMITS.maxHeadBytes;
  let lineStart = 0;
  for (let i = 0; i < buf.length; i++) {
    if (i >= max) throw new FastCGIProtocolError(`response head larger than ${max} bytes`);
    if (buf[i] !== 10) continue;
    const len = i - lineStart;
    if (len === 0 || (len === 1 && buf[lineStart] === 13)) return i + 1;
    lineStart = i + 1;
  }
  return -1;
}

const STATUS = /^([0-9]{3})(?:[ \t]+([\t\x20-\x7e\x80-\xff]*))?$/;

/**
 * Parses a head (the bytes before the body, final empty line included or not).
 *
 * @example
 * ```ts
 * import { parseCGIHead } from "./cgi_head.ts";
 * const h = parseCGIHead(new TextEncoder().encode("Status: 404 Not Found\r\nX-A: 1\r\n\r\n"));
 * h.status; // 404
 * ```
 */
export function parseCGIHead(bytes: Uint8Array): CGIHead {
  const text = latin1(bytes);
  const lines = text.split("\n").map((l) => l.endsWith("\r") ? l.slice(0, -1) : l);
  while (lines.length && lines[lines.length - 1] === "") lines.pop();
  if (lines.length > H1_LIMITS.maxFieldLines) {
    throw new FastCGIProtocolError(`response head: more than ${H1_LIMITS.maxFieldLines} fields`);
  }
  for (const l of lines) {
    if (l.includes("\r")) throw new FastCGIProtocolError("response head: CR not followed by LF");
    if (l.includes("\0")) throw new FastCGIProtocolError("response head: NUL byte");
  }
  // the head as an HTTP response head, so its fields get the same strict checks
  const http = `HTTP/1.1 200 OK\r\n${lines.map((l) => l + "\r\n").join("")}\r\n`;
  const bytes2 = new Uint8Array(http.length);
  for (let i = 0; i < http.length; i++) bytes2[i] = http.charCodeAt(i);
  let parsed;
  try {
    parsed = parseResponseHead(bytes2);
  } catch (e) {
    if (e instanceof UpstreamProtocolError) throw new FastCGIProtocolError(e.message);
    throw e;
  }
  let status = 200;
  let reason = "";
  const field = parsed.headers.find((f) => f[0] === "status");
  if (field) {
    const m = STATUS.exec(field[1]);
    const code = m ? Number(m[1]) : NaN;
    if (!m || code < 200 || code > 599) {
      throw new FastCGIProtocolError(
        `invalid Status field ${JSON.stringify(field[1].slice(0, 64))} (a code 200-599)`,
      );
    }
    status = code;
    reason = m[2] ?? "";
  }
  return {
    status,
    reason,
    headers: parsed.headers,
    contentLength: parsed.contentLength,
    chunked: parsed.chunked,
  };
}
