/**
 * An HTTP/3 client connection over `Deno.connectQuic`: what the reverse proxy speaks to an
 * HTTP/3 upstream, and what the tests and the HTTP/3 benchmark speak to this server's HTTP/3
 * listener (Debian's h2load has no HTTP/3).
 *
 * It opens its control stream with SETTINGS (no dynamic table: its decoder takes the static
 * table only, so the server's encoder must not use one; its own encoder is the static-only
 * one), reads the server's control stream (SETTINGS, GOAWAY), and sends each request on a
 * new bidirectional stream: HEADERS, the body as DATA frames, the stream's end; the answer's
 * interim (1xx) header sections are skipped, its DATA comes as a `ReadableStream`, its trailers
 * are decoded and dropped.
 *
 * @module
 */
import { H3, H3Error } from "./errors.ts";
import {
  encodeSettings,
  FRAME,
  frameHeaderSize,
  isHttp2OnlyFrame,
  MAX_CONTROL_FRAME,
  parseIdPayload,
  parseSettings,
  SETTING,
  type Settings,
  STREAM_TYPE,
  writeFrameHeader,
} from "./frames.ts";
import { BLOCKED, QpackDecoder } from "./qpack/decoder.ts";
import { encodeFieldSection } from "./qpack/encoder.ts";
import { StreamReader } from "./stream_reader.ts";

/** Where to connect. */
export interface H3ClientOptions {
  hostname: string;
  port: number;
  /** The TLS server name (default: `hostname`). */
  serverName?: string;
  /** Extra trusted roots (PEM). */
  caCerts?: string[];
  /** An endpoint to connect from (one is made otherwise). */
  endpoint?: Deno.QuicEndpoint;
  /** Largest response header section accepted (default 1 MiB). */
  maxHeaderBytes?: number;
  /** QUIC idle timeout (ms). */
  maxIdleTimeout?: number;
}

/** A request to send. */
export interface H3Request {
  method: string;
  /** `:authority` (host and port). */
  authority: string;
  /** `:path` (origin form). */
  path: string;
  scheme?: string;
  /** Fields, names in lower case. */
  headers?: [string, string][];
  body?: Uint8Array | ReadableStream<Uint8Array> | null;
  /** Settles to give the exchange up: the stream is no longer read or written. */
  abort?: Promise<unknown>;
}

/** An answer. */
export interface H3Response {
  status: number;
  /** Fields in order, names in lower case. */
  headers: [string, string][];
  /** The DATA; errors when the stream ends inside a frame or the connection goes. */
  body: ReadableStream<Uint8Array>;
}

/**
 * A client connection.
 *
 * @example
 * ```ts ignore
 * const c = await H3ClientConnection.connect({ hostname: "127.0.0.1", port: 8443, serverName: "localhost", caCerts: [ca] });
 * const res = await c.request({ method: "GET", authority: "localhost:8443", path: "/" });
 * console.log(res.status, await new Response(res.body).text());
 * c.close();
 * ```
 */
export class H3ClientConnection {
  readonly conn: Deno.QuicConn;
  readonly #decoder: QpackDecoder;
  readonly #maxHeaderBytes: number;
  #settings: Promise<Settings>;
  #goaway = -1;
  #closed = false;
  /** The control stream's writer, held for the connection's life (dropping it ends the stream). */
  #control: WritableStreamDefaultWriter<Uint8Array> | null = null;

  private constructor(conn: Deno.QuicConn, maxHeaderBytes: number) {
    this.conn = conn;
    this.#maxHeaderBytes = maxHeaderBytes;
    this.#decoder = new QpackDecoder({
      maxTableCapacity: 0,
      maxBlockedStreams: 0,
      maxFieldSectionSize: maxHeaderBytes + 320,
    });
    let settle!: (s: Settings) => void;
    let fail!: (e: unknown) => void;
    this.#settings = new Promise((resolve, reject) => ((settle = resolve), (fail = reject)));
    this.#settings.catch(() => {});
    void this.#acceptUni(settle, fail);
    conn.closed.then(() => {}, () => {}).finally(() => {
      this.#closed = true;
      fail(new Error("the connection closed"));
    });
  }

  /** Connects and opens the control stream. */
  static async connect(o: H3ClientOptions): Promise<H3ClientConnection> {
    const conn = await Deno.connectQuic({
      hostname: o.hostname,
      port: o.port,
      serverName: o.serverName,
      caCerts: o.caCerts,
      endpoint: o.endpoint,
      alpnProtocols: ["h3"],
      maxIdleTimeout: o.maxIdleTimeout,
    });
    const c = new H3ClientConnection(conn, o.maxHeaderBytes ?? 1 << 20);
    const control = await conn.createUnidirectionalStream();
    const settings = encodeSettings([[SETTING.MAX_FIELD_SECTION_SIZE, c.#maxHeaderBytes]]);
    const out = new Uint8Array(1 + settings.length);
    out[0] = STREAM_TYPE.CONTROL;
    out.set(settings, 1);
    c.#control = control.getWriter();
    await c.#control.write(out);
    return c;
  }

  /** The server's SETTINGS, once received. */
  get settings(): Promise<Settings> {
    return this.#settings;
  }

  /** The stream id of the server's last GOAWAY, -1 before one. */
  get goaway(): number {
    return this.#goaway;
  }

  /** True once the connection closed. */
  get closed(): boolean {
    return this.#closed;
  }

  async #acceptUni(settle: (s: Settings) => void, fail: (e: unknown) => void): Promise<void> {
    try {
      for await (const s of this.conn.incomingUnidirectionalStreams) {
        const r = new StreamReader(s);
        r.varint("stream type").then(async (type) => {
          if (type !== STREAM_TYPE.CONTROL) {
            // the server's QPACK streams: its encoder never inserts here (capacity 0)
            for await (const _ of r.rest()) { /* nothing to do */ }
            return;
          }
          if (!(await r.frameHeader()) || r.type !== FRAME.SETTINGS) {
            throw new H3Error(H3.MISSING_SETTINGS, "no SETTINGS first on the control stream");
          }
          settle(parseSettings(await r.payload(MAX_CONTROL_FRAME)));
          while (await r.frameHeader()) {
            const frame: number = r.type;
            if (frame === FRAME.GOAWAY) {
              this.#goaway = parseIdPayload(await r.payload(MAX_CONTROL_FRAME), "GOAWAY");
            } else await r.skip();
          }
        }).catch((e) => {
          fail(e);
          if (e instanceof H3Error) this.close(e.code, e.message);
        });
      }
    } catch { /* closed */ }
  }

  /** Sends a request and resolves with the answer's head. */
  async request(req: H3Request): Promise<H3Response> {
    const bi = await this.conn.createBidirectionalStream({ waitUntilAvailable: true });
    const w = bi.writable.getWriter();
    const fields = [
      ":method",
      req.method,
      ":scheme",
      req.scheme ?? "https",
      ":authority",
      req.authority,
      ":path",
      req.path,
    ];
    for (const [k, v] of req.headers ?? []) fields.push(k, v);
    const section = encodeFieldSection(fields, 9);
    const n = section.length - 9;
    const start = 9 - frameHeaderSize(FRAME.HEADERS, n);
    writeFrameHeader(section, start, FRAME.HEADERS, n);
    const head = section.subarray(start);
    const body = req.body ?? null;
    const sending = (async () => {
      if (body === null) {
        await w.write(head);
      } else if (body instanceof Uint8Array) {
        const out = new Uint8Array(
          head.length + frameHeaderSize(FRAME.DATA, body.length) + body.length,
        );
        out.set(head);
        out.set(body, writeFrameHeader(out, head.length, FRAME.DATA, body.length));
        await w.write(out);
      } else {
        await w.write(head);
        for await (const piece of body) {
          const frame = new Uint8Array(frameHeaderSize(FRAME.DATA, piece.length) + piece.length);
          frame.set(piece, writeFrameHeader(frame, 0, FRAME.DATA, piece.length));
          await w.write(frame);
        }
      }
      await w.close();
    })();
    sending.catch(() => {});
    const r = new StreamReader(bi.readable);
    req.abort?.then(() => {
      r.cancel();
      w.close().catch(() => {});
    }, () => {});
    const streamId = Number(bi.readable.id);
    for (;;) {
      if (!(await r.frameHeader())) throw new Error("HTTP/3: the stream ended before an answer");
      if (r.type === FRAME.DATA) throw new H3Error(H3.FRAME_UNEXPECTED, "DATA before HEADERS");
      if (r.type !== FRAME.HEADERS) {
        if (isHttp2OnlyFrame(r.type) || r.type === FRAME.SETTINGS || r.type === FRAME.GOAWAY) {
          throw new H3Error(
            H3.FRAME_UNEXPECTED,
            `frame 0x${r.type.toString(16)} on a request stream`,
          );
        }
        await r.skip();
        continue;
      }
      const flat = this.#decode(await r.payload(this.#maxHeaderBytes), streamId);
      if (flat[0] !== ":status") throw new H3Error(H3.MESSAGE_ERROR, "an answer without :status");
      const status = Number(flat[1]);
      if (!(status >= 100 && status <= 999)) throw new H3Error(H3.MESSAGE_ERROR, "bad :status");
      if (status < 200) continue; // interim
      const headers: [string, string][] = [];
      for (let i = 2; i < flat.length; i += 2) {
        if (flat[i].charCodeAt(0) === 58) {
          throw new H3Error(H3.MESSAGE_ERROR, "pseudo-header field");
        }
        headers.push([flat[i], flat[i + 1]]);
      }
      return { status, headers, body: this.#body(r, streamId) };
    }
  }

  #decode(payload: Uint8Array, streamId: number): string[] {
    const flat = this.#decoder.decode(payload, streamId);
    if (flat === BLOCKED) throw new H3Error(H3.QPACK_DECOMPRESSION_FAILED, "dynamic table used");
    return flat;
  }

  #body(r: StreamReader, streamId: number): ReadableStream<Uint8Array> {
    let left = 0;
    let trailers = false;
    return new ReadableStream<Uint8Array>({
      pull: async (ctl) => {
        for (;;) {
          if (left > 0) {
            const piece = await r.piece(left);
            left -= piece.length;
            ctl.enqueue(piece);
            return;
          }
          if (!(await r.frameHeader())) {
            ctl.close();
            return;
          }
          if (r.type === FRAME.DATA) {
            if (trailers) throw new H3Error(H3.FRAME_UNEXPECTED, "DATA after trailers");
            left = r.length;
          } else if (r.type === FRAME.HEADERS) {
            if (trailers) throw new H3Error(H3.FRAME_UNEXPECTED, "HEADERS after trailers");
            trailers = true;
            this.#decode(await r.payload(this.#maxHeaderBytes), streamId);
          } else await r.skip();
        }
      },
      cancel: () => r.cancel(),
    }, { highWaterMark: 0 });
  }

  /** Closes the connection (H3_NO_ERROR unless told otherwise). */
  close(code: number = H3.NO_ERROR, reason = ""): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.conn.close({ closeCode: code, reason });
    } catch { /* closed */ }
  }
}
