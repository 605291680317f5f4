/**
 * Web `Request`s and `Response`s on HTTP/2 streams of the node listener engine: a `Request`
 * from a stream's header list (`:authority` is the host, as `Host` is on HTTP/1.1; cookie
 * fields joined with `; `), its body read with backpressure and cut by `read_timeout`, and a
 * `Response` sent on the stream (connection-specific fields dropped, one-chunk bodies with
 * Content-Length, longer ones streamed; a body that fails mid-way resets the stream).
 *
 * @module
 */
import type http2 from "node:http2";
import { recordReceivedURL, requestURL } from "../../net/host.ts";
import { view, writeTo } from "./streams.ts";

const BODYLESS = (status: number) => status === 204 || status === 304 || status < 200;

/** Response fields HTTP/2 forbids (RFC 9113 8.2.2); `connection: close` asks for a GOAWAY. */
const CONNECTION_FIELDS = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
]);

/** RST_STREAM INTERNAL_ERROR (RFC 9113 7). */
export const INTERNAL_ERROR = 2;

/**
 * The size of a header list as HTTP/2 counts it (RFC 9113 6.5.2: name, value and 32 octets per
 * field), from a flat `[name, value, ...]` list.
 */
export function headerListSize(raw: readonly string[]): number {
  let n = 0;
  for (let i = 0; i + 1 < raw.length; i += 2) n += raw[i].length + raw[i + 1].length + 32;
  return n;
}

/** A stream's request body as a byte stream with backpressure, errored at `deadlineMs`. */
function bodyOf(stream: http2.Http2Stream, deadlineMs: number): ReadableStream<Uint8Array> {
  let ended = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  return new ReadableStream<Uint8Array>({
    start(ctl) {
      const fail = (e: Error) => {
        if (ended) return;
        ended = true;
        clearTimeout(timer);
        try {
          ctl.error(e);
        } catch { /* cancelled */ }
      };
      if (deadlineMs > 0) {
        // Go's HTTP/2 server: the body read fails; the stream itself goes on
        timer = setTimeout(() => {
          fail(new Error("read_timeout: the request body did not arrive in time"));
          stream.pause();
        }, deadlineMs);
      }
      stream.on("data", (d: Uint8Array) => {
        if (ended) return;
        ctl.enqueue(view(d));
        if ((ctl.desiredSize ?? 1) <= 0) stream.pause();
      });
      stream.on("end", () => {
        if (ended) return;
        ended = true;
        clearTimeout(timer);
        try {
          ctl.close();
        } catch { /* cancelled */ }
      });
      stream.on("close", () => fail(new Error("the stream was reset before its body ended")));
      stream.on("error", fail);
    },
    pull() {
      if (!ended) stream.resume();
    },
    cancel() {
      ended = true;
      clearTimeout(timer);
      stream.resume();
    },
  }, { highWaterMark: 4 });
}

/**
 * The `Request` of an HTTP/2 stream, or null when its target or authority is malformed.
 * `raw` is the flat header list (pseudo-header fields included).
 */
export function toH2Request(
  stream: http2.Http2Stream,
  raw: readonly string[],
  scheme: string,
  fallbackHost: string,
  readTimeoutMs: number,
): Request | null {
  let method = "GET";
  let path: string | undefined;
  let authority: string | undefined;
  const fields: [string, string][] = [];
  let cookie: string | undefined;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const k = raw[i];
    const v = raw[i + 1];
    if (k.charCodeAt(0) === 58 /* : */) {
      if (k === ":method") method = v;
      else if (k === ":path") path = v;
      else if (k === ":authority") authority = v;
    } else if (k === "cookie") cookie = cookie === undefined ? v : `${cookie}; ${v}`;
    else fields.push([k, v]);
  }
  let host = authority;
  if (host === undefined || host === "") {
    host = fields.find(([k]) => k === "host")?.[1];
  }
  const target = path ?? (method === "CONNECT" ? "/" : undefined);
  if (target === undefined) return null;
  const url = requestURL(target, host ? [host] : [], scheme, fallbackHost);
  if (url === null) return null;
  const open = !stream.endAfterHeaders;
  const hasBody = open && method !== "GET" && method !== "HEAD";
  if (open && !hasBody) stream.resume(); // a body on GET or HEAD is read and dropped
  const request = hasBody
    ? new Request(url.url, {
      method,
      body: bodyOf(stream, readTimeoutMs),
      duplex: "half",
    } as RequestInit)
    : method === "GET"
    ? new Request(url.url)
    : new Request(url.url, { method });
  const headers = request.headers;
  for (const [k, v] of fields) headers.append(k, v);
  if (cookie !== undefined) headers.set("cookie", cookie);
  recordReceivedURL(request, url.url);
  return request;
}

const LATER = Symbol("later");

function nextTurn(): Promise<typeof LATER> {
  return new Promise((r) => setTimeout(() => r(LATER), 0));
}

/** The HTTP/2 header object of a Response; `close` is set when it asked for `Connection: close`. */
function h2Headers(
  status: number,
  h: Headers,
): { headers: http2.OutgoingHttpHeaders; close: boolean } {
  const headers: http2.OutgoingHttpHeaders = { ":status": status };
  let close = false;
  for (const [k, v] of h) {
    if (CONNECTION_FIELDS.has(k)) {
      if (k === "connection" && /(^|,)\s*close\s*(,|$)/i.test(v)) close = true;
      continue;
    }
    if (k !== "set-cookie") headers[k] = v;
  }
  const cookies = h.getSetCookie();
  if (cookies.length) headers["set-cookie"] = cookies;
  return { headers, close };
}

/**
 * Sends a Response on an HTTP/2 stream. Resolves to true when the response asked for the
 * connection to close (`Connection: close`: the session then ends gracefully, as Go's server
 * does).
 */
export async function sendH2(
  stream: http2.ServerHttp2Stream,
  response: Response,
  head: boolean,
): Promise<boolean> {
  const status = response.status;
  const { headers, close } = h2Headers(status, response.headers);
  const body = response.body;
  const respond = (end: boolean) => {
    if (stream.destroyed || stream.headersSent) return false;
    try {
      stream.respond(headers, { endStream: end });
      return true;
    } catch {
      return false; // reset by the client meanwhile
    }
  };
  if (body === null || head || BODYLESS(status)) {
    if (body !== null) body.cancel().catch(() => {});
    if (body === null && !head && !BODYLESS(status) && headers["content-length"] === undefined) {
      headers["content-length"] = "0";
    }
    respond(true);
    return close;
  }
  const reader = body.getReader();
  let gone = false;
  stream.on("close", () => {
    if (!stream.writableFinished) {
      gone = true;
      reader.cancel().catch(() => {});
    }
  });
  try {
    // A body of unknown length whose first bytes are not there after one turn (a proxied
    // answer, a stream answering as the request body arrives) gets its head at once, without
    // a length, as Caddy flushes such an answer (`reverseproxy/streaming.go` `flushInterval`:
    // -1 for an unknown length; caddytest TestH2ToH2CStream): a client may wait for the head
    // before it sends the body the answer is made of.
    const read = reader.read();
    const soon = headers["content-length"] === undefined
      ? await Promise.race([read, nextTurn()])
      : await read;
    if (soon === LATER) {
      if (!respond(false)) return close;
      const first = await read;
      if (!first.done) {
        if (!(await writeTo(stream, first.value))) return close;
        while (!gone) {
          const { done, value } = await reader.read();
          if (done) break;
          if (!(await writeTo(stream, value))) return close;
        }
      }
      if (!stream.destroyed) stream.end();
      return close;
    }
    const first = soon;
    if (first.done) {
      headers["content-length"] ??= "0";
      respond(true);
      return close;
    }
    const pending = reader.read();
    const second = await Promise.race([pending, nextTurn()]);
    if (second !== LATER && second.done) {
      headers["content-length"] ??= String(first.value.byteLength);
      if (respond(false)) stream.end(first.value);
      return close;
    }
    if (!respond(false) || !(await writeTo(stream, first.value))) return close;
    const next = second === LATER ? await pending : second;
    if (!next.done) {
      if (!(await writeTo(stream, next.value))) return close;
      while (!gone) {
        const { done, value } = await reader.read();
        if (done) break;
        if (!(await writeTo(stream, value))) return close;
      }
    }
    if (!stream.destroyed) stream.end();
  } catch (e) {
    if (!stream.headersSent && !gone) {
      const s = (e as { status?: unknown })?.status;
      const code = typeof s === "number" && s >= 500 && s <= 599 ? s : 500;
      try {
        stream.respond({ ":status": code, "content-length": "0" }, { endStream: true });
      } catch { /* reset meanwhile */ }
      return close;
    }
    // The body failed mid-way: the client must not take a truncated body for a whole one.
    if (!stream.destroyed) stream.close(INTERNAL_ERROR);
  }
  return close;
}
