/**
 * The HTTP/2 client of `reverse_proxy` (`transport.versions` with `h2c` for plain upstreams,
 * or `2` for TLS ones, negotiated by ALPN): multiplexed `node:http2` sessions per upstream
 * address (h2sessions.ts: `max_conns_per_host`, `keep_alive`, `max_response_header_size`),
 * over connections dialed as the HTTP/1.1 client's are (upstream_dial.ts: `resolver`,
 * `dial_fallback_delay`, `local_address`, `probe_interval`, the TLS settings with
 * `renegotiation`). `expect_continue_timeout` holds a body that asks for `100 Continue` until
 * the upstream sends it (or a final response, or the time is up), as Go's HTTP/2 client does.
 * The request goes with its method, target and authority as pseudo-header fields and without
 * the connection-specific fields HTTP/2 forbids; the response comes back in the same shape as
 * the HTTP/1.1 client's, so the proxy treats both alike. No protocol switch (101) exists here.
 *
 * @module
 */
import type http2 from "node:http2";
import type { H1Response, RoundTrip } from "./h1client.ts";
import { connectionKey } from "./roundtrip.ts";
import type { DialOptions, UpstreamTls } from "./h1conn.ts";
import { DialError, expectsContinue, UpstreamTimeout } from "./transport.ts";
import { splitDial } from "./upstreams.ts";
import { dialStream } from "./upstream_dial.ts";
import type { ByteConn } from "./byte_conn.ts";
import { UpstreamProtocolError } from "./h1parse.ts";
import { type H2Limits, H2Sessions, type Lease } from "./h2sessions.ts";

let nodeHttp2: typeof http2 | undefined;

/** Fields HTTP/2 does not carry (RFC 9113 §8.2.2); `te` only as `trailers`. */
const CONNECTION_SPECIFIC = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
  "host",
]);

/** Go's allowance over `max_response_header_size` for HTTP/2 field overhead (10 fields × 32). */
const HEADER_LIST_OVERHEAD = 320;

/**
 * A TLS upstream that chose HTTP/1.1 by ALPN when offered both (`versions` `1.1` and `2`):
 * the connection, for the HTTP/1.1 client to carry the request on.
 */
export class ChoseHttp1 extends Error {
  /** Stable code. */
  readonly code = "alpn_http1";
  constructor(readonly address: string, readonly conn: ByteConn) {
    super(`upstream ${address} chose HTTP/1.1 by ALPN`);
  }
}

/** What the HTTP/2 client does beyond keeping sessions (the transport's fields). */
export interface H2Options extends H2Limits {
  /**
   * Offer `h2` and `http/1.1` by ALPN (`versions` has `1.1` and `2`): an upstream that picks
   * HTTP/1.1 is not an error but a {@linkcode ChoseHttp1}.
   */
  orHttp1?: boolean;
  /**
   * `expect_continue_timeout` (ms, 0: none): a request with `Expect: 100-continue` and a body
   * sends its body once the upstream answers 100, or after this long.
   */
  expectContinueMs?: number;
}

/** The HTTP/2 client: sessions per upstream address (h2sessions.ts). */
export class H2Pool {
  #sessions: H2Sessions;
  #closed = false;
  #expectContinueMs: number;
  /** The response head limit announced (and enforced: not every upstream keeps to it). */
  #maxHeaderListSize: number;
  /** The `SETTINGS_MAX_HEADER_LIST_SIZE` sent, if any. */
  #maxHeaderListSizeAnnounced: number | undefined;
  /** ALPN offers `http/1.1` too (see {@linkcode H2Options.orHttp1}). */
  #orHttp1: boolean;

  /** h2c (prior knowledge) when `tls` is null, else h2 over TLS. */
  constructor(
    readonly tls: UpstreamTls | null,
    readonly dial: DialOptions = {},
    options: H2Options = {},
  ) {
    this.#expectContinueMs = options.expectContinueMs ?? 0;
    this.#orHttp1 = options.orHttp1 ?? false;
    const maxHeaderListSize = options.maxHeaderBytes === undefined
      ? undefined
      : Math.min(options.maxHeaderBytes + HEADER_LIST_OVERHEAD, 0xffffffff);
    this.#maxHeaderListSize = maxHeaderListSize ?? Infinity;
    this.#maxHeaderListSizeAnnounced = maxHeaderListSize;
    this.#sessions = new H2Sessions(
      (address, timeout) => this.#connect(address, timeout, maxHeaderListSize),
      options,
    );
  }

  /** Closes every session. */
  close(): void {
    this.#closed = true;
    this.#sessions.close();
  }

  async #connect(
    address: string,
    timeout: number,
    maxHeaderListSize: number | undefined,
    preface?: Uint8Array,
    serverName?: string,
  ): Promise<http2.ClientHttp2Session> {
    nodeHttp2 ??= (await import("node:http2")).default;
    const started = Date.now();
    const conn = await dialStream(address, timeout, this.tls, this.dial, {
      preface,
      alpn: this.#orHttp1 ? ["h2", "http/1.1"] : ["h2"],
      serverName,
    });
    if (this.tls && conn.alpn !== "h2" && this.#orHttp1) {
      throw new ChoseHttp1(address, conn.bytes());
    }
    if (this.tls && conn.alpn !== "h2") {
      conn.close();
      throw new DialError(
        `dial ${address}: the upstream did not agree to HTTP/2 (ALPN ${
          JSON.stringify(conn.alpn || "none")
        })`,
      );
    }
    const { host, port } = splitDial(address);
    const authority = `${this.tls ? "https" : "http"}://${
      host.includes(":") ? `[${host}]` : host || "localhost"
    }${port ? `:${port}` : ""}`;
    const left = timeout > 0 ? Math.max(1, timeout - (Date.now() - started)) : 0;
    return await new Promise((resolve, reject) => {
      const session = nodeHttp2!.connect(authority, {
        createConnection: () => conn.stream as unknown as import("node:net").Socket,
        ...(maxHeaderListSize !== undefined ? { settings: { maxHeaderListSize } } : {}),
      });
      let timer: ReturnType<typeof setTimeout> | undefined;
      const fail = (e: Error) => {
        clearTimeout(timer);
        session.destroy();
        conn.close();
        reject(new DialError(`dial ${address}: ${e.message}`));
      };
      if (left > 0) timer = setTimeout(() => fail(new Error("timeout")), left);
      session.once("error", fail);
      // usable once the upstream's SETTINGS arrived: its MAX_CONCURRENT_STREAMS is then known
      // (streams beyond it would be refused)
      session.once("remoteSettings", () => {
        clearTimeout(timer);
        session.off("error", fail);
        session.on("error", () => {}); // later errors end the session's streams
        resolve(session);
      });
    });
  }

  /** One exchange over the upstream's session. */
  async roundTrip(o: RoundTrip): Promise<H1Response> {
    if (this.#closed) throw new DialError("the proxy's upstream client was closed");
    const headers: http2.OutgoingHttpHeaders = {
      ":method": o.method,
      ":path": o.target || "/",
      ":scheme": this.tls ? "https" : "http",
    };
    for (const [k, v] of o.fields) {
      if (k === "host") headers[":authority"] = v;
      else if (CONNECTION_SPECIFIC.has(k)) continue;
      else if (k === "te" && v.trim().toLowerCase() !== "trailers") continue;
      else {
        const had = headers[k];
        headers[k] = had === undefined ? v : Array.isArray(had) ? [...had, v] : [String(had), v];
      }
    }
    let lease: Lease | null;
    try {
      // with a PROXY header, sessions are one client's (its key), dialed with its header;
      // with a server name resolved per request, that name's
      const { preface, serverName } = o;
      lease = preface || serverName !== undefined
        ? await this.#sessions.acquire(
          connectionKey(o),
          o.dialTimeout,
          o.clientDone,
          (t) =>
            this.#connect(
              o.dial,
              t,
              this.#maxHeaderListSizeAnnounced,
              preface?.bytes,
              serverName,
            ),
        )
        : await this.#sessions.acquire(o.dial, o.dialTimeout, o.clientDone);
    } catch (e) {
      // the request goes on over HTTP/1.1 (upstream_client.ts): its body is still unread
      if (e instanceof ChoseHttp1) throw e;
      o.body?.cancel().catch(() => {});
      o.onDone();
      throw e;
    }
    if (!lease) {
      o.body?.cancel().catch(() => {});
      o.onDone();
      throw new Error(`upstream ${o.dial}: the client left before the request was sent`);
    }
    const { session, release } = lease;
    let stream: http2.ClientHttp2Stream;
    try {
      stream = session.request(headers, { endStream: o.body === null });
    } catch (e) {
      release();
      o.onDone();
      throw e;
    }
    stream.once("close", release);
    // expect_continue_timeout: the body waits for 100 Continue, a final response or the time
    let proceed: ((send: boolean) => void) | null = null;
    const gate = o.body !== null && this.#expectContinueMs > 0 && expectsContinue(o.fields)
      ? new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => proceed?.(true), this.#expectContinueMs);
        proceed = (send) => {
          clearTimeout(timer);
          proceed = null;
          resolve(send);
        };
        stream.once("continue", () => proceed?.(true));
        stream.once("close", () => proceed?.(false));
      })
      : null;
    return await new Promise<H1Response>((resolve, reject) => {
      let settled = false;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const settle = () => {
        settled = true;
        clearTimeout(timer);
      };
      if (o.headerTimeout > 0) {
        timer = setTimeout(() => {
          if (settled) return;
          settle();
          stream.close();
          o.onDone();
          reject(new UpstreamTimeout(`upstream ${o.dial}: no response head in time`));
        }, o.headerTimeout);
      }
      stream.once("error", (e) => {
        if (settled) return;
        settle();
        o.onDone();
        reject(e);
      });
      // A client that leaves before the head frees its stream (RST_STREAM CANCEL), as the
      // HTTP/1.1 client closes its connection: else streams of clients long gone would hold
      // the upstream's MAX_CONCURRENT_STREAMS and every later request would wait for good.
      const gone = () => {
        if (settled) return;
        settle();
        // Reset on a later turn of the event loop: Deno's node:http2 sends the HEADERS of a
        // stream reset in the same turn as its request but drops the RST_STREAM, so the
        // upstream would keep the stream open for good.
        setTimeout(() => stream.close(nodeHttp2!.constants.NGHTTP2_CANCEL), 0);
        o.body?.cancel().catch(() => {});
        o.onDone();
        reject(new Error(`upstream ${o.dial}: the client left before the response head`));
      };
      o.clientDone?.then(gone, gone);
      stream.once("response", (h) => {
        if (settled) return;
        settle();
        const status = Number(h[":status"]);
        // the head's size as HTTP/2 counts it (RFC 9113 §6.5.2: name, value and 32 per field)
        let size = 0;
        for (const [k, v] of Object.entries(h)) {
          for (const one of Array.isArray(v) ? v : [String(v)]) size += k.length + one.length + 32;
        }
        if (size > this.#maxHeaderListSize) {
          stream.close(nodeHttp2!.constants.NGHTTP2_ENHANCE_YOUR_CALM);
          proceed?.(false);
          o.body?.cancel().catch(() => {});
          o.onDone();
          reject(
            new UpstreamProtocolError(
              `upstream ${o.dial}: response head of ${size} bytes, over the ` +
                `${this.#maxHeaderListSize} announced (max_response_header_size)`,
            ),
          );
          return;
        }
        // a final answer before 100 Continue: an error status means the body is not wanted
        // (it is not sent and the stream is reset once the response is read, as Go's client)
        proceed?.(status < 300);
        const fields: [string, string][] = [];
        for (const [k, v] of Object.entries(h)) {
          if (k.startsWith(":") || v === undefined) continue;
          for (const one of Array.isArray(v) ? v : [String(v)]) fields.push([k, one]);
        }
        let done = false;
        const finish = () => {
          if (!done) {
            done = true;
            o.onDone();
          }
        };
        const body = new ReadableStream<Uint8Array>({
          start(ctl) {
            stream.on("data", (chunk: Uint8Array) => {
              ctl.enqueue(new Uint8Array(chunk));
              if ((ctl.desiredSize ?? 1) <= 0) stream.pause();
            });
            stream.once("end", () => {
              finish();
              try {
                ctl.close();
              } catch { /* cancelled */ }
            });
            stream.once("error", (e) => {
              finish();
              o.onBodyError?.(e);
              try {
                ctl.error(e);
              } catch { /* cancelled */ }
            });
          },
          pull() {
            stream.resume();
          },
          cancel() {
            finish();
            stream.close();
          },
        });
        const empty = o.method === "HEAD" || status === 204 || status === 304;
        if (empty) {
          body.cancel().catch(() => {});
          finish();
        }
        resolve({ status, headers: fields, body: empty ? null : body, proto: "2.0" });
      });
      if (o.body !== null) {
        const body = o.body;
        (async () => {
          if (gate && !(await gate)) {
            body.cancel().catch(() => {});
            const reset = () => stream.close(nodeHttp2!.constants.NGHTTP2_CANCEL);
            if (stream.readableEnded || stream.destroyed) reset();
            else stream.once("end", reset);
            return;
          }
          const reader = body.getReader();
          try {
            for (;;) {
              const { done, value } = await reader.read();
              if (done) break;
              if (!stream.write(value)) await new Promise((r) => stream.once("drain", r));
            }
            stream.end();
          } catch (e) {
            stream.close();
            if (!settled) {
              settle();
              o.onDone();
              reject(e);
            }
          }
        })();
      }
    });
  }
}
