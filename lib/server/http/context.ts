/**
 * The per-request state every matcher and handler works on: the request, its (rewritable)
 * method/path/query, variables, response headers set before the response exists, the error
 * being handled, and regexp captures. One object per request; everything else is computed
 * lazily so a request that only needs the path never parses headers.
 *
 * @module
 */
import type { ServeInfo } from "../module/listener.ts";
import { HandlerError } from "./errors.ts";
import { canonicalHost, receivedURL, validHost } from "../net/host.ts";

/**
 * The most request body bytes `{http.request.body}` and `{http.request.body_base64}` hold
 * (1 MiB): a longer body fails the request with 413 before the handler that names them runs.
 */
export const BODY_PLACEHOLDER_LIMIT = 1 << 20;

/** The rest of a handler chain (what a handler calls to continue). */
export type Next = (c: RequestContext) => Response | Promise<Response>;

/** What `reverse_proxy` knows of the upstream a request went to (its placeholders). */
export interface ProxyFacts {
  /** Dial address (`{http.reverse_proxy.upstream.address}` and `.hostport`). */
  dial: string;
  /** Host part of the dial address. */
  host: string;
  /** Port part of the dial address ("" for unix sockets). */
  port: string;
  /** Requests in flight to the upstream when it was chosen. */
  requests: number;
  /** The upstream's `max_requests` (0 = none). */
  maxRequests: number;
  /** Remembered failures when it was chosen. */
  fails: number;
  /** Time to the response head in ms; -1 until it arrived. */
  latencyMs: number;
  /** The upstream's status code; 0 until it answered. */
  status: number;
  /** The upstream's response header fields (`{http.reverse_proxy.header.*}`), once answered. */
  headers?: [string, string][];
  /**
   * True while `retry_match` is looked at after a failure past the dial
   * (`{http.reverse_proxy.is_transport_error}`).
   */
  transportError?: boolean;
  /** While `handle_response` routes run: the upstream response they may copy. */
  handling?: UpstreamResponseHandling;
}

/** The upstream response `handle_response` routes work on (`copy_response`...). */
export interface UpstreamResponseHandling {
  /** The upstream's response header fields (hop-by-hop ones removed). */
  readonly headers: [string, string][];
  /** Sends the upstream response to the client as the proxy would (optionally another status). */
  finalize(status?: number): Response;
  /** True once `finalize` handed the upstream body on. */
  readonly finalized: boolean;
}

/** Per-server facts the context needs (trusted proxies for the client IP). */
export interface ServerFacts {
  /** Server name in `apps.http.servers`. */
  readonly name: string;
  /** True when request start times are needed (access log, duration placeholders). */
  readonly timed: boolean;
  /** Returns the client IP for a request, honouring trusted proxies. */
  clientIP(c: RequestContext): string;
  /**
   * True when the peer is a trusted proxy for this server (`trusted_proxies`, or a unix
   * socket peer with `trusted_proxies_unix`).
   */
  trustsPeer?(c: RequestContext): boolean;
  /** The server's `named_routes` (for `invoke`), each compiled per chain tail. */
  readonly namedRoutes?: ReadonlyMap<string, { for(tail: Next): Next }>;
  /** When the server stops (ms since the epoch), while it waits out `shutdown_delay`. */
  readonly shutdownAt?: number;
  /**
   * Serves a request as the listener would hand it over (the whole server: routes, errors,
   * logs); templates' `httpInclude` sends its virtual requests through it.
   */
  readonly handle?: (request: Request, info: ServeInfo) => Response | Promise<Response>;
  /**
   * Drops request fields a CGI-style backend would fold onto other names (`_`, `.`) when the
   * request's headers are first read (header_aliases.ts).
   */
  readonly aliases?: { apply(c: RequestContext): void };
}

/**
 * Percent-decodes a path the way Go's `url.PathUnescape` does; null on a malformed escape.
 *
 * @example
 * ```ts
 * import { decodePath } from "./context.ts";
 * decodePath("/a%20b"); // "/a b"
 * ```
 */
export function decodePath(raw: string): string | null {
  if (raw.indexOf("%") < 0) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    // Malformed escape or invalid UTF-8: decode bytes by hand (Go allows arbitrary bytes).
    const bytes: number[] = [];
    for (let i = 0; i < raw.length; i++) {
      const ch = raw.charCodeAt(i);
      if (ch === 37 /* % */) {
        const hex = raw.slice(i + 1, i + 3);
        if (!/^[0-9a-fA-F]{2}$/.test(hex)) return null;
        bytes.push(parseInt(hex, 16));
        i += 2;
      } else if (ch < 128) bytes.push(ch);
      else bytes.push(...new TextEncoder().encode(raw[i]));
    }
    return new TextDecoder().decode(new Uint8Array(bytes));
  }
}

/** Splits a `host[:port]` string (IPv6 in brackets) into host and port ("" when absent). */
export function splitHostPort(hostport: string): [string, string] {
  if (hostport.startsWith("[")) {
    const end = hostport.indexOf("]");
    if (end < 0) return [hostport, ""];
    const rest = hostport.slice(end + 1);
    return [hostport.slice(1, end), rest.startsWith(":") ? rest.slice(1) : ""];
  }
  const i = hostport.lastIndexOf(":");
  if (i < 0 || hostport.indexOf(":") !== i) return [hostport, ""];
  return [hostport.slice(0, i), hostport.slice(i + 1)];
}

/**
 * One request in flight. Matchers read it; handlers read and change it (rewrite changes
 * `method`/`rawPath`/`query`, `headers` handlers change `headers` through `mutableHeaders()`).
 */
export class RequestContext {
  /** The request as received. */
  readonly request: Request;
  /** Connection facts from the listener. */
  readonly info: ServeInfo;
  /** The server handling it. */
  readonly server: ServerFacts;
  /** `http` or `https`. */
  readonly scheme: string;
  /**
   * The request host and optional port: the target's authority (from `Host`, or the
   * absolute-form target). Valid once `settleHost()` returned true.
   */
  host: string;
  /** Current method (rewritable). */
  method: string;
  /** Current escaped path as sent (rewritable). */
  rawPath: string;
  /** Current raw query without `?` (rewritable). */
  query: string;
  /** Method before any rewrite. */
  readonly origMethod: string;
  /** Escaped path before any rewrite. */
  readonly origRawPath: string;
  /** Query before any rewrite. */
  readonly origQuery: string;
  /** Start time (ms, performance clock); 0 when nothing needs it (see `ServerFacts.timed`). */
  readonly start: number;
  /** `http.vars.*` variables, created on first use. */
  vars: Map<string, unknown> | null = null;
  /** Response headers set before a handler produced the response (Caddy's `w.Header()`). */
  respHeaders: Headers | null = null;
  /** The request body as handlers should read it (request_body may wrap it with a limit). */
  body: ReadableStream<Uint8Array> | null;
  /** The error being handled by `errors` routes. */
  error: HandlerError | null = null;
  /** Placeholders set at run time (regexp captures `http.regexp.*`, map outputs, auth). */
  extra: Map<string, string> | null = null;
  /** Route groups already taken by a route in this request. */
  groups: Set<string> | null = null;
  /** The upstream `reverse_proxy` chose (its placeholders), null before proxying. */
  proxy: ProxyFacts | null = null;
  /** Authenticated user id (`{http.auth.user.id}`), "" when none. */
  userId = "";
  /** False once a handler deleted the `Server` response header. */
  serverHeader = true;
  /**
   * The `Alt-Svc` the answer gets (HTTP/3 advertised), null for none; a `headers` handler
   * deleting `Alt-Svc` clears it.
   */
  altSvc: string | null = null;
  /** Set by a handler whose response already carries every header (`Server` included). */
  headersFinal = false;
  /** True to skip the access log for this request. */
  skipLog = false;
  /** Request body bytes read by handlers (access log `bytes_read`). */
  bytesRead = 0;
  /** How deep `invoke` calls are nested in this request (loops stop at a limit). */
  invokeDepth = 0;
  /** Fields `log_append` adds to this request's access log record, in order. */
  logFields: [string, unknown][] | null = null;
  /** The request body as read for `{http.request.body}` (`readBody()`), null before. */
  bodyBytes: Uint8Array | null = null;
  #path: string | null = null;
  #pathFor: string | null = null;
  #clientIP: string | null = null;
  #headersCopied = false;
  #headers: Headers | null = null;
  #bodyFromRequest: boolean;

  /** Builds the context from a request as the listener gives it. */
  constructor(request: Request, info: ServeInfo, server: ServerFacts) {
    this.request = request;
    this.info = info;
    this.server = server;
    this.start = server.timed ? performance.now() : 0;
    const url = receivedURL(request);
    const schemeEnd = url.indexOf("://");
    // The scheme is the connection's: an absolute-form target cannot make plain HTTP https.
    this.scheme = info.tls ? "https" : "http";
    const authStart = schemeEnd > 0 ? schemeEnd + 3 : 0;
    let pathStart = authStart;
    while (pathStart < url.length) {
      const ch = url.charCodeAt(pathStart);
      if (ch === 47 /* / */ || ch === 63 /* ? */ || ch === 35 /* # */) break;
      pathStart++;
    }
    this.host = url.slice(authStart, pathStart);
    const q = url.indexOf("?", pathStart);
    if (q < 0) {
      this.rawPath = pathStart < url.length ? url.slice(pathStart) : "/";
      this.query = "";
    } else {
      this.rawPath = q > pathStart ? url.slice(pathStart, q) : "/";
      this.query = url.slice(q + 1);
    }
    this.method = request.method;
    this.body = null;
    this.#bodyFromRequest = true;
    this.origMethod = this.method;
    this.origRawPath = this.rawPath;
    this.origQuery = this.query;
  }

  /**
   * Settles the one request host (RFC 9112 §3.2.2): the authority of an absolute-form target
   * wins over `Host`, which is then replaced by it, so routes, placeholders, logs and the
   * `Host` sent upstream all see the same value. False when the `Host` field or the target's
   * authority is not a valid host, or the target's scheme is not http(s): the server
   * answers 400 before any route runs.
   */
  settleHost(): boolean {
    const url = this.request.url;
    const scheme = url.slice(0, url.indexOf("://")).toLowerCase();
    if (scheme !== "http" && scheme !== "https") return false;
    // one field read from the request: the whole list is materialised only when needed
    const header = this.request.headers.get("host");
    if (header !== null && header !== "" && !validHost(header)) return false;
    // One spelling: a name's trailing dot dropped, empty labels refused (host.ts).
    const host = canonicalHost(this.host);
    if (host === null) return false;
    this.host = host;
    if (header !== null && header !== host) this.mutableHeaders().set("host", host);
    return true;
  }

  /** The decoded path (`{http.request.uri.path}`); "" when the escape is malformed. */
  get path(): string {
    if (this.#pathFor !== this.rawPath) {
      this.#path = decodePath(this.rawPath) ?? "";
      this.#pathFor = this.rawPath;
    }
    return this.#path!;
  }

  /** Sets the path from a decoded value (escaping what must be escaped). */
  setPath(decoded: string): void {
    this.rawPath = encodeURI(decoded).replace(/\?/g, "%3F").replace(/#/g, "%23");
    this.#path = decoded;
    this.#pathFor = this.rawPath;
  }

  /** Host without port, lower-cased brackets removed for IPv6. */
  get hostname(): string {
    return splitHostPort(this.host)[0];
  }

  /** The request URI: escaped path plus `?query` when there is one. */
  get uri(): string {
    return this.query ? `${this.rawPath}?${this.query}` : this.rawPath;
  }

  /** The remote (peer) address host. */
  get remoteHost(): string {
    const a = this.info.remoteAddr;
    return a.transport !== "unix" ? a.hostname : "";
  }

  /** The remote (peer) port as a string. */
  get remotePort(): string {
    const a = this.info.remoteAddr;
    return a.transport !== "unix" ? String(a.port) : "";
  }

  /** The client IP: the remote host, or the forwarded address from a trusted proxy. */
  get clientIP(): string {
    if (this.#clientIP === null) this.#clientIP = this.server.clientIP(this);
    return this.#clientIP;
  }

  /**
   * The request headers (read from the request on first use: materialising them costs time
   * a request that never looks at a header should not pay), without the fields the server
   * drops (names with `_` or `.`: header_aliases.ts), so no matcher, placeholder, handler or
   * upstream sees one. Change them through `mutableHeaders()`.
   */
  get headers(): Headers {
    if (this.#headers === null) {
      this.#headers = this.request.headers;
      this.server.aliases?.apply(this);
    }
    return this.#headers!;
  }

  /** Request headers, copied on first call so they can be changed. */
  mutableHeaders(): Headers {
    if (!this.#headersCopied) {
      this.#headers = new Headers(this.headers);
      this.#headersCopied = true;
    }
    return this.#headers!;
  }

  /** Response headers to apply on the final response, created on first use. */
  responseHeaders(): Headers {
    return this.respHeaders ??= new Headers();
  }

  /** The current request body stream (null when there is none). */
  requestBody(): ReadableStream<Uint8Array> | null {
    if (this.#bodyFromRequest) {
      this.#bodyFromRequest = false;
      this.body = this.request.body;
    }
    return this.body;
  }

  /** Replaces the request body stream. */
  setRequestBody(body: ReadableStream<Uint8Array> | null): void {
    this.#bodyFromRequest = false;
    this.body = body;
  }

  /**
   * Reads the whole request body into `bodyBytes` (once) for `{http.request.body}`, and puts
   * the same bytes back as the body later handlers read. A body longer than
   * {@linkcode BODY_PLACEHOLDER_LIMIT} (declared or sent) fails with 413; so does one over a
   * `request_body` limit met earlier in the chain (its error passes through). A body the
   * client cuts short holds what arrived, as Caddy keeps what it read.
   */
  async readBody(): Promise<void> {
    if (this.bodyBytes !== null) return;
    const limit = BODY_PLACEHOLDER_LIMIT;
    const tooLarge = () =>
      new HandlerError(
        413,
        `request body over ${limit} bytes, the most {http.request.body} holds`,
        "placeholder",
      );
    const declared = Number(this.headers.get("content-length") ?? "NaN");
    if (declared > limit) throw tooLarge();
    const stream = this.requestBody();
    const chunks: Uint8Array[] = [];
    let size = 0;
    if (stream !== null) {
      try {
        // a body a handler already consumed (an upstream got it) reads as what is left
        const reader = stream.getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          size += value.byteLength;
          if (size > limit) {
            reader.cancel().catch(() => {});
            throw tooLarge();
          }
          chunks.push(value);
        }
      } catch (e) {
        if (e instanceof HandlerError) throw e;
        // the client went away, or the body was read before: what arrived is the body
      }
    }
    const bytes = chunks.length === 1 ? chunks[0] : new Uint8Array(size);
    if (chunks.length !== 1) {
      let at = 0;
      for (const ch of chunks) {
        bytes.set(ch, at);
        at += ch.byteLength;
      }
    }
    this.bodyBytes = bytes;
    if (stream !== null) this.setRequestBody(new Blob([bytes as BlobPart]).stream());
  }

  /** Sets a run-time placeholder (regexp captures and the like). */
  setPlaceholder(key: string, value: string): void {
    (this.extra ??= new Map()).set(key, value);
  }

  /** Sets a variable (`{http.vars.<name>}`). */
  setVar(name: string, value: unknown): void {
    (this.vars ??= new Map()).set(name, value);
  }

  /** Reads a variable. */
  getVar(name: string): unknown {
    return this.vars?.get(name);
  }
}
