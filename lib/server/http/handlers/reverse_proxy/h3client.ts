/**
 * `reverse_proxy` to HTTP/3 upstreams (`transport http { versions 3 }`, Caddy 2.8+): one QUIC
 * connection per upstream address (`Deno.connectQuic`, ALPN `h3`), opened on first use and
 * again once it closed or the upstream sent GOAWAY, each request a stream of it (the
 * upstream's stream limit makes later ones wait). The request goes as the HTTP/2 client sends
 * it (`Host` as `:authority`, connection-specific fields dropped, `te` only as `trailers`);
 * the answer's head comes back as the other clients give it, its body streamed.
 *
 * What the `http` transport's fields mean here (`transport_config.ts` refuses the others with
 * `versions 3`): `tls.server_name` and the trust pool name and check the upstream's
 * certificate (Deno's QUIC client always checks it), `dial_timeout` bounds the QUIC handshake,
 * `response_header_timeout` the wait for the answer's head, `max_response_header_size` its
 * size, `local_address` the address QUIC connections leave from (one endpoint per transport).
 *
 * @module
 */
import { H3ClientConnection } from "../../../listeners/h3/client.ts";
import type { H1Response, RoundTrip } from "./roundtrip.ts";
import { DialError, UpstreamTimeout } from "./transport.ts";

/** Fields HTTP/3 does not carry (RFC 9114 §4.2). */
const CONNECTION_SPECIFIC = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
  "host",
]);

/** How the client reaches its upstreams. */
export interface H3UpstreamOptions {
  /** Extra trusted roots (PEM); none: the system's (Mozilla's) roots. */
  ca?: string[];
  /** `tls.server_name`; else the upstream's host. */
  serverName?: string;
  /** `max_response_header_size`. */
  maxHeaderBytes: number;
  /** `local_address`: the IP to send from. */
  localAddress?: string;
}

/** The HTTP/3 client of one transport. */
export class H3Upstreams {
  #conns = new Map<string, Promise<H3ClientConnection>>();
  #endpoint: Deno.QuicEndpoint | undefined;
  #closed = false;

  constructor(readonly o: H3UpstreamOptions) {}

  /**
   * The live connection to `dial` (`host:port`) for server name `name` (a request's, else the
   * transport's), a new one when there is none.
   */
  #connection(dial: string, name: string | undefined, timeoutMs: number) {
    if (name === "") {
      return Promise.reject(
        new DialError(
          `dial ${dial} (HTTP/3): server_name resolved to an empty name, and the ` +
            "certificate cannot be verified without one",
        ),
      );
    }
    const key = name === undefined ? dial : `${dial} sni=${name}`;
    const had = this.#conns.get(key);
    if (had) {
      return had.then(
        (c) => c.closed || c.goaway >= 0 ? this.#open(dial, key, name, timeoutMs) : c,
        () => this.#open(dial, key, name, timeoutMs),
      );
    }
    return this.#open(dial, key, name, timeoutMs);
  }

  #open(
    dial: string,
    key: string,
    name: string | undefined,
    timeoutMs: number,
  ): Promise<H3ClientConnection> {
    const colon = dial.lastIndexOf(":");
    const hostname = dial.slice(0, colon).replace(/^\[|\]$/g, "");
    const port = Number(dial.slice(colon + 1));
    if (this.o.localAddress && !this.#endpoint) {
      this.#endpoint = new Deno.QuicEndpoint({ hostname: this.o.localAddress, port: 0 });
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const connecting = H3ClientConnection.connect({
      hostname,
      port,
      serverName: name ?? this.o.serverName ?? hostname,
      caCerts: this.o.ca,
      endpoint: this.#endpoint,
      maxHeaderBytes: this.o.maxHeaderBytes,
    });
    const p = Promise.race([
      connecting,
      new Promise<never>((_, reject) => {
        if (timeoutMs > 0) timer = setTimeout(() => reject(new Error("timeout")), timeoutMs);
      }),
    ]).then((c) => {
      clearTimeout(timer);
      return c;
    }, (e) => {
      clearTimeout(timer);
      connecting.then((c) => c.close(), () => {});
      this.#conns.delete(key);
      throw new DialError(`dial ${dial} (HTTP/3): ${(e as Error).message}`);
    });
    this.#conns.set(key, p);
    return p;
  }

  /** One exchange over the upstream's connection. */
  async roundTrip(o: RoundTrip): Promise<H1Response> {
    if (this.#closed) throw new DialError("the proxy's upstream client was closed");
    let authority = o.dial;
    const headers: [string, string][] = [];
    for (const [k, v] of o.fields) {
      if (k === "host") authority = v;
      else if (CONNECTION_SPECIFIC.has(k)) continue;
      else if (k === "te" && v.trim().toLowerCase() !== "trailers") continue;
      else headers.push([k, v]);
    }
    let conn: H3ClientConnection;
    try {
      conn = await this.#connection(o.dial, o.serverName, o.dialTimeout);
    } catch (e) {
      o.body?.cancel().catch(() => {});
      o.onDone();
      throw e;
    }
    const abort = Promise.withResolvers<void>();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const failure = new Promise<never>((_, reject) => {
      if (o.headerTimeout > 0) {
        timer = setTimeout(
          () => reject(new UpstreamTimeout(`upstream ${o.dial}: no response head in time`)),
          o.headerTimeout,
        );
      }
      o.clientDone?.then(
        () => reject(new Error(`upstream ${o.dial}: the client left before the response head`)),
        () => reject(new Error(`upstream ${o.dial}: the client left before the response head`)),
      );
    });
    let head = false;
    failure.catch(() => {
      if (!head) abort.resolve();
    });
    let res;
    try {
      res = await Promise.race([
        conn.request({
          method: o.method,
          authority,
          path: o.target || "/",
          headers,
          body: o.body,
          abort: abort.promise,
        }),
        failure,
      ]);
    } catch (e) {
      abort.resolve();
      o.body?.cancel().catch(() => {});
      o.onDone();
      throw e;
    } finally {
      head = true;
      clearTimeout(timer);
    }
    let done = false;
    const finish = () => {
      if (!done) {
        done = true;
        o.onDone();
      }
    };
    const empty = o.method === "HEAD" || res.status === 204 || res.status === 304;
    if (empty) {
      res.body.cancel().catch(() => {});
      finish();
      return { status: res.status, headers: res.headers, body: null, proto: "3.0" };
    }
    const reader = res.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(ctl) {
        try {
          const { done, value } = await reader.read();
          if (done) {
            finish();
            ctl.close();
          } else ctl.enqueue(value);
        } catch (e) {
          finish();
          o.onBodyError?.(e);
          ctl.error(e);
        }
      },
      cancel() {
        finish();
        reader.cancel().catch(() => {});
      },
    }, { highWaterMark: 0 });
    return { status: res.status, headers: res.headers, body, proto: "3.0" };
  }

  /** Closes every connection. */
  close(): void {
    this.#closed = true;
    for (const p of this.#conns.values()) p.then((c) => c.close(), () => {});
    this.#conns.clear();
  }
}
