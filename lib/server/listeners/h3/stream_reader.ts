/**
 * Reading HTTP/3 frames off one QUIC stream: varints, frame headers and payloads, pulled from
 * the stream's bytes as they arrive in whatever pieces QUIC delivers them. A varint or frame
 * header cut by a read waits for the next read; a payload is read whole (control frames,
 * HEADERS) or handed on piece by piece without copying (DATA).
 *
 * The stream ending inside a varint, a frame header or a payload is H3_FRAME_ERROR (RFC 9114
 * §7.1); ending between frames is the stream's normal end.
 *
 * @module
 */
import { H3, H3Error } from "./errors.ts";

/**
 * First read size (a request's header section fits: a browser's is a few hundred bytes);
 * reads that fill it grow it, up to READ_MAX, so bodies are read in large pieces.
 */
const READ_MIN = 1024;
const READ_MAX = 64 * 1024;

/**
 * The frames of one stream.
 *
 * @example
 * ```ts
 * import { StreamReader } from "./stream_reader.ts";
 * const r = new StreamReader(new Blob([new Uint8Array([0x01, 0x02, 0xaa, 0xbb])]).stream());
 * await r.frameHeader(); // true: r.type 1, r.length 2
 * await r.payload(); // aa bb
 * await r.frameHeader(); // false: the stream ended
 * ```
 */
export class StreamReader {
  #byob: ReadableStreamBYOBReader | null = null;
  #plain: ReadableStreamDefaultReader<Uint8Array> | null = null;
  #buf: Uint8Array = new Uint8Array(0);
  #pos = 0;
  #end = 0;
  #size = READ_MIN;
  #done = false;
  /** Type of the frame whose header was read last. */
  type = 0;
  /** Payload length of that frame. */
  length = 0;

  constructor(stream: ReadableStream<Uint8Array>) {
    try {
      this.#byob = stream.getReader({ mode: "byob" });
    } catch {
      this.#plain = stream.getReader();
    }
  }

  /** Bytes read and not consumed. */
  get buffered(): number {
    return this.#end - this.#pos;
  }

  /** True once the stream ended and every byte was consumed. */
  get ended(): boolean {
    return this.#done && this.#pos === this.#end;
  }

  /** Reads more bytes (keeping the unconsumed ones); false when the stream ended. */
  async #fill(): Promise<boolean> {
    if (this.#done) return false;
    const left = this.#end - this.#pos;
    let chunk: Uint8Array | undefined;
    if (this.#byob) {
      const r = await this.#byob.read(new Uint8Array(this.#size));
      if (r.done || !r.value) {
        this.#done = true;
        return false;
      }
      chunk = r.value;
      if (chunk.length === this.#size && this.#size < READ_MAX) this.#size *= 2;
    } else {
      const r = await this.#plain!.read();
      if (r.done) {
        this.#done = true;
        return false;
      }
      chunk = r.value;
    }
    if (chunk.length === 0) return true;
    if (left === 0) {
      this.#buf = chunk;
      this.#pos = 0;
      this.#end = chunk.length;
    } else {
      const merged = new Uint8Array(left + chunk.length);
      merged.set(this.#buf.subarray(this.#pos, this.#end));
      merged.set(chunk, left);
      this.#buf = merged;
      this.#pos = 0;
      this.#end = merged.length;
    }
    return true;
  }

  /**
   * Reads one varint; -1 when the stream ends before its first byte. `what` names it in the
   * error when the stream ends inside it.
   */
  async varint(what = "varint"): Promise<number> {
    for (;;) {
      if (this.#pos < this.#end) {
        const first = this.#buf[this.#pos];
        const len = 1 << (first >> 6);
        if (this.#end - this.#pos >= len) return this.#take(len);
      }
      const had = this.#end - this.#pos;
      if (!(await this.#fill())) {
        if (had === 0) return -1;
        throw new H3Error(H3.FRAME_ERROR, `the stream ended inside a ${what}`);
      }
    }
  }

  #take(len: number): number {
    const b = this.#buf;
    const p = this.#pos;
    this.#pos = p + len;
    if (len === 1) return b[p];
    if (len === 2) return ((b[p] & 0x3f) << 8) | b[p + 1];
    if (len === 4) {
      return (b[p] & 0x3f) * 0x1000000 + ((b[p + 1] << 16) | (b[p + 2] << 8) | b[p + 3]);
    }
    const hi = (b[p] & 0x3f) * 0x1000000 + ((b[p + 1] << 16) | (b[p + 2] << 8) | b[p + 3]);
    const lo = ((b[p + 4] << 24) >>> 0) + ((b[p + 5] << 16) | (b[p + 6] << 8) | b[p + 7]);
    return hi * 0x100000000 + lo;
  }

  /** Reads a frame header into `type` and `length`; false when the stream ended before one. */
  async frameHeader(): Promise<boolean> {
    const type = await this.varint("frame type");
    if (type < 0) return false;
    const length = await this.varint("frame length");
    if (length < 0) throw new H3Error(H3.FRAME_ERROR, "the stream ended inside a frame header");
    this.type = type;
    this.length = length;
    return true;
  }

  /**
   * The current frame's whole payload (`length` bytes, at most `max`: H3_EXCESSIVE_LOAD
   * beyond), as a view that stays valid.
   */
  async payload(max = Infinity): Promise<Uint8Array> {
    const n = this.length;
    if (n > max) {
      throw new H3Error(H3.EXCESSIVE_LOAD, `frame 0x${this.type.toString(16)} of ${n} bytes`);
    }
    while (this.#end - this.#pos < n) {
      if (!(await this.#fill())) {
        throw new H3Error(H3.FRAME_ERROR, "the stream ended inside a frame");
      }
    }
    const out = this.#buf.subarray(this.#pos, this.#pos + n);
    this.#pos += n;
    return out;
  }

  /**
   * The next piece of the current frame's payload, at most `left` bytes (what remains of it),
   * as read: a view that stays valid. Throws when the stream ends first.
   */
  async piece(left: number): Promise<Uint8Array> {
    if (this.#pos === this.#end && !(await this.#fill())) {
      throw new H3Error(H3.FRAME_ERROR, "the stream ended inside a frame");
    }
    const n = Math.min(left, this.#end - this.#pos);
    const out = this.#buf.subarray(this.#pos, this.#pos + n);
    this.#pos += n;
    return out;
  }

  /** Skips the current frame's payload (a frame type this side ignores). */
  async skip(): Promise<void> {
    let left = this.length;
    while (left > 0) left -= (await this.piece(left)).length;
  }

  /** Every byte left on the stream, each piece as it is read (a stream read to its end). */
  async *rest(): AsyncGenerator<Uint8Array> {
    for (;;) {
      if (this.#pos < this.#end) {
        const out = this.#buf.subarray(this.#pos, this.#end);
        this.#pos = this.#end;
        yield out;
      }
      if (!(await this.#fill())) return;
    }
  }

  /** Stops reading: the stream's remaining bytes are not wanted (STOP_SENDING). */
  cancel(): void {
    this.#done = true;
    (this.#byob ?? this.#plain)!.cancel().catch(() => {});
  }
}
