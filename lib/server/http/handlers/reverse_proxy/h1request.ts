/**
 * The request head the HTTP/1.1 client writes upstream, and its framing. The framing declared
 * is always the body sent: no body, no `Content-Length` (a length without its bytes would make
 * the upstream read the next request on the connection as this one's body) but a `0` for
 * POST, PUT and PATCH, as Go's transport says (servers expect one there); a body with a
 * valid `Content-Length` goes as exactly that many bytes (the caller checks while streaming);
 * any other body goes chunked. `Transfer-Encoding` from the fields is never copied.
 *
 * @module
 */
import { UpstreamProtocolError } from "./h1parse.ts";

const enc = new TextEncoder();

/** The target as it may appear in a request line: bytes outside VCHAR percent-encoded. */
function safeTarget(t: string): string {
  if (/^[\x21-\x7e]+$/.test(t) && !t.includes("#")) return t;
  let out = "";
  for (const b of enc.encode(t)) {
    out += b > 0x20 && b < 0x7f && b !== 0x23
      ? String.fromCharCode(b)
      : `%${b.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out || "/";
}

/** Methods whose request says `Content-Length: 0` without a body (Go's transfer writer). */
const LENGTH_WITHOUT_BODY: ReadonlySet<string> = new Set(["POST", "PUT", "PATCH"]);

/** A serialized request head and how its body is framed. */
export interface RequestHead {
  /** The head's bytes, empty line included. */
  bytes: Uint8Array;
  /** The body goes with chunked coding. */
  chunked: boolean;
  /** The body's declared length; -1 when chunked or when there is no body. */
  declared: number;
}

/**
 * Serializes a request head: `method` must be a token, `fields` are lower-case names; `hasBody`
 * and `contentLength` say whether a body follows and whether the fields carry its length.
 * Throws `UpstreamProtocolError` for an invalid method or `Content-Length`.
 *
 * @example
 * ```ts
 * import { requestHead } from "./h1request.ts";
 * const h = requestHead("GET", "/x", [["host", "a"], ["content-length", "5"]], false, true);
 * // no body: no length declared
 * new TextDecoder().decode(h.bytes); // "GET /x HTTP/1.1\r\nhost: a\r\n\r\n"
 * ```
 */
export function requestHead(
  method: string,
  target: string,
  fields: Iterable<[string, string]>,
  hasBody: boolean,
  contentLength: boolean,
): RequestHead {
  if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(method)) {
    throw new UpstreamProtocolError(`invalid request method ${JSON.stringify(method)}`);
  }
  let head = `${method} ${safeTarget(target)} HTTP/1.1\r\n`;
  let declared = -1;
  for (const [k, v] of fields) {
    if (k === "transfer-encoding") continue;
    if (k === "content-length") {
      if (!hasBody || !contentLength || declared >= 0) continue;
      if (!/^\d{1,15}$/.test(v)) {
        throw new UpstreamProtocolError(`invalid request Content-Length ${JSON.stringify(v)}`);
      }
      declared = Number(v);
    }
    head += `${k}: ${v}\r\n`;
  }
  const chunked = hasBody && declared < 0;
  if (chunked) head += "transfer-encoding: chunked\r\n";
  else if (!hasBody && LENGTH_WITHOUT_BODY.has(method)) head += "content-length: 0\r\n";
  head += "\r\n";
  return { bytes: enc.encode(head), chunked, declared };
}
