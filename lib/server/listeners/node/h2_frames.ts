/**
 * The node listener engine's HTTP/2 front: the client's bytes are split by frame header here
 * before `node:http2` (nghttp2 inside Deno) reads them, and the session's bytes pass here on
 * their way out. It does two things for every HTTP/2 connection of the engine:
 *
 * **GOAWAY is kept from nghttp2.** Deno's `node:http2` can abort the whole process while it
 * handles a GOAWAY frame: `nghttp2_session.c: find_stream_on_goaway_func: Assertion
 * 'stream->closed_next == NULL' failed` (denoland/deno#36788, open for Deno 2.9.6). An ordinary
 * client triggers it: Node's own HTTP/2 client sends GOAWAY when it closes a session after a
 * large response, and about one such close in five brought a server down in our runs. The
 * server cannot catch it (it happens before JavaScript runs), so every frame goes on unchanged
 * except GOAWAY, which is dropped and reported, and the listener does what it asks of a server:
 * it pushes no more streams on that session (the open ones finish; the client closes the
 * connection, or the idle timeout does). With the filter in place the same runs gave no abort
 * (our own GOAWAY, sent on idle timeout and shutdown, goes through nghttp2's send path, which
 * did not abort).
 *
 * **Floods are bounded per connection** (`FRAME_BUDGETS`), the way Go's `net/http2` and hyper
 * (the `deno` engine) bound them, before nghttp2 does any work for the frames:
 *
 * - *Rapid reset* (CVE-2023-44487): a stream the client opens and resets before the server's
 *   answer began (no HEADERS or RST_STREAM of the server on it yet) is an early reset. Early
 *   resets take tokens from a bucket of 100, refilled at 10 a second. hyper counts the same
 *   kind of stream (reset before the server accepted it, at most 20 at once); Go counts the
 *   handlers still running for reset streams. A stream reset after its answer began costs the
 *   server nothing more and is never counted, so clients that cancel downloads are unaffected.
 * - At most 1,000 client streams opened and not yet answered (Go's 4 x 250 queued handlers;
 *   nghttp2 refuses streams beyond 250 at once, and a refusal is an answer).
 * - *CONTINUATION flood* (CVE-2024-27316): at most 8 CONTINUATION frames after a HEADERS
 *   (nghttp2's own limit, applied here before nghttp2 sees the frames).
 * - *SETTINGS flood*: SETTINGS frames (each makes the server answer with an ACK) take tokens
 *   from a bucket of 100, refilled at 10 a second.
 *
 * A client over a budget gets GOAWAY(ENHANCE_YOUR_CALM) written here, with the highest stream
 * id the session was handed as its last stream id, after the session's last whole frame; the
 * read that went over (and all after it) never reaches the session, its further writes are
 * dropped, and the connection is closed 250 ms later (Go's delay after an error GOAWAY).
 *
 * The front only splits frames by their 9-byte header (RFC 9113 4.1): it keeps at most 8 bytes
 * of a header split across reads and never buffers a payload; nghttp2 still checks every frame
 * it is given (sizes, types, the preface). Per frame it costs a switch on the type, and a set
 * operation on HEADERS and RST_STREAM.
 *
 * @module
 */
import type { Duplex } from "node:stream";
import { relayDuplex, type StreamModule } from "./front.ts";

/** The client connection preface's length (RFC 9113 3.4): passed on unread. */
const PREFACE_LENGTH = 24;
/** Frame types (RFC 9113 6). */
const HEADERS = 0x1;
const RST_STREAM = 0x3;
const SETTINGS = 0x4;
const GOAWAY = 0x7;
const CONTINUATION = 0x9;
/** Flags. */
const ACK = 0x1;
const END_HEADERS = 0x4;
/** The GOAWAY error code for a peer over a budget (RFC 9113 7). */
export const ENHANCE_YOUR_CALM = 0xb;
/** After our GOAWAY, how long the connection stays before it is closed (ms; Go's 250 ms). */
export const CALM_CLOSE_MS = 250;

/** What one connection may do (see the module doc). */
export interface FrameBudgets {
  /** Early resets at once (the bucket's size). */
  earlyResets: number;
  /** Early resets a second once the bucket is empty (its refill). */
  earlyResetsPerSecond: number;
  /** Client streams opened and not answered yet. */
  unanswered: number;
  /** CONTINUATION frames after one HEADERS frame. */
  continuations: number;
  /** SETTINGS frames (not ACKs) at once. */
  settings: number;
  /** SETTINGS frames a second once that bucket is empty. */
  settingsPerSecond: number;
}

/** The budgets of every node-engine HTTP/2 connection. */
export const FRAME_BUDGETS: Readonly<FrameBudgets> = Object.freeze({
  earlyResets: 100,
  earlyResetsPerSecond: 10,
  unanswered: 1000,
  continuations: 8,
  settings: 100,
  settingsPerSecond: 10,
});

/** Which budget a client went over. */
export type OverBudget = "resets" | "streams" | "continuations" | "settings";

/** The GOAWAY debug data for each budget (RFC 9113 6.8: opaque, for diagnostics). */
const DEBUG: Record<OverBudget, string> = {
  resets: "too many streams reset before their answer",
  streams: "too many streams not answered yet",
  continuations: "too many CONTINUATION frames",
  settings: "too many SETTINGS frames",
};

/** A token bucket: `size` tokens at once, refilled at `perSecond`. */
class Bucket {
  #tokens: number;
  #at: number;
  constructor(
    readonly size: number,
    readonly perSecond: number,
    readonly now: () => number,
  ) {
    this.#tokens = size;
    this.#at = now();
  }

  /** Takes a token; false when none is left. */
  take(): boolean {
    const t = this.now();
    this.#tokens = Math.min(this.size, this.#tokens + ((t - this.#at) * this.perSecond) / 1000);
    this.#at = t;
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }
}

/** A frame's stream id (31 bits) from its header. */
function streamOf(h: Uint8Array): number {
  return ((h[5] & 0x7f) * 0x1000000) + ((h[6] << 16) | (h[7] << 8) | h[8]);
}

/**
 * The frame splitter: fed the client's bytes in any pieces, it returns what goes on to the
 * session (the same bytes less every GOAWAY frame) and counts the GOAWAY frames it dropped;
 * told the session's bytes (`sent`), it knows which streams have their answer. Once a
 * budget is exceeded (`over`), it returns nothing more, not even the rest of that read.
 *
 * @example
 * ```ts
 * const frames = new ClientFrames();
 * const out = frames.feed(new TextEncoder().encode("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"));
 * console.log(out.length, frames.goaways, frames.over); // 1 0 null
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
  /** The budget the client went over, once it did. */
  over: OverBudget | null = null;
  /** The highest client stream id in what was handed on (a GOAWAY's last stream id). */
  lastStream = 0;
  /** The highest client stream id seen. */
  #opened = 0;
  /** Client streams opened without an answer from the server yet. */
  #unanswered = new Set<number>();
  /** CONTINUATION frames in the open header block; -1 outside one. */
  #block = -1;
  #budgets: Readonly<FrameBudgets>;
  #resets: Bucket;
  #settings: Bucket;
  /** The session's bytes: payload still to pass, a header gathered across writes. */
  #outPass = 0;
  #outHead = new Uint8Array(9);
  #outHeadLength = 0;
  #outFrames = 0;

  constructor(budgets: Readonly<FrameBudgets> = FRAME_BUDGETS, now = () => performance.now()) {
    this.#budgets = budgets;
    this.#resets = new Bucket(budgets.earlyResets, budgets.earlyResetsPerSecond, now);
    this.#settings = new Bucket(budgets.settings, budgets.settingsPerSecond, now);
  }

  /** The parts of `chunk` that go on to the session, in order (views of `chunk` or copies). */
  feed(chunk: Uint8Array): Uint8Array[] {
    if (this.over) return [];
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
        continue;
      }
      const over = this.#account(head);
      if (over) {
        this.over = over;
        return [];
      }
      if (!whole) out.push(head.slice());
      this.#pass = length;
    }
    flush(i);
    this.lastStream = this.#opened;
    return out;
  }

  /** Counts a client frame against the budgets: the one it exceeds, or null. */
  #account(head: Uint8Array): OverBudget | null {
    switch (head[3]) {
      case HEADERS: {
        const id = streamOf(head);
        if (id % 2 === 1 && id > this.#opened) {
          this.#opened = id;
          this.#unanswered.add(id);
          if (this.#unanswered.size > this.#budgets.unanswered) return "streams";
        }
        this.#block = head[4] & END_HEADERS ? -1 : 0;
        return null;
      }
      case CONTINUATION:
        if (this.#block < 0) return null; // out of place: nghttp2's protocol error
        if (++this.#block > this.#budgets.continuations) return "continuations";
        if (head[4] & END_HEADERS) this.#block = -1;
        return null;
      case RST_STREAM:
        return this.#unanswered.delete(streamOf(head)) && !this.#resets.take() ? "resets" : null;
      case SETTINGS:
        return head[4] & ACK || this.#settings.take() ? null : "settings";
      default:
        return null;
    }
  }

  /** The session wrote `chunk`: a HEADERS or RST_STREAM of it on a client stream answers it. */
  sent(chunk: Uint8Array): void {
    let i = 0;
    while (i < chunk.length) {
      if (this.#outPass > 0) {
        const n = Math.min(this.#outPass, chunk.length - i);
        this.#outPass -= n;
        i += n;
        continue;
      }
      let head: Uint8Array;
      if (this.#outHeadLength === 0 && chunk.length - i >= 9) {
        head = chunk.subarray(i, i + 9);
        i += 9;
      } else {
        const n = Math.min(9 - this.#outHeadLength, chunk.length - i);
        this.#outHead.set(chunk.subarray(i, i + n), this.#outHeadLength);
        this.#outHeadLength += n;
        i += n;
        if (this.#outHeadLength < 9) break;
        head = this.#outHead;
        this.#outHeadLength = 0;
      }
      this.#outFrames++;
      this.#outPass = (head[0] << 16) | (head[1] << 8) | head[2];
      if (head[3] === HEADERS || head[3] === RST_STREAM) this.#unanswered.delete(streamOf(head));
    }
  }

  /** How many client streams have no answer yet. */
  get unanswered(): number {
    return this.#unanswered.size;
  }

  /**
   * What to write once `over` is set: GOAWAY(ENHANCE_YOUR_CALM, `lastStream`), after an empty
   * SETTINGS when the session wrote nothing yet (a server's first frame is SETTINGS); nothing
   * when the session's bytes so far end inside a frame (a GOAWAY would corrupt it).
   */
  calmFrames(): Uint8Array {
    if (this.#outPass > 0 || this.#outHeadLength > 0) return new Uint8Array(0);
    const debug = new TextEncoder().encode(DEBUG[this.over ?? "resets"]);
    const settings = this.#outFrames === 0 ? 9 : 0;
    const out = new Uint8Array(settings + 9 + 8 + debug.length);
    if (settings) out[3] = SETTINGS;
    const g = new DataView(out.buffer, settings);
    g.setUint32(0, ((8 + debug.length) << 8) | GOAWAY);
    g.setUint32(9, this.lastStream);
    g.setUint32(13, ENHANCE_YOUR_CALM);
    out.set(debug, settings + 17);
    return out;
  }
}

/**
 * The connection as the HTTP/2 session should read it: `socket`'s bytes less the client's GOAWAY
 * frames, within the budgets; writes go to `socket` unchanged. `onGoaway` runs at the first
 * GOAWAY, after the bytes before it were handed on. A client over a budget gets
 * GOAWAY(ENHANCE_YOUR_CALM) and its connection ends (see the module doc).
 *
 * @example
 * ```ts ignore
 * const stream = h2Front(await import("node:stream"), tlsSocket, () => (noMorePushes = true));
 * ```
 */
export function h2Front(
  stream: StreamModule,
  socket: Duplex,
  onGoaway: () => void,
  budgets: Readonly<FrameBudgets> = FRAME_BUDGETS,
): Duplex {
  const frames = new ClientFrames(budgets);
  let calm = false;
  return relayDuplex(stream, socket, new Uint8Array(0), {
    read(chunk) {
      const before = frames.goaways;
      const parts = frames.feed(chunk);
      if (frames.over && !calm) {
        calm = true;
        const timer = setTimeout(() => socket.destroy(), CALM_CLOSE_MS);
        socket.once("close", () => clearTimeout(timer));
        socket.end(frames.calmFrames());
      }
      if (before === 0 && frames.goaways > 0) queueMicrotask(onGoaway);
      return parts;
    },
    write(chunk) {
      if (calm) return false;
      frames.sent(chunk);
      return true;
    },
  });
}
