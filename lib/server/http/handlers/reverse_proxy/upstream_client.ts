/**
 * The upstream client of one `reverse_proxy` `http` transport: each request goes to the
 * HTTP/1.1 client or to an HTTP/2 one, chosen per upstream as Caddy's transport chooses: over
 * TLS (the transport has `tls` and the port is not in `tls.except_ports`), HTTP/2 when
 * `versions` has `2`, HTTP/3 when it is `3`; in plain text, HTTP/2 with prior knowledge when
 * `versions` has `h2c`; else HTTP/1.1. The clients share the transport's dialing and TLS settings (one OpenSSL
 * context with `renegotiation`), and its connection fields apply to each as Go applies them.
 *
 * @module
 */
import { H1Pool, type H1Response, type RoundTrip } from "./h1client.ts";
import type { UpstreamTls } from "./h1conn.ts";
import { H2Pool } from "./h2client.ts";
import { H3Upstreams } from "./h3client.ts";
import type { TransportOptions } from "./transport_config.ts";
import { dialsTls } from "./upstream_dial.ts";
import { H1_LIMITS } from "./h1parse.ts";

/** The HTTP/1.1 and HTTP/2 clients of a transport. */
export class UpstreamClient {
  #h1: H1Pool;
  #h2: H2Pool | null = null;
  #h2c: H2Pool | null = null;
  #h3: H3Upstreams | null = null;
  #tls: UpstreamTls | null;

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
    if (this.#tls && t.h2) this.#h2 = new H2Pool(this.#tls, dial, h2);
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

  /** One exchange with the upstream `o.dial`, on the client its protocol needs. */
  roundTrip(o: RoundTrip): Promise<H1Response> {
    const tls = dialsTls(o.dial, this.#tls !== null, this.t.dial);
    if (tls && this.#h3) return this.#h3.roundTrip(o);
    const h2 = tls ? this.#h2 : this.#h2c;
    return (h2 ?? this.#h1).roundTrip(o);
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
