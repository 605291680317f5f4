/**
 * The HTTP/1.1 client of `reverse_proxy`: pooled keep-alive connections (plain TCP, unix
 * sockets or TLS), the request head written in one call, bodies streamed both ways, and
 * responses parsed as strictly as a server parses requests (h1parse.ts, h1chunked.ts). A
 * malformed response head is an `UpstreamProtocolError` (502); a body that breaks its framing
 * after the head was relayed errors its stream (the client's response is cut short). A
 * connection is reused only when its response ended exactly where its framing said, with no
 * byte after it, and nothing arrives while it waits in the pool. It exists because `fetch`
 * rewrites Host, adds headers and decodes compressed bodies, and `node:http` spends most of a
 * proxied request in its own JS layers.
 *
 * @module
 */
import { connectionKey, type H1Response, type RoundTrip } from "./roundtrip.ts";
import { ChunkedDecoder } from "./h1chunked.ts";
import { Conn, connTunnel, type DialOptions, type UpstreamTls } from "./h1conn.ts";
import { dialUpstream } from "./upstream_dial.ts";
import type { ByteConn } from "./byte_conn.ts";
import {
  framing,
  H1_LIMITS,
  HeadScanner,
  parseResponseHead,
  type ResponseHead,
  UpstreamProtocolError,
} from "./h1parse.ts";
import { type RequestHead, requestHead } from "./h1request.ts";
import { expectsContinue, UpstreamTimeout } from "./transport.ts";
import { type ContinueGate, continueGate, requestWriter } from "./h1write.ts";
import { ConnPool, type PoolLimits } from "./h1pool.ts";

export type { PoolLimits };

const enc = new TextEncoder();
const SMALL_BODY = 64 * 1024;

export type { H1Response, RoundTrip } from "./roundtrip.ts";

/** The upstream closed a reused connection before answering: safe to retry once. */
class StaleConnection extends Error {}

/** How requests are written (h1write.ts): the transport's write fields. */
export interface WriteOptions {
  /** `write_buffer_size` (bytes, 0: every piece written as it comes). */
  writeBufferSize?: number;
  /** `expect_continue_timeout` (ms, 0: the body goes at once). */
  expectContinueMs?: number;
}

/** A keep-alive connection pool for one proxy handler. */
export class H1Pool {
  #conns: ConnPool;
  #tls: UpstreamTls | null;
  #dial: DialOptions;
  #maxHeadBytes: number;
  #writeBufferSize: number;
  #expectContinueMs: number;

  /** A pool for plain upstreams, or TLS ones when `tls` is given. */
  constructor(
    tls: UpstreamTls | null = null,
    dial: DialOptions = {},
    limits: PoolLimits = {},
    write: WriteOptions = {},
  ) {
    this.#tls = tls;
    this.#dial = dial;
    this.#conns = new ConnPool(limits);
    this.#maxHeadBytes = limits.maxHeadBytes ?? H1_LIMITS.maxHeadBytes;
    this.#writeBufferSize = write.writeBufferSize ?? 0;
    this.#expectContinueMs = write.expectContinueMs ?? 0;
  }

  /** Closes every idle connection. */
  close(): void {
    this.#conns.close();
  }

  #release(dial: string, c: Conn): void {
    this.#conns.release(dial, c);
  }

  /**
   * An idle connection, or a new one when `max_conns_per_host` allows (else waits for one);
   * connections are pooled by `connectionKey(o)`.
   */
  #acquire(o: RoundTrip, fresh: boolean, dialed?: ByteConn): Promise<Conn> {
    return this.#conns.acquire(
      connectionKey(o),
      fresh || dialed !== undefined,
      async () =>
        new Conn(
          dialed ??
            await dialUpstream(
              o.dial,
              o.dialTimeout,
              this.#tls,
              this.#dial,
              { preface: o.preface?.bytes, serverName: o.serverName },
            ),
          this.#dial.readBufferSize,
        ),
    );
  }

  /**
   * One request/response exchange. Resolves at the response head; `onDone` runs when the
   * body has been read completely or failed. `dialed`: a connection already made for it (a
   * TLS upstream that chose HTTP/1.1 by ALPN), used first.
   */
  async roundTrip(o: RoundTrip, dialed?: ByteConn): Promise<H1Response> {
    let req: RequestHead;
    try {
      req = requestHead(o.method, o.target, o.fields, o.body !== null, o.contentLength);
    } catch (e) {
      dialed?.close();
      o.body?.cancel().catch(() => {});
      o.onDone();
      throw e;
    }

    // Reuse an idle connection; a stale one (closed by the upstream) is retried once fresh.
    for (let attempt = 0;; attempt++) {
      let c: Conn;
      try {
        c = await this.#acquire(o, attempt > 0, attempt === 0 ? dialed : undefined);
      } catch (e) {
        o.onDone();
        throw e;
      }
      const idle = c.reused;
      try {
        return await this.#exchange(c, o, req);
      } catch (e) {
        c.close();
        if (idle && e instanceof StaleConnection && o.body === null) continue;
        o.onDone();
        if (e instanceof StaleConnection) {
          throw new UpstreamProtocolError(`upstream ${o.dial} closed the connection`);
        }
        throw e;
      }
    }
  }

  async #exchange(
    c: Conn,
    o: RoundTrip,
    req: RequestHead,
  ): Promise<H1Response> {
    const { chunked, declared } = req;
    const w = requestWriter(c.conn, this.#writeBufferSize);
    const gate = o.body && this.#expectContinueMs > 0 && expectsContinue(o.fields)
      ? continueGate(this.#expectContinueMs)
      : null;
    try {
      await w.write(req.bytes);
      // the head goes out alone when nothing follows it, or the body waits for 100 Continue
      if (!o.body || gate) await w.flush();
    } catch {
      gate?.open(false);
      throw new StaleConnection();
    }
    let bodyDone = Promise.resolve();
    let bodyFailed: unknown = null;
    let bodySkipped = false;
    if (o.body) {
      const body = o.body;
      bodyDone = (async () => {
        if (gate && !(await gate.wait)) {
          bodySkipped = true;
          body.cancel().catch(() => {});
          return;
        }
        const reader = body.getReader();
        let sent = 0;
        try {
          while (true) {
            const { done, value } = await reader.read();
            if (done) break;
            if (!value.length) continue;
            if (chunked) {
              await w.write(enc.encode(`${value.length.toString(16)}\r\n`));
              await w.write(value);
              await w.write(enc.encode("\r\n"));
              await w.flush();
            } else {
              sent += value.length;
              if (declared >= 0 && sent > declared) {
                reader.cancel().catch(() => {});
                throw new Error(`request body longer than its Content-Length ${declared}`);
              }
              await w.write(value);
            }
          }
          if (chunked) await w.write(enc.encode("0\r\n\r\n"));
          else if (declared >= 0 && sent !== declared) {
            throw new Error(`request body of ${sent} bytes, Content-Length ${declared}`);
          }
          await w.flush();
        } catch (e) {
          bodyFailed = e;
          c.close();
        }
      })();
    }
    let res: ResponseHead;
    try {
      res = await this.#readFinalHead(c, o, () => bodyFailed, gate);
    } finally {
      gate?.open(false); // no answer: the body is not sent (the connection is closed)
    }
    const kind = framing(res, o.method);
    let finished = false;
    const finish = (reusable: boolean) => {
      if (finished) return;
      finished = true;
      bodyDone.then(() => {
        if (reusable && !res.close && !bodyFailed && !bodySkipped) {
          this.#release(connectionKey(o), c);
        } else c.close();
      });
      o.onDone();
    };
    if (res.status === 101) {
      if (!o.upgrade) {
        throw new UpstreamProtocolError(
          `upstream ${o.dial} switched protocols (101) although no switch was asked for; ` +
            `only WebSocket upgrades can be proxied on this server (listener_engine "node" ` +
            `relays every protocol)`,
        );
      }
      // The connection is no longer HTTP and never reused: the caller relays or closes it.
      finished = true;
      o.onDone();
      return { status: 101, headers: res.headers, body: null, tunnel: connTunnel(c) };
    }
    if (kind === "none" || (kind === "length" && res.contentLength === 0)) {
      finish(true);
      return { status: res.status, headers: res.headers, body: null, proto: `1.${res.minor}` };
    }
    if (kind === "length" && res.contentLength! <= SMALL_BODY) {
      // Small bodies of known length are read whole: a byte array answers faster than a stream.
      const want = res.contentLength!;
      try {
        while (c.buf.length < want) {
          if (!(await c.fill())) {
            throw new UpstreamProtocolError(`upstream ${o.dial}: body shorter than Content-Length`);
          }
        }
      } catch (e) {
        finish(false);
        throw e;
      }
      const bytes = c.take(want);
      finish(true);
      return { status: res.status, headers: res.headers, body: bytes, proto: `1.${res.minor}` };
    }
    return {
      status: res.status,
      headers: res.headers,
      body: this.#bodyStream(c, o, res, finish),
      proto: `1.${res.minor}`,
    };
  }

  /** Reads heads until the final (non-1xx, or 101) one, within the header timeout. */
  async #readFinalHead(
    c: Conn,
    o: RoundTrip,
    bodyFailed: () => unknown,
    gate: ContinueGate | null,
  ): Promise<ResponseHead> {
    const readHead = async (): Promise<ResponseHead> => {
      for (let interim = 0;; interim++) {
        const scanner = new HeadScanner(this.#maxHeadBytes);
        let end = scanner.scan(c.buf);
        while (end < 0) {
          let more: boolean;
          try {
            more = await c.fill();
          } catch (e) {
            if (bodyFailed()) throw bodyFailed();
            if (c.buf.length || interim) throw e;
            throw new StaleConnection();
          }
          if (!more) {
            if (bodyFailed()) throw bodyFailed();
            if (c.buf.length || interim) {
              throw new UpstreamProtocolError(
                `upstream ${o.dial} closed the connection in the response head`,
              );
            }
            throw new StaleConnection();
          }
          end = scanner.scan(c.buf);
        }
        const head = parseResponseHead(c.take(end));
        if (head.status >= 200 || head.status === 101) {
          // a final answer before 100 Continue: the body still goes unless the upstream
          // closes the connection (Go's client)
          gate?.open(!head.close);
          return head;
        }
        if (head.status === 100) gate?.open(true);
        if (interim >= H1_LIMITS.maxInterim) {
          throw new UpstreamProtocolError(
            `upstream ${o.dial}: more than ${H1_LIMITS.maxInterim} interim responses`,
          );
        }
      }
    };
    let timer: ReturnType<typeof setTimeout> | undefined;
    let waiting = true;
    const gone = () => {
      if (waiting) c.close();
    };
    o.clientDone?.then(gone, gone);
    try {
      if (o.headerTimeout <= 0) return await readHead();
      return await Promise.race([
        readHead(),
        new Promise<never>((_, rej) => {
          timer = setTimeout(
            () => rej(new UpstreamTimeout(`upstream ${o.dial}: no response headers in time`)),
            o.headerTimeout,
          );
        }),
      ]);
    } finally {
      clearTimeout(timer);
      waiting = false;
    }
  }

  /** The body as a stream: Content-Length, chunked or until the connection closes. */
  #bodyStream(
    c: Conn,
    o: RoundTrip,
    res: ResponseHead,
    finish: (reusable: boolean) => void,
  ): ReadableStream<Uint8Array> {
    const kind = framing(res, o.method);
    const dial = o.dial;
    let left = res.contentLength ?? 0;
    const decoder = kind === "chunked" ? new ChunkedDecoder() : null;
    const fail = (ctl: ReadableStreamDefaultController<Uint8Array>, e: unknown) => {
      finish(false);
      o.onBodyError?.(e);
      ctl.error(e);
    };
    return new ReadableStream<Uint8Array>({
      async pull(ctl) {
        try {
          while (true) {
            if (!c.buf.length && !(await c.fill())) {
              if (kind === "close") {
                ctl.close();
                finish(false);
                return;
              }
              throw new UpstreamProtocolError(
                `upstream ${dial} closed the connection before the body ended`,
              );
            }
            if (kind === "close") {
              ctl.enqueue(c.take(c.buf.length));
              return;
            }
            if (decoder === null) {
              const part = c.take(Math.min(left, c.buf.length));
              left -= part.length;
              ctl.enqueue(part);
              if (left === 0) {
                ctl.close();
                finish(c.buf.length === 0);
              }
              return;
            }
            const step = decoder.push(c.buf);
            c.take(step.used);
            for (const d of step.data) if (d.length) ctl.enqueue(d);
            if (step.done) {
              ctl.close();
              finish(c.buf.length === 0);
              return;
            }
            if (step.data.some((d) => d.length)) return;
          }
        } catch (e) {
          fail(ctl, e);
        }
      },
      cancel() {
        finish(false);
      },
    });
  }
}
