/**
 * The HTTP/2 client of `reverse_proxy` (`transport.versions` with `h2c` for plain upstreams,
 * or `2` for TLS ones, negotiated by ALPN): one multiplexed `node:http2` session per upstream
 * address, opened on first use and again after the upstream closes it (GOAWAY, error). The
 * request goes with its method, target and authority as pseudo-header fields and without the
 * connection-specific fields HTTP/2 forbids; the response comes back in the same shape as the
 * HTTP/1.1 client's, so the proxy treats both alike. No protocol switch (101) exists here.
 *
 * @module
 */
import type http2 from "node:http2";
import type { H1Response, RoundTrip } from "./h1client.ts";
import type { DialOptions, UpstreamTls } from "./h1conn.ts";
import { DialError, UpstreamTimeout } from "./transport.ts";
import { splitDial } from "./upstreams.ts";

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

/** Streams open on a session, and the requests waiting for one of them to close. */
interface Slots {
  open: number;
  waiting: (() => void)[];
}

const slots = new WeakMap<http2.ClientHttp2Session, Slots>();

/**
 * Waits for a stream under the upstream's `MAX_CONCURRENT_STREAMS`: a request beyond it waits
 * here rather than in the session, so a client that leaves meanwhile never opens a stream (a
 * stream reset while still queued in the session could reach the upstream afterwards, and
 * stay open there for good). False when the client left first.
 */
async function takeSlot(
  session: http2.ClientHttp2Session,
  clientDone: Promise<unknown> | undefined,
): Promise<boolean> {
  let s = slots.get(session);
  if (!s) {
    const fresh: Slots = { open: 0, waiting: [] };
    slots.set(session, s = fresh);
    // A session that ends wakes its waiters: their request then fails on it (502).
    session.once("close", () => fresh.waiting.splice(0).forEach((w) => w()));
  }
  const left = clientDone?.then(() => true, () => true);
  while (s.open >= (session.remoteSettings.maxConcurrentStreams ?? Infinity) && !session.closed) {
    let wake!: () => void;
    const turn = new Promise<boolean>((r) => (wake = () => r(false)));
    s.waiting.push(wake);
    if (await (left ? Promise.race([turn, left]) : turn)) {
      const i = s.waiting.indexOf(wake);
      if (i >= 0) s.waiting.splice(i, 1);
      return false;
    }
  }
  s.open++;
  return true;
}

function releaseSlot(session: http2.ClientHttp2Session): void {
  const s = slots.get(session);
  if (!s) return;
  s.open--;
  s.waiting.shift()?.();
}

/** A pool of HTTP/2 sessions, one per upstream address. */
export class H2Pool {
  #sessions = new Map<string, Promise<http2.ClientHttp2Session>>();
  #closed = false;

  /** h2c (prior knowledge) when `tls` is null, else h2 over TLS. */
  constructor(readonly tls: UpstreamTls | null, readonly dial: DialOptions = {}) {}

  /** Closes every session. */
  close(): void {
    this.#closed = true;
    for (const s of this.#sessions.values()) s.then((x) => x.close(), () => {});
    this.#sessions.clear();
  }

  #session(address: string, timeout: number): Promise<http2.ClientHttp2Session> {
    let s = this.#sessions.get(address);
    if (s) return s;
    s = this.#connect(address, timeout);
    this.#sessions.set(address, s);
    s.then((session) => {
      const forget = () => {
        if (this.#sessions.get(address) === s) this.#sessions.delete(address);
      };
      session.once("close", forget);
      session.once("goaway", forget);
      session.once("error", forget);
    }, () => {
      if (this.#sessions.get(address) === s) this.#sessions.delete(address);
    });
    return s;
  }

  async #connect(address: string, timeout: number): Promise<http2.ClientHttp2Session> {
    nodeHttp2 ??= (await import("node:http2")).default;
    const { host, port } = splitDial(address);
    const p = port || (this.tls ? "443" : "80");
    const authority = `${this.tls ? "https" : "http"}://${
      host.includes(":") ? `[${host}]` : host
    }:${p}`;
    const t = this.tls;
    const options: http2.SecureClientSessionOptions = {
      ...(this.dial.localAddress ? { localAddress: this.dial.localAddress } : {}),
      ...(t
        ? {
          rejectUnauthorized: !t.insecure,
          servername: t.serverName ?? (/^[\d.]+$|:/.test(host) ? undefined : host),
          ALPNProtocols: ["h2"],
          ...(t.ca ? { ca: t.ca } : {}),
        }
        : {}),
    };
    return await new Promise((resolve, reject) => {
      const session = nodeHttp2!.connect(authority, options);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const fail = (e: Error) => {
        clearTimeout(timer);
        session.destroy();
        reject(new DialError(`dial ${address}: ${e.message}`));
      };
      if (timeout > 0) timer = setTimeout(() => fail(new Error("timeout")), timeout);
      session.once("error", fail);
      session.once("connect", () => {
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
    let session: http2.ClientHttp2Session;
    try {
      session = await this.#session(o.dial, o.dialTimeout);
    } catch (e) {
      o.onDone();
      throw e;
    }
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
    if (!(await takeSlot(session, o.clientDone))) {
      o.body?.cancel().catch(() => {});
      o.onDone();
      throw new Error(`upstream ${o.dial}: the client left before the request was sent`);
    }
    let stream: http2.ClientHttp2Stream;
    try {
      stream = session.request(headers, { endStream: o.body === null });
    } catch (e) {
      releaseSlot(session);
      o.onDone();
      throw e;
    }
    stream.once("close", () => releaseSlot(session));
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
        resolve({ status, headers: fields, body: empty ? null : body });
      });
      if (o.body !== null) {
        const reader = o.body.getReader();
        (async () => {
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
