/**
 * A small HTTP/1.1 client for plain-text upstreams: pooled keep-alive connections over
 * `Deno.connect`, the request head written in one call, responses framed by Content-Length,
 * chunked encoding or connection close, bodies streamed both ways. It exists because `fetch`
 * rewrites Host, adds headers and decodes compressed bodies, and `node:http` spends most of a
 * proxied request in its own JS layers.
 *
 * @module
 */
import type { Tunnel } from "../../../module.ts";
import { DialError, UpstreamTimeout } from "./transport.ts";
import { splitDial } from "./upstreams.ts";

const CRLF = 0x0d0a;
const enc = new TextEncoder();
const MAX_HEAD = 64 * 1024;
const MAX_IDLE_PER_HOST = 64;
const SMALL_BODY = 64 * 1024;
const READ_BUFFER = 32 * 1024;

/** A response head from the upstream: header names in lower case, in the order received. */
export interface H1Response {
  /** Status code. */
  status: number;
  /** Header fields as received (hop-by-hop ones included), names in lower case. */
  headers: [string, string][];
  /** Body: a stream, the whole body for small ones, or null for no body. */
  body: ReadableStream<Uint8Array> | Uint8Array | null;
  /** After `101 Switching Protocols`: the connection, for the caller to relay or close. */
  tunnel?: Tunnel;
}

/** One pooled connection with a read buffer. */
class Conn {
  /** Bytes read and not yet consumed (its own allocation: safe to hand out as a body). */
  buf: Uint8Array = new Uint8Array(0);
  closed = false;
  /** The socket read buffer, reused for every read on this connection. */
  #scratch = new Uint8Array(READ_BUFFER);
  constructor(readonly conn: Deno.Conn) {}
  /** Reads more bytes into the buffer; false on EOF. */
  async fill(): Promise<boolean> {
    const n = await this.conn.read(this.#scratch);
    if (n === null) return false;
    if (this.buf.length === 0) this.buf = this.#scratch.slice(0, n);
    else {
      const merged = new Uint8Array(this.buf.length + n);
      merged.set(this.buf);
      merged.set(this.#scratch.subarray(0, n), this.buf.length);
      this.buf = merged;
    }
    return true;
  }
  take(n: number): Uint8Array {
    const out = this.buf.subarray(0, n);
    this.buf = this.buf.subarray(n);
    return out;
  }
  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      this.conn.close();
    } catch { /* closed */ }
  }
}

function indexOfHeadEnd(b: Uint8Array): number {
  for (let i = 0; i + 3 < b.length; i++) {
    if (b[i] === 13 && b[i + 1] === 10 && b[i + 2] === 13 && b[i + 3] === 10) return i;
  }
  return -1;
}

function indexOfCRLF(b: Uint8Array, from = 0): number {
  for (let i = from; i + 1 < b.length; i++) if (((b[i] << 8) | b[i + 1]) === CRLF) return i;
  return -1;
}

function latin1(b: Uint8Array): string {
  let s = "";
  for (let i = 0; i < b.length; i += 8192) {
    s += String.fromCharCode.apply(null, b.subarray(i, i + 8192) as unknown as number[]);
  }
  return s;
}

async function writeAll(c: Deno.Conn, data: Uint8Array): Promise<void> {
  let off = 0;
  while (off < data.length) off += await c.write(data.subarray(off));
}

/** An upstream connection that left HTTP, bytes already read first. */
function connTunnel(c: Conn): Tunnel {
  return {
    readable: new ReadableStream<Uint8Array>({
      async pull(ctl) {
        try {
          if (!c.buf.length && !(await c.fill())) {
            ctl.close();
            return;
          }
          ctl.enqueue(c.take(c.buf.length));
        } catch (e) {
          ctl.error(e);
        }
      },
      cancel() {
        c.close();
      },
    }),
    writable: new WritableStream<Uint8Array>({
      write: (chunk) => writeAll(c.conn, chunk),
      async close() {
        await c.conn.closeWrite().catch(() => {});
      },
      abort() {
        c.close();
      },
    }),
    close: () => c.close(),
  };
}

/** A keep-alive connection pool for one proxy handler. */
export class H1Pool {
  #idle = new Map<string, Conn[]>();
  #closed = false;

  /** Closes every idle connection. */
  close(): void {
    this.#closed = true;
    for (const list of this.#idle.values()) for (const c of list) c.close();
    this.#idle.clear();
  }

  #release(dial: string, c: Conn): void {
    if (this.#closed || c.closed || c.buf.length) {
      c.close();
      return;
    }
    const list = this.#idle.get(dial) ?? [];
    if (list.length >= MAX_IDLE_PER_HOST) {
      c.close();
      return;
    }
    list.push(c);
    this.#idle.set(dial, list);
  }

  async #dial(dial: string, timeout: number): Promise<Conn> {
    const opts: Deno.ConnectOptions | Deno.UnixConnectOptions = dial.startsWith("unix/")
      ? { transport: "unix", path: dial.slice(5) }
      : (() => {
        const { host, port } = splitDial(dial);
        return { hostname: host, port: port ? Number(port) : 80 };
      })();
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const connecting = Deno.connect(opts as Deno.ConnectOptions);
      const conn = timeout > 0
        ? await Promise.race([
          connecting,
          new Promise<never>((_, rej) => {
            timer = setTimeout(() => {
              connecting.then((c) => c.close(), () => {});
              rej(new DialError(`dial ${dial}: timeout`));
            }, timeout);
          }),
        ])
        : await connecting;
      if ("setNoDelay" in conn) (conn as Deno.TcpConn).setNoDelay(true);
      return new Conn(conn);
    } catch (e) {
      if (e instanceof DialError) throw e;
      throw new DialError(`dial ${dial}: ${(e as Error).message}`);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * One request/response exchange. Resolves at the response head; `onDone` runs when the
   * body has been read completely or failed.
   */
  async roundTrip(
    dial: string,
    method: string,
    path: string,
    fields: Iterable<[string, string]>,
    contentLength: boolean,
    body: ReadableStream<Uint8Array> | null,
    dialTimeout: number,
    headerTimeout: number,
    onDone: () => void,
  ): Promise<H1Response> {
    let head = `${method} ${path} HTTP/1.1\r\n`;
    for (const [k, v] of fields) {
      if (k !== "transfer-encoding") head += `${k}: ${v}\r\n`;
    }
    const chunked = body !== null && !contentLength;
    if (chunked) head += "transfer-encoding: chunked\r\n";
    else if (body === null && !contentLength && method !== "GET" && method !== "HEAD") {
      head += "content-length: 0\r\n";
    }
    head += "\r\n";
    const headBytes = enc.encode(head);

    // Reuse an idle connection; a stale one (closed by the upstream) is retried once fresh.
    for (let attempt = 0;; attempt++) {
      const idle = attempt === 0 ? this.#idle.get(dial)?.pop() : undefined;
      const c = idle ?? await this.#dial(dial, dialTimeout);
      try {
        return await this.#exchange(
          c,
          dial,
          method,
          headBytes,
          body,
          chunked,
          headerTimeout,
          onDone,
        );
      } catch (e) {
        c.close();
        if (idle && e instanceof StaleConnection && body === null) continue;
        if (e instanceof StaleConnection) {
          onDone();
          throw new Error(`upstream ${dial} closed the connection`);
        }
        onDone();
        throw e;
      }
    }
  }

  async #exchange(
    c: Conn,
    dial: string,
    method: string,
    headBytes: Uint8Array,
    body: ReadableStream<Uint8Array> | null,
    chunked: boolean,
    headerTimeout: number,
    onDone: () => void,
  ): Promise<H1Response> {
    try {
      await writeAll(c.conn, headBytes);
    } catch {
      throw new StaleConnection();
    }
    let bodyDone = Promise.resolve();
    let bodyFailed: unknown = null;
    if (body) {
      bodyDone = (async () => {
        const reader = body.getReader();
        try {
          while (true) {
            const { done, value } = await reader.read();
            if (done) break;
            if (!value.length) continue;
            if (chunked) {
              await writeAll(c.conn, enc.encode(`${value.length.toString(16)}\r\n`));
              await writeAll(c.conn, value);
              await writeAll(c.conn, enc.encode("\r\n"));
            } else await writeAll(c.conn, value);
          }
          if (chunked) await writeAll(c.conn, enc.encode("0\r\n\r\n"));
        } catch (e) {
          bodyFailed = e;
          c.close();
        }
      })();
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const readHead = async () => {
      while (true) {
        let end = indexOfHeadEnd(c.buf);
        while (end < 0) {
          if (c.buf.length > MAX_HEAD) throw new Error(`upstream ${dial}: response head too large`);
          let more: boolean;
          try {
            more = await c.fill();
          } catch (e) {
            if (bodyFailed) throw bodyFailed;
            throw c.buf.length ? e : new StaleConnection();
          }
          if (!more) {
            if (bodyFailed) throw bodyFailed;
            throw c.buf.length
              ? new Error(`upstream ${dial}: truncated response`)
              : new StaleConnection();
          }
          end = indexOfHeadEnd(c.buf);
        }
        const text = latin1(c.take(end + 4).subarray(0, end));
        const lines = text.split("\r\n");
        const status = Number(lines[0].split(" ")[1]);
        if (!(status >= 100 && status <= 999)) throw new Error(`upstream ${dial}: bad status line`);
        if (status >= 100 && status < 200 && status !== 101) continue; // 100 Continue etc.
        const h: [string, string][] = [];
        let close = lines[0].startsWith("HTTP/1.0");
        let te: string | null = null;
        let cl: string | null = null;
        for (let i = 1; i < lines.length; i++) {
          const line = lines[i];
          const colon = line.indexOf(":");
          if (colon <= 0) continue;
          const name = line.slice(0, colon).trim().toLowerCase();
          const value = line.slice(colon + 1).trim();
          h.push([name, value]);
          if (name === "connection") close ||= /\bclose\b/i.test(value);
          else if (name === "transfer-encoding") te = te === null ? value : `${te}, ${value}`;
          else if (name === "content-length") cl = value;
        }
        return { status, headers: h, close, te, cl };
      }
    };
    const res = headerTimeout > 0
      ? await Promise.race([
        readHead(),
        new Promise<never>((_, rej) => {
          timer = setTimeout(
            () => rej(new UpstreamTimeout(`upstream ${dial}: no response headers in time`)),
            headerTimeout,
          );
        }),
      ]).finally(() => clearTimeout(timer))
      : await readHead();

    const noBody = method === "HEAD" || res.status === 204 || res.status === 304;
    const { te, cl } = res;
    let finished = false;
    const finish = (reusable: boolean) => {
      if (finished) return;
      finished = true;
      bodyDone.then(() => {
        if (reusable && !res.close && !bodyFailed) this.#release(dial, c);
        else c.close();
      });
      onDone();
    };
    if (res.status === 101) {
      // The upstream switched protocols: the connection is no longer HTTP and never reused;
      // it is the caller's to relay or close.
      finished = true;
      onDone();
      return { status: res.status, headers: res.headers, body: null, tunnel: connTunnel(c) };
    }
    if (noBody || (cl !== null && Number(cl) === 0 && !te)) {
      finish(true);
      return { status: res.status, headers: res.headers, body: null };
    }
    if (!te && cl !== null && Number(cl) <= SMALL_BODY) {
      // Small bodies of known length are read whole: a byte array answers faster than a stream.
      const want = Number(cl);
      try {
        while (c.buf.length < want) {
          if (!(await c.fill())) throw new Error(`upstream ${dial}: truncated body`);
        }
      } catch (e) {
        finish(false);
        throw e;
      }
      const bytes = c.take(want);
      finish(true);
      return { status: res.status, headers: res.headers, body: bytes };
    }
    let stream: ReadableStream<Uint8Array>;
    if (te && /chunked/i.test(te)) {
      let left = 0;
      let trailers = false;
      stream = new ReadableStream<Uint8Array>({
        async pull(ctl) {
          try {
            while (true) {
              if (trailers) {
                // Skip trailers up to the empty line.
                let e = indexOfCRLF(c.buf);
                while (e < 0) {
                  if (!(await c.fill())) throw new Error("truncated chunked body");
                  e = indexOfCRLF(c.buf);
                }
                const line = c.take(e + 2);
                if (line.length === 2) {
                  ctl.close();
                  finish(true);
                  return;
                }
                continue;
              }
              if (left > 0) {
                if (!c.buf.length && !(await c.fill())) throw new Error("truncated chunked body");
                const n = Math.min(left, c.buf.length);
                const part = c.take(n);
                left -= n;
                if (left === 0) {
                  while (c.buf.length < 2) {
                    if (!(await c.fill())) throw new Error("truncated chunked body");
                  }
                  c.take(2);
                }
                ctl.enqueue(part);
                return;
              }
              let e = indexOfCRLF(c.buf);
              while (e < 0) {
                if (!(await c.fill())) throw new Error("truncated chunked body");
                e = indexOfCRLF(c.buf);
              }
              const size = parseInt(latin1(c.take(e + 2).subarray(0, e)).split(";")[0], 16);
              if (Number.isNaN(size)) throw new Error("bad chunk size");
              if (size === 0) trailers = true;
              else left = size;
            }
          } catch (err) {
            finish(false);
            ctl.error(err);
          }
        },
        cancel() {
          finish(false);
        },
      });
    } else if (cl !== null) {
      let left = Number(cl);
      stream = new ReadableStream<Uint8Array>({
        async pull(ctl) {
          try {
            if (!c.buf.length && !(await c.fill())) throw new Error("truncated body");
            const n = Math.min(left, c.buf.length);
            const part = c.take(n);
            left -= n;
            ctl.enqueue(part);
            if (left === 0) {
              ctl.close();
              finish(true);
            }
          } catch (err) {
            finish(false);
            ctl.error(err);
          }
        },
        cancel() {
          finish(false);
        },
      });
    } else {
      stream = new ReadableStream<Uint8Array>({
        async pull(ctl) {
          try {
            if (!c.buf.length && !(await c.fill())) {
              ctl.close();
              finish(false);
              return;
            }
            ctl.enqueue(c.take(c.buf.length));
          } catch (err) {
            finish(false);
            ctl.error(err);
          }
        },
        cancel() {
          finish(false);
        },
      });
    }
    return { status: res.status, headers: res.headers, body: stream };
  }
}

/** The upstream closed a connection before answering (reused keep-alive connection). */
class StaleConnection extends Error {}
