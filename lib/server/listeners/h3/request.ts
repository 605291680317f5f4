/**
 * The request of one HTTP/3 request stream (RFC 9114 §4.1, §4.3.1): its header section read
 * and decoded, checked, and turned into a web `Request` whose body is the stream's DATA frames
 * as they arrive.
 *
 * A request is malformed (answered 400, §4.1.2) when: a pseudo-header field is unknown,
 * repeated, empty or after a regular field; `:method`, `:scheme` or `:path` is missing (other
 * than for CONNECT); `:scheme` is not `http` or `https`; there is neither `:authority` nor
 * `Host`, or both and they differ, or the host is not a valid one; a field name has upper-case
 * or other characters a token cannot have, or is connection-specific (`connection`,
 * `keep-alive`, `proxy-connection`, `transfer-encoding`, `upgrade`, a `te` other than
 * `trailers`); a value has CR, LF or NUL; `content-length` is not one number, or the DATA
 * frames do not add up to it (the body then fails). A header section larger than
 * `max_header_bytes` is answered 431; CONNECT (with or without `:protocol`: extended CONNECT
 * is not offered) is answered 501, as nothing here can open a tunnel.
 *
 * Trailers (a HEADERS frame after the DATA) are decoded, so the QPACK state stays right, and
 * checked; a web `Request` cannot carry them, so they go no further (the other listener
 * engines drop them too).
 *
 * @module
 */
import { recordReceivedURL, requestURL } from "../../net/host.ts";
import { H3, H3Error } from "./errors.ts";
import { FRAME, isHttp2OnlyFrame } from "./frames.ts";
import { BLOCKED, type QpackDecoder } from "./qpack/decoder.ts";
import type { StreamReader } from "./stream_reader.ts";

/** Connection-specific fields HTTP/3 forbids (RFC 9114 §4.2). */
const CONNECTION_SPECIFIC = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
]);

/** Characters of a field name in HTTP/3: a token in lower case (RFC 9110 §5.1, RFC 9114 §4.2). */
const NAME_CHAR = new Uint8Array(128);
for (const ch of "abcdefghijklmnopqrstuvwxyz0123456789!#$%&'*+-.^_`|~") {
  NAME_CHAR[ch.charCodeAt(0)] = 1;
}

function validName(name: string): boolean {
  if (name.length === 0) return false;
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c >= 128 || NAME_CHAR[c] === 0) return false;
  }
  return true;
}

function validValue(v: string): boolean {
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c === 0 || c === 10 || c === 13) return false;
  }
  return true;
}

/** What a stream's header section decided. */
export type RequestHead =
  | { kind: "request"; request: Request; body: RequestBody }
  | { kind: "answer"; status: 400 | 431 | 501; reason: string; body: RequestBody | null }
  /** The stream ended (or was reset) before a header section. */
  | { kind: "gone" };

/** Where a request stream's fields are decoded and its limits. */
export interface RequestContext {
  decoder: QpackDecoder;
  streamId: number;
  /** `max_header_bytes`: largest HEADERS frame accepted. */
  maxHeaderBytes: number;
  /** The host of a request without `:authority` or `Host` (the listener's address). */
  fallbackHost: string;
  /** The decoder owes the peer instructions (a Section Acknowledgment). */
  flush(): void;
  /** A connection error met while a handler reads the body: the connection closes. */
  fatal(e: H3Error): void;
}

/** Decodes a HEADERS frame's payload, waiting for the inserts it needs. */
async function decodeSection(c: RequestContext, payload: Uint8Array): Promise<string[]> {
  let fields = c.decoder.decode(payload, c.streamId);
  if (fields === BLOCKED) {
    try {
      await c.decoder.waitFor(c.decoder.required(payload));
    } catch (e) {
      c.decoder.cancelStream(c.streamId);
      c.flush();
      throw e;
    }
    fields = c.decoder.decode(payload, c.streamId);
    if (fields === BLOCKED) throw new H3Error(H3.QPACK_DECOMPRESSION_FAILED, "still blocked");
  }
  c.flush();
  return fields;
}

/** A frame type a request stream must not carry (RFC 9114 §7.2). */
function unexpectedOnRequest(type: number): boolean {
  return type === FRAME.CANCEL_PUSH || type === FRAME.SETTINGS || type === FRAME.PUSH_PROMISE ||
    type === FRAME.GOAWAY || type === FRAME.MAX_PUSH_ID || isHttp2OnlyFrame(type);
}

/**
 * The DATA of a request stream after its header section, with the trailers decoded and
 * checked; `next()` gives the next piece of body, null at the end.
 */
export class RequestBody {
  #left = 0;
  #received = 0;
  #trailers = false;
  #done = false;
  #streamed = false;
  constructor(
    readonly reader: StreamReader,
    readonly context: RequestContext,
    /** The declared `content-length`, or -1. */
    readonly contentLength: number,
  ) {}

  /** True once the stream was read to its end. */
  get done(): boolean {
    return this.#done;
  }

  /** True when the body went to a handler as a stream (it reads it, or not). */
  get streamed(): boolean {
    return this.#streamed;
  }

  /** The next piece of the body; null at its end. Throws H3Error (malformed: stream errors). */
  async next(): Promise<Uint8Array | null> {
    const r = this.reader;
    for (;;) {
      if (this.#left > 0) {
        const piece = await r.piece(this.#left);
        this.#left -= piece.length;
        this.#received += piece.length;
        if (this.contentLength >= 0 && this.#received > this.contentLength) {
          throw new H3Error(H3.MESSAGE_ERROR, "more body than content-length", false);
        }
        return piece;
      }
      if (!(await r.frameHeader())) {
        this.#done = true;
        if (this.contentLength >= 0 && this.#received !== this.contentLength) {
          throw new H3Error(H3.MESSAGE_ERROR, "less body than content-length", false);
        }
        return null;
      }
      const type = r.type;
      if (type === FRAME.DATA) {
        if (this.#trailers) throw new H3Error(H3.FRAME_UNEXPECTED, "DATA after trailers");
        this.#left = r.length;
      } else if (type === FRAME.HEADERS) {
        if (this.#trailers) throw new H3Error(H3.FRAME_UNEXPECTED, "HEADERS after trailers");
        this.#trailers = true;
        const payload = await r.payload(this.context.maxHeaderBytes);
        const fields = await decodeSection(this.context, payload);
        for (let i = 0; i < fields.length; i += 2) {
          if (
            fields[i].charCodeAt(0) === 58 || !validName(fields[i]) || !validValue(fields[i + 1])
          ) {
            throw new H3Error(H3.MESSAGE_ERROR, "malformed trailer field", false);
          }
        }
      } else if (unexpectedOnRequest(type)) {
        throw new H3Error(H3.FRAME_UNEXPECTED, `frame 0x${type.toString(16)} on a request stream`);
      } else await r.skip();
    }
  }

  /** Reads and drops the rest (a body nobody reads: GET, HEAD, an answered request). */
  async drain(): Promise<void> {
    while ((await this.next()) !== null) { /* dropped */ }
  }

  /** The body as a `ReadableStream`; `fatal` gets connection errors met while reading it. */
  stream(fatal: (e: H3Error) => void): ReadableStream<Uint8Array> {
    this.#streamed = true;
    return new ReadableStream<Uint8Array>({
      pull: async (ctl) => {
        try {
          const piece = await this.next();
          if (piece === null) ctl.close();
          else ctl.enqueue(piece);
        } catch (e) {
          if (e instanceof H3Error && e.connection) fatal(e);
          ctl.error(e instanceof H3Error ? new Error(`HTTP/3 request body: ${e.message}`) : e);
        }
      },
      cancel: () => this.reader.cancel(),
    }, { highWaterMark: 0 });
  }
}

/**
 * Reads a request stream up to its header section and makes the `Request`, or says what to
 * answer instead. Throws H3Error for connection errors (frames out of order, QPACK failures).
 */
export async function readRequest(r: StreamReader, c: RequestContext): Promise<RequestHead> {
  for (;;) {
    let more: boolean;
    try {
      more = await r.frameHeader();
    } catch (e) {
      if (e instanceof H3Error) throw e;
      return { kind: "gone" }; // reset by the peer, or the connection went
    }
    if (!more) return { kind: "gone" };
    const type = r.type;
    if (type === FRAME.HEADERS) break;
    if (type === FRAME.DATA) throw new H3Error(H3.FRAME_UNEXPECTED, "DATA before HEADERS");
    if (unexpectedOnRequest(type)) {
      throw new H3Error(H3.FRAME_UNEXPECTED, `frame 0x${type.toString(16)} on a request stream`);
    }
    await r.skip();
  }
  if (r.length > c.maxHeaderBytes) {
    c.decoder.cancelStream(c.streamId);
    c.flush();
    return { kind: "answer", status: 431, reason: "header section too large", body: null };
  }
  const payload = await r.payload();
  let fields: string[];
  try {
    fields = await decodeSection(c, payload);
  } catch (e) {
    if (e instanceof H3Error && !e.connection) {
      return { kind: "answer", status: 431, reason: e.message, body: null };
    }
    throw e;
  }
  return toRequest(fields, r, c);
}

function malformed(reason: string, body: RequestBody | null = null): RequestHead {
  return { kind: "answer", status: 400, reason, body };
}

/** The `Request` of a decoded header section (flat `[name, value, ...]`). */
export function toRequest(fields: string[], r: StreamReader, c: RequestContext): RequestHead {
  let method: string | undefined;
  let scheme: string | undefined;
  let authority: string | undefined;
  let path: string | undefined;
  let protocol: string | undefined;
  let host: string | undefined;
  let cookie: string | undefined;
  let contentLength = -1;
  let i = 0;
  for (; i < fields.length; i += 2) {
    const name = fields[i];
    if (name.charCodeAt(0) !== 58 /* : */) break;
    const value = fields[i + 1];
    if (name === ":method") {
      if (method !== undefined) return malformed("repeated :method");
      method = value;
    } else if (name === ":scheme") {
      if (scheme !== undefined) return malformed("repeated :scheme");
      scheme = value;
    } else if (name === ":authority") {
      if (authority !== undefined) return malformed("repeated :authority");
      authority = value;
    } else if (name === ":path") {
      if (path !== undefined) return malformed("repeated :path");
      path = value;
    } else if (name === ":protocol") {
      if (protocol !== undefined) return malformed("repeated :protocol");
      protocol = value;
    } else return malformed(`pseudo-header field ${name} in a request`);
  }
  const rest = i;
  for (; i < fields.length; i += 2) {
    const name = fields[i];
    const value = fields[i + 1];
    if (name.charCodeAt(0) === 58) return malformed(`${name} after a regular field`);
    if (!validName(name)) return malformed("invalid field name");
    if (!validValue(value)) return malformed("invalid field value");
    if (CONNECTION_SPECIFIC.has(name)) return malformed(`connection-specific field ${name}`);
    if (name === "te" && value.trim().toLowerCase() !== "trailers") {
      return malformed("te other than trailers");
    }
    if (name === "host") {
      if (host !== undefined) return malformed("repeated host");
      host = value;
    } else if (name === "content-length") {
      const n = /^\d{1,15}$/.test(value.trim()) ? Number(value.trim()) : -1;
      if (n < 0 || (contentLength >= 0 && n !== contentLength)) {
        return malformed("invalid content-length");
      }
      contentLength = n;
    }
  }
  const body = new RequestBody(r, c, contentLength);
  if (method === undefined || method === "") return malformed("no :method", body);
  if (method === "CONNECT") {
    if (protocol === undefined && (scheme !== undefined || path !== undefined || !authority)) {
      return malformed("malformed CONNECT", body);
    }
    return {
      kind: "answer",
      status: 501,
      reason: "CONNECT is not supported over HTTP/3 here",
      body,
    };
  }
  if (protocol !== undefined) return malformed(":protocol without CONNECT", body);
  if (scheme === undefined || path === undefined || path === "") {
    return malformed("no :scheme or :path", body);
  }
  if (scheme !== "https" && scheme !== "http") return malformed(`:scheme ${scheme}`, body);
  if (authority === "" || host === "") return malformed("empty authority", body);
  if (authority !== undefined && host !== undefined && authority !== host) {
    return malformed(":authority and host differ", body);
  }
  const hostName = authority ?? host;
  if (hostName === undefined) return malformed("no :authority or host", body);
  if (path !== "*" && path.charCodeAt(0) !== 47 /* / */) return malformed(":path", body);
  if (path === "*" && method !== "OPTIONS") return malformed(":path * without OPTIONS", body);
  const url = requestURL(path, [hostName], "https", c.fallbackHost);
  if (url === null) return malformed("invalid authority", body);
  const hasBody = method !== "GET" && method !== "HEAD" && contentLength !== 0;
  let request: Request;
  try {
    request = hasBody
      ? new Request(url.url, {
        method,
        body: body.stream(c.fatal),
        duplex: "half",
      } as RequestInit)
      : method === "GET"
      ? new Request(url.url)
      : new Request(url.url, { method });
    const headers = request.headers;
    for (let j = rest; j < fields.length; j += 2) {
      const name = fields[j];
      if (name === "cookie") {
        // several cookie fields are one list (RFC 9114 §4.2.1)
        cookie = cookie === undefined ? fields[j + 1] : `${cookie}; ${fields[j + 1]}`;
      } else headers.append(name, fields[j + 1]);
    }
    if (cookie !== undefined) headers.set("cookie", cookie);
  } catch {
    return malformed("invalid method or field", body);
  }
  recordReceivedURL(request, url.url);
  return { kind: "request", request, body };
}
