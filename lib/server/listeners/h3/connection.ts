/**
 * One HTTP/3 connection, server side (RFC 9114 §3.2 to §6): the control stream this side opens
 * with its SETTINGS, the peer's control stream (SETTINGS first, then GOAWAY, MAX_PUSH_ID,
 * CANCEL_PUSH; reserved frames skipped), the peer's QPACK encoder and decoder streams, and a
 * request on every bidirectional stream the peer opens, handed to the listener's handler.
 *
 * What it tells the peer in SETTINGS: a QPACK dynamic table of `QPACK_MAX_TABLE_CAPACITY`
 * bytes, `QPACK_BLOCKED_STREAMS` streams that may wait for inserts, and
 * SETTINGS_MAX_FIELD_SECTION_SIZE (`max_header_bytes`). This side's own encoder uses the
 * static table only, so it opens no encoder stream; its decoder stream is opened the first
 * time it owes the peer an instruction.
 *
 * Server push is never used: a client's push stream is H3_STREAM_CREATION_ERROR, its
 * MAX_PUSH_ID is only checked (it must not shrink), and CANCEL_PUSH for a push id it never
 * allowed is H3_ID_ERROR. A second control, encoder or decoder stream is
 * H3_STREAM_CREATION_ERROR; the end of one is H3_CLOSED_CRITICAL_STREAM. A stream type this
 * side does not know is not read (RFC 9114 §6.2).
 *
 * Graceful close (`goaway`): GOAWAY with the first request stream this side will not serve,
 * the requests before it finish, then the connection closes with H3_NO_ERROR once the peer
 * closed it or after `DRAIN_MS` (Deno cannot tell when the peer acknowledged the last bytes of
 * a stream, and closing a QUIC connection drops what is still unacknowledged). Request
 * streams the peer opens after the GOAWAY are not read and get no answer (it must retry them
 * on a new connection).
 *
 * @module
 */
import type { ConnHandler, ServeInfo } from "../../module/listener.ts";
import { headAnswer } from "../head.ts";
import { H3, H3Error, h3ErrorName } from "./errors.ts";
import {
  encodeIdFrame,
  encodeSettings,
  FRAME,
  isHttp2OnlyFrame,
  MAX_CONTROL_FRAME,
  parseIdPayload,
  parseSettings,
  SETTING,
  STREAM_TYPE,
} from "./frames.ts";
import { QpackDecoder } from "./qpack/decoder.ts";
import { readInt } from "./qpack/primitives.ts";
import { readRequest, type RequestBody, type RequestContext } from "./request.ts";
import { sendResponse } from "./response.ts";
import { StreamReader } from "./stream_reader.ts";
import { Cursor } from "./varint.ts";

/** The dynamic table this side's decoder allows the peer (bytes). */
export const QPACK_MAX_TABLE_CAPACITY = 4096;
/** Field sections that may wait for inserts at once. */
export const QPACK_BLOCKED_STREAMS = 16;
/** How long a connection that sent GOAWAY and finished its requests waits for the peer to close. */
export const DRAIN_MS = 1000;
/** Decoded header sections may exceed `max_header_bytes` by this much (the 32 bytes per line). */
const FIELD_SECTION_SLACK = 320;

/** What a connection is given. */
export interface H3ConnectionOptions {
  /** Answers one request. */
  handler: ConnHandler;
  /** The listener's address (`ServeInfo.localAddress`, and the host of requests without one). */
  localAddress: string;
  /** `max_header_bytes`. */
  maxHeaderBytes: number;
  /** Logs protocol errors (debug level). */
  log?(msg: string, fields?: Record<string, unknown>): void;
}

/**
 * Serves one accepted QUIC connection until it closes.
 *
 * @example
 * ```ts ignore
 * const c = new H3Connection(conn, { handler, localAddress: "127.0.0.1:8443", maxHeaderBytes: 1 << 20 });
 * await c.closed;
 * ```
 */
export class H3Connection {
  readonly #conn: Deno.QuicConn;
  readonly #o: H3ConnectionOptions;
  readonly #decoder: QpackDecoder;
  #control: WritableStreamDefaultWriter<Uint8Array> | null = null;
  #controlOpen: Promise<void>;
  #decoderStream: Promise<WritableStreamDefaultWriter<Uint8Array>> | null = null;
  #decoderWrite: Promise<unknown> = Promise.resolve();
  #flushQueued = false;
  #peer = { control: false, encoder: false, decoder: false };
  #maxPushId = -1;
  #peerGoaway = -1;
  /** Highest request stream id taken, -1 before any. */
  #lastStream = -1;
  /** The id of the next request stream the peer opens. */
  #nextStream = 0;
  #inflight = 0;
  #idle: (() => void) | null = null;
  /** The first request stream id not served, once GOAWAY was sent. */
  #goaway = -1;
  #closedBySide = false;
  #remote: Deno.NetAddr;
  #serverName: string | undefined;
  /** Resolves when the connection closed, whoever closed it. */
  readonly closed: Promise<void>;

  constructor(conn: Deno.QuicConn, o: H3ConnectionOptions) {
    this.#conn = conn;
    this.#o = o;
    this.#remote = conn.remoteAddr;
    this.#serverName = conn.serverName;
    this.#decoder = new QpackDecoder({
      maxTableCapacity: QPACK_MAX_TABLE_CAPACITY,
      maxBlockedStreams: QPACK_BLOCKED_STREAMS,
      maxFieldSectionSize: o.maxHeaderBytes + FIELD_SECTION_SLACK,
    });
    this.closed = conn.closed.then(() => {}, () => {}).finally(() => {
      this.#closedBySide = true;
      this.#decoder.close(new Error("the connection closed"));
    });
    this.#controlOpen = this.#openControl().catch((e) => this.#fail(e));
    void this.#acceptUni();
    void this.#acceptRequests();
  }

  /** Requests being served now. */
  get inflight(): number {
    return this.#inflight;
  }

  async #openControl(): Promise<void> {
    const s = await this.#conn.createUnidirectionalStream();
    this.#control = s.getWriter();
    const settings = encodeSettings([
      [SETTING.QPACK_MAX_TABLE_CAPACITY, QPACK_MAX_TABLE_CAPACITY],
      [SETTING.QPACK_BLOCKED_STREAMS, QPACK_BLOCKED_STREAMS],
      [SETTING.MAX_FIELD_SECTION_SIZE, this.#o.maxHeaderBytes],
    ]);
    const out = new Uint8Array(1 + settings.length);
    out[0] = STREAM_TYPE.CONTROL;
    out.set(settings, 1);
    await this.#control.write(out);
  }

  /** Closes the connection for a connection error (`e`: H3Error, or anything for internal). */
  #fail(e: unknown): void {
    if (this.#closedBySide) return;
    const code = e instanceof H3Error ? e.code : H3.INTERNAL_ERROR;
    const reason = e instanceof Error ? e.message : String(e);
    this.#o.log?.("HTTP/3 connection error", {
      error: h3ErrorName(code),
      reason,
      remote: `${this.#remote.hostname}:${this.#remote.port}`,
    });
    this.close(code, reason);
  }

  /** Closes the connection at once with `code`. */
  close(code: number = H3.NO_ERROR, reason = ""): void {
    if (this.#closedBySide) return;
    this.#closedBySide = true;
    this.#decoder.close(new Error("the connection closed"));
    try {
      this.#conn.close({ closeCode: code, reason: reason.slice(0, 100) });
    } catch { /* closed already */ }
  }

  /**
   * Graceful close: GOAWAY, the requests already taken finish, then the connection closes.
   * Resolves once it is closed.
   */
  async goaway(): Promise<void> {
    if (this.#closedBySide) return await this.closed;
    if (this.#goaway < 0) {
      this.#goaway = this.#lastStream + 4;
      await this.#controlOpen;
      try {
        await this.#control?.write(encodeIdFrame(FRAME.GOAWAY, this.#goaway));
      } catch { /* the connection went */ }
    }
    if (this.#inflight > 0) await new Promise<void>((r) => (this.#idle = r));
    if (this.#closedBySide) return await this.closed;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([this.closed, new Promise((r) => (timer = setTimeout(r, DRAIN_MS)))]);
    clearTimeout(timer);
    this.close(H3.NO_ERROR);
    await this.closed;
  }

  async #acceptUni(): Promise<void> {
    try {
      for await (const s of this.#conn.incomingUnidirectionalStreams) {
        this.#uni(s).catch((e) => {
          if (e instanceof H3Error) this.#fail(e);
        });
      }
    } catch { /* the connection closed */ }
  }

  async #uni(s: Deno.QuicReceiveStream): Promise<void> {
    const r = new StreamReader(s);
    let type: number;
    try {
      type = await r.varint("stream type");
    } catch (e) {
      if (e instanceof H3Error) throw e;
      return;
    }
    if (type < 0) return;
    const once = (k: "control" | "encoder" | "decoder") => {
      if (this.#peer[k]) {
        throw new H3Error(H3.STREAM_CREATION_ERROR, `a second ${k} stream`);
      }
      this.#peer[k] = true;
    };
    try {
      if (type === STREAM_TYPE.CONTROL) {
        once("control");
        await this.#readControl(r);
      } else if (type === STREAM_TYPE.QPACK_ENCODER) {
        once("encoder");
        for await (const chunk of r.rest()) {
          this.#decoder.feedEncoderStream(chunk);
          this.#flushDecoder();
        }
      } else if (type === STREAM_TYPE.QPACK_DECODER) {
        once("decoder");
        await this.#readPeerDecoder(r);
      } else if (type === STREAM_TYPE.PUSH) {
        throw new H3Error(H3.STREAM_CREATION_ERROR, "a client opened a push stream");
      } else {
        r.cancel();
        return;
      }
    } catch (e) {
      if (e instanceof H3Error) throw e;
      return; // the connection closed under the read
    }
    // a critical stream ended while the connection is open
    if (!this.#closedBySide) {
      throw new H3Error(H3.CLOSED_CRITICAL_STREAM, "the peer closed a control or QPACK stream");
    }
  }

  async #readControl(r: StreamReader): Promise<void> {
    let first = true;
    while (await r.frameHeader()) {
      const type = r.type;
      if (first && type !== FRAME.SETTINGS) {
        throw new H3Error(H3.MISSING_SETTINGS, "the control stream does not start with SETTINGS");
      }
      if (type === FRAME.SETTINGS) {
        if (!first) throw new H3Error(H3.FRAME_UNEXPECTED, "a second SETTINGS frame");
        first = false;
        parseSettings(await r.payload(MAX_CONTROL_FRAME));
      } else if (type === FRAME.GOAWAY) {
        const id = parseIdPayload(await r.payload(MAX_CONTROL_FRAME), "GOAWAY");
        if (this.#peerGoaway >= 0 && id > this.#peerGoaway) {
          throw new H3Error(H3.ID_ERROR, "GOAWAY with a larger id than before");
        }
        this.#peerGoaway = id;
      } else if (type === FRAME.MAX_PUSH_ID) {
        const id = parseIdPayload(await r.payload(MAX_CONTROL_FRAME), "MAX_PUSH_ID");
        if (id < this.#maxPushId) throw new H3Error(H3.ID_ERROR, "MAX_PUSH_ID went down");
        this.#maxPushId = id;
      } else if (type === FRAME.CANCEL_PUSH) {
        const id = parseIdPayload(await r.payload(MAX_CONTROL_FRAME), "CANCEL_PUSH");
        if (id > this.#maxPushId) {
          throw new H3Error(H3.ID_ERROR, "CANCEL_PUSH of a push id never allowed");
        }
      } else if (
        type === FRAME.DATA || type === FRAME.HEADERS || type === FRAME.PUSH_PROMISE ||
        isHttp2OnlyFrame(type)
      ) {
        throw new H3Error(
          H3.FRAME_UNEXPECTED,
          `frame 0x${type.toString(16)} on the control stream`,
        );
      } else await r.skip();
    }
  }

  /** The peer's decoder stream: this side never inserts, so only Stream Cancellation is valid. */
  async #readPeerDecoder(r: StreamReader): Promise<void> {
    let pending = new Uint8Array(0);
    for await (const chunk of r.rest()) {
      let buf = chunk;
      if (pending.length) {
        buf = new Uint8Array(pending.length + chunk.length);
        buf.set(pending);
        buf.set(chunk, pending.length);
      }
      const c = new Cursor(buf);
      while (c.pos < c.end) {
        const b = buf[c.pos];
        if (b & 0x80) {
          throw new H3Error(
            H3.QPACK_DECODER_STREAM_ERROR,
            "Section Acknowledgment of a section that used no dynamic table",
          );
        }
        if ((b & 0x40) === 0) {
          throw new H3Error(
            H3.QPACK_DECODER_STREAM_ERROR,
            "Insert Count Increment beyond the inserts sent (none)",
          );
        }
        if (readInt(c, 6, H3.QPACK_DECODER_STREAM_ERROR) < 0) break; // Stream Cancellation
      }
      pending = buf.slice(c.pos);
      if (pending.length > 16) {
        throw new H3Error(H3.QPACK_DECODER_STREAM_ERROR, "instruction too long");
      }
    }
  }

  /** Sends what the decoder owes the peer, once per turn of the event loop. */
  #flushDecoder(): void {
    if (this.#flushQueued) return;
    this.#flushQueued = true;
    queueMicrotask(() => {
      this.#flushQueued = false;
      const bytes = this.#decoder.takeInstructions();
      if (bytes === null || this.#closedBySide) return;
      this.#decoderStream ??= this.#conn.createUnidirectionalStream().then(async (s) => {
        const w = s.getWriter();
        await w.write(Uint8Array.of(STREAM_TYPE.QPACK_DECODER));
        return w;
      });
      const stream = this.#decoderStream;
      stream.catch(() => {}); // the connection went: nothing more to send
      this.#decoderWrite = this.#decoderWrite.then(async () => (await stream).write(bytes))
        .catch(() => {});
    });
  }

  async #acceptRequests(): Promise<void> {
    try {
      for await (const bi of this.#conn.incomingBidirectionalStreams) {
        // QUIC hands the peer's streams over in the order of their ids (0, 4, 8, ...), so the
        // id is counted rather than asked for
        const id = this.#nextStream;
        this.#nextStream += 4;
        if (this.#goaway >= 0 && id >= this.#goaway) {
          // after GOAWAY: not served (the peer retries it elsewhere)
          bi.readable.cancel().catch(() => {});
          bi.writable.close().catch(() => {});
          continue;
        }
        if (id > this.#lastStream) this.#lastStream = id;
        this.#inflight++;
        this.#request(bi, id).catch((e) => this.#fail(e)).finally(() => {
          if (--this.#inflight === 0 && this.#idle) {
            const idle = this.#idle;
            this.#idle = null;
            idle();
          }
        });
      }
    } catch { /* the connection closed */ }
  }

  /**
   * What handlers learn about this connection: one object for all its requests (nothing the
   * routes do changes it: the TLS facts are all set, the server name "" when the client sent
   * none).
   */
  #info(): ServeInfo {
    return this.#served ??= {
      remoteAddr: { transport: "udp", hostname: this.#remote.hostname, port: this.#remote.port },
      localAddress: this.#o.localAddress,
      tls: { serverName: this.#serverName ?? "", version: 0x0304, proto: "h3" },
      http3: true,
    };
  }
  #served: ServeInfo | undefined;

  async #request(bi: Deno.QuicBidirectionalStream, streamId: number): Promise<void> {
    const r = new StreamReader(bi.readable);
    const w = bi.writable.getWriter();
    const context: RequestContext = {
      decoder: this.#decoder,
      streamId,
      maxHeaderBytes: this.#o.maxHeaderBytes,
      fallbackHost: this.#o.localAddress,
      flush: () => this.#flushDecoder(),
      fatal: (e) => this.#fail(e),
    };
    const head = await readRequest(r, context);
    if (head.kind === "gone") {
      w.close().catch(() => {});
      return;
    }
    let body: RequestBody | null;
    let response: Response;
    let method = "GET";
    if (head.kind === "answer") {
      body = head.body;
      response = new Response(`${head.status} ${STATUS_TEXT[head.status]}: ${head.reason}\n`, {
        status: head.status,
        headers: { "content-type": "text/plain; charset=utf-8" },
      });
    } else {
      body = head.body;
      method = head.request.method;
      try {
        response = await this.#o.handler(head.request, this.#info());
      } catch {
        response = new Response("500 Internal Server Error", { status: 500 });
      }
      if (method === "HEAD") response = await headAnswer(response);
    }
    const sent = await sendResponse(w, response, method === "HEAD");
    if (sent === "failed") {
      throw new H3Error(H3.INTERNAL_ERROR, "a response body failed after its head was sent");
    }
    // The rest of the stream is not read: a body nobody read to its end, or what follows the
    // head of a GET or HEAD (which has no body: no read is spent waiting for the stream's
    // end). Stopping it costs nothing once the peer ended the stream; else the peer is asked
    // to stop sending (STOP_SENDING, RFC 9114 §4.1).
    if (body === null || !body.done) r.cancel();
  }
}

const STATUS_TEXT: Record<number, string> = {
  400: "Bad Request",
  431: "Request Header Fields Too Large",
  501: "Not Implemented",
};
