/**
 * The upstream client of one `reverse_proxy` `http` transport: each request goes to the
 * HTTP/1.1 client or to an HTTP/2 one, chosen per upstream as Caddy's transport chooses: over
 * TLS (the transport has `tls` and the port is not in `tls.except_ports`), HTTP/2 when
 * `versions` has `2` (with `1.1` too: HTTP/2 or HTTP/1.1 as the upstream chooses by ALPN),
 * HTTP/3 when it is `3`; in plain text, HTTP/2 with prior knowledge when
 * `versions` has `h2c`; else HTTP/1.1. The clients share the transport's dialing and TLS settings (one OpenSSL
 * context with `renegotiation`), and its connection fields apply to each as Go applies them.
 *
 * @module
 */
import { H1Pool, type H1Response, type RoundTrip } from "./h1client.ts";
import type { UpstreamTls } from "./h1conn.ts";
import { ChoseHttp1, H2Pool } from "./h2client.ts";
import { DialError } from "./transport.ts";
import { H3Upstreams } from "./h3client.ts";
import type { TransportOptions } from "./transport_config.ts";
import { dialsTls } from "./upstream_dial.ts";
import { H1_LIMITS } from "./h1parse.ts";

/** TLS upstreams remembered as HTTP/1.1 ones at most (then the list starts over). */
const MAX_REMEMBERED = 4096;

/**
 * True when a request may ask for gzip on its own (Go's `http.Transport` and HTTP/2 and
 * HTTP/3 clients, which Caddy's `compression` turns off): it names no encoding (no
 * `Accept-Encoding`, or an empty one), asks for no `Range` and is not HEAD.
 */
function askGzip(o: RoundTrip): boolean {
  if (o.method === "HEAD") return false;
  for (const [k, v] of o.fields) {
    if ((k === "accept-encoding" || k === "range") && v !== "") return false;
  }
  return true;
}

/**
 * The answer to a request that asked for gzip on its own: a `Content-Encoding: gzip` body is
 * decoded, its `Content-Encoding` and `Content-Length` dropped (Go's `gzipReader`); a body
 * that is not gzip fails its stream, which cuts the client's response short.
 */
function gunzipped(res: H1Response): H1Response {
  const first = res.headers.find(([k]) => k === "content-encoding");
  if (!first || first[1].trim().toLowerCase() !== "gzip") return res;
  const headers = res.headers.filter(([k]) => k !== "content-encoding" && k !== "content-length");
  const body = res.body === null
    ? null
    : (res.body instanceof Uint8Array ? new Blob([res.body as BlobPart]).stream() : res.body)
      .pipeThrough(
        new DecompressionStream("gzip") as unknown as ReadableWritablePair<
          Uint8Array,
          Uint8Array
        >,
      );
  return { ...res, headers, body };
}

/** The HTTP/1.1 and HTTP/2 clients of a transport. */
export class UpstreamClient {
  #h1: H1Pool;
  #h2: H2Pool | null = null;
  #h2c: H2Pool | null = null;
  #h3: H3Upstreams | null = null;
  #tls: UpstreamTls | null;
  /** Choose HTTP/2 or HTTP/1.1 per TLS upstream by ALPN. */
  #alpn = false;
  /** TLS upstreams that chose HTTP/1.1 (forgotten when a dial to one fails). */
  #http1 = new Set<string>();

  /** Clients for the decoded transport `t`. */
  constructor(readonly t: TransportOptions) {
    this.#tls = t.tls
      ? {
        insecure: t.insecure,
        serverName: t.serverName,
        ca: t.ca,
        renegotiation: t.renegotiation,
      }
      : null;
    const dial = { ...t.dial, localAddress: t.localAddress };
    const pool = t.pool ?? {};
    this.#h1 = new H1Pool(this.#tls, dial, pool, {
      writeBufferSize: t.writeBufferSize,
      expectContinueMs: t.expectContinueMs,
    });
    // Go's HTTP/2 client takes these from the HTTP/1.1 transport it is configured on; the
    // buffer sizes it does not take (its connections read and write through their own).
    const h2 = {
      maxConnsPerHost: pool.maxConnsPerHost,
      keepAlive: pool.keepAlive,
      idleTimeoutMs: pool.idleTimeoutMs,
      maxHeaderBytes: pool.maxHeadBytes ?? H1_LIMITS.maxHeadBytes,
      expectContinueMs: t.expectContinueMs,
    };
    // `versions` 1.1 and 2: HTTP/2 or HTTP/1.1 to each TLS upstream, as it chooses by ALPN
    this.#alpn = this.#tls !== null && t.h2 === true && t.h1 === true;
    if (this.#tls && t.h2) this.#h2 = new H2Pool(this.#tls, dial, { ...h2, orHttp1: this.#alpn });
    if (t.h2c) this.#h2c = new H2Pool(null, dial, h2);
    if (t.h3) {
      this.#h3 = new H3Upstreams({
        ca: t.ca,
        serverName: t.serverName,
        maxHeaderBytes: h2.maxHeaderBytes,
        localAddress: t.localAddress,
      });
    }
  }

  /**
   * One exchange with the upstream `o.dial`, on the client its protocol needs; with
   * `compression`, gzip asked for and decoded as Go's transport does (`askGzip`).
   */
  async roundTrip(o: RoundTrip): Promise<H1Response> {
    const gzip = this.t.compression && askGzip(o);
    if (gzip) o = { ...o, fields: [...o.fields, ["accept-encoding", "gzip"]] };
    const tls = dialsTls(o.dial, this.#tls !== null, this.t.dial);
    const res = tls && this.#alpn
      ? await this.#byAlpn(o)
      : await (tls && this.#h3 ? this.#h3 : (tls ? this.#h2 : this.#h2c) ?? this.#h1)
        .roundTrip(o);
    return gzip ? gunzipped(res) : res;
  }

  /**
   * An exchange with a TLS upstream offered `h2` and `http/1.1` (as Go's transport with
   * HTTP/2 configured): HTTP/2 when it chooses `h2`; else the request goes over HTTP/1.1 on
   * the connection just made, and later ones to that upstream over HTTP/1.1 until a dial to
   * it fails (it may have changed). A protocol switch (WebSocket) always asks for HTTP/1.1,
   * as Caddy does.
   */
  async #byAlpn(o: RoundTrip): Promise<H1Response> {
    // an upstream may choose by the server name too
    const key = o.serverName === undefined ? o.dial : `${o.dial} sni=${o.serverName}`;
    if (o.upgrade || this.#http1.has(key)) {
      try {
        return await this.#h1.roundTrip(o);
      } catch (e) {
        if (e instanceof DialError) this.#http1.delete(key);
        throw e;
      }
    }
    try {
      return await this.#h2!.roundTrip(o);
    } catch (e) {
      if (!(e instanceof ChoseHttp1)) throw e;
      if (this.#http1.size >= MAX_REMEMBERED) this.#http1.clear();
      this.#http1.add(key);
      return await this.#h1.roundTrip(o, e.conn);
    }
  }

  /** Closes every client's idle connections and sessions. */
  close(): void {
    this.#h1.close();
    this.#h2?.close();
    this.#h2c?.close();
    this.#h3?.close();
    this.#tls?.openssl?.close();
  }
}
