/**
 * Keeps a client's GOAWAY frames away from `node:http2` on Deno.
 *
 * Deno's `node:http2` (nghttp2 inside the runtime) can abort the whole process while it handles
 * a GOAWAY frame: `nghttp2_session.c: find_stream_on_goaway_func: Assertion
 * 'stream->closed_next == NULL' failed` (denoland/deno#36788, open for Deno 2.9.6). An ordinary
 * client triggers it: Node's own HTTP/2 client sends GOAWAY when it closes a session after a
 * large response, and about one such close in five brought a server down in our runs. The
 * server cannot catch it (it happens before JavaScript runs), so the node listener engine reads
 * the client's frames itself first: every frame goes on unchanged except GOAWAY, which is
 * dropped and reported, and the listener does what it asks of a server: it pushes no more
 * streams on that session (the open ones finish; the client closes the connection, or the idle
 * timeout does). With the filter in
 * place the same runs gave no abort (our own GOAWAY, sent on idle timeout and shutdown, goes
 * through nghttp2's send path, which did not abort).
 *
 * The filter only splits frames by their 9-byte header (RFC 9113 4.1): it keeps at most 8 bytes
 * of a header split across reads and never buffers a payload, so it adds no limit of its own;
 * nghttp2 still checks every frame it is given (sizes, types, the preface).
 *
 * @module
 */
import type { Duplex } from "node:stream";
import { relayDuplex, type StreamModule } from "./front.ts";

/** The client connection preface's length (RFC 9113 3.4): passed on unread. */
const PREFACE_LENGTH = 24;
/** Frame type GOAWAY (RFC 9113 6.8). */
const GOAWAY = 0x7;

/**
 * The frame splitter: fed the client's bytes in any pieces, it returns what goes on to the
 * session (the same bytes less every GOAWAY frame) and counts the GOAWAY frames it dropped.
 *
 * @example
 * ```ts
 * const frames = new ClientFrames();
 * const out = frames.feed(new TextEncoder().encode("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"));
 * console.log(out.length, frames.goaways); // 1 0
 * ```
 */
export class ClientFrames {
  #preface = PREFACE_LENGTH;
  /** Payload bytes of a passed frame still to pass. */
  #pass = 0;
  /** Payload bytes of a dropped GOAWAY still to drop. */
  #skip = 0;
  #head = new Uint8Array(9);
  #headLength = 0;
  /** How many GOAWAY frames were dropped. */
  goaways = 0;

  /** The parts of `chunk` that go on to the session, in order (views of `chunk` or copies). */
  feed(chunk: Uint8Array): Uint8Array[] {
    const out: Uint8Array[] = [];
    let i = 0;
    let runStart = 0; // start of the run of bytes in `chunk` to pass as one view
    const flush = (end: number) => {
      if (end > runStart) out.push(chunk.subarray(runStart, end));
    };
    while (i < chunk.length) {
      if (this.#preface > 0) {
        const n = Math.min(this.#preface, chunk.length - i);
        this.#preface -= n;
        i += n;
        continue;
      }
      if (this.#pass > 0) {
        const n = Math.min(this.#pass, chunk.length - i);
        this.#pass -= n;
        i += n;
        continue;
      }
      if (this.#skip > 0) {
        const n = Math.min(this.#skip, chunk.length - i);
        this.#skip -= n;
        i += n;
        runStart = i;
        continue;
      }
      // a frame header: whole in this chunk, or gathered across chunks
      let head: Uint8Array;
      let whole = false;
      if (this.#headLength === 0 && chunk.length - i >= 9) {
        head = chunk.subarray(i, i + 9);
        whole = true;
        i += 9;
      } else {
        flush(i);
        const n = Math.min(9 - this.#headLength, chunk.length - i);
        this.#head.set(chunk.subarray(i, i + n), this.#headLength);
        this.#headLength += n;
        i += n;
        runStart = i;
        if (this.#headLength < 9) break;
        head = this.#head;
        this.#headLength = 0;
      }
      const length = (head[0] << 16) | (head[1] << 8) | head[2];
      if (head[3] === GOAWAY) {
        this.goaways++;
        if (whole) flush(i - 9);
        this.#skip = length;
        runStart = i;
      } else {
        if (!whole) out.push(head.slice());
        this.#pass = length;
      }
    }
    flush(i);
    return out;
  }
}

/**
 * The connection as the HTTP/2 session should read it: `socket`'s bytes less the client's GOAWAY
 * frames; writes go to `socket` unchanged. `onGoaway` runs at the first GOAWAY, after the bytes
 * before it were handed on.
 *
 * @example
 * ```ts ignore
 * const stream = withoutGoaway(await import("node:stream"), tlsSocket, () => (noMorePushes = true));
 * ```
 */
export function withoutGoaway(
  stream: StreamModule,
  socket: Duplex,
  onGoaway: () => void,
): Duplex {
  const frames = new ClientFrames();
  return relayDuplex(stream, socket, new Uint8Array(0), (chunk) => {
    const before = frames.goaways;
    const parts = frames.feed(chunk);
    if (before === 0 && frames.goaways > 0) queueMicrotask(onGoaway);
    return parts;
  });
}
