/**
 * The QPACK decoder of one HTTP/3 connection (RFC 9204): the peer's dynamic table, filled by
 * the instructions on the peer's encoder stream (Set Dynamic Table Capacity, Insert With Name
 * Reference, Insert With Literal Name, Duplicate: §4.3), the decoding of encoded field
 * sections against it and the static table (§4.5), and the instructions this side owes on its
 * decoder stream (Section Acknowledgment, Stream Cancellation, Insert Count Increment: §4.4).
 *
 * Limits, all from what this side advertised: the table never grows past
 * `maxTableCapacity` (SETTINGS_QPACK_MAX_TABLE_CAPACITY); at most `maxBlockedStreams` field
 * sections wait for inserts at once (SETTINGS_QPACK_BLOCKED_STREAMS); a decoded section larger
 * than `maxFieldSectionSize` (RFC 9114 §4.2.2: names, values and 32 bytes per line) stops
 * decoding as a stream error, so a small section that names one large entry many times cannot
 * make the decoder build a large list.
 *
 * @module
 */
import { H3, H3Error } from "../errors.ts";
import { Cursor } from "../varint.ts";
import { readInt, readString, writeInt } from "./primitives.ts";
import { STATIC_TABLE } from "./static_table.ts";

/** What a decoder allows. */
export interface DecoderLimits {
  /** SETTINGS_QPACK_MAX_TABLE_CAPACITY advertised (bytes). */
  maxTableCapacity: number;
  /** SETTINGS_QPACK_BLOCKED_STREAMS advertised. */
  maxBlockedStreams: number;
  /** Largest decoded field section (RFC 9114 §4.2.2 size). */
  maxFieldSectionSize: number;
}

/** A field section that needs inserts not received yet: decode again after `waitFor(ric)`. */
export const BLOCKED = Symbol("blocked");

const ENC = H3.QPACK_ENCODER_STREAM_ERROR;
const DEC = H3.QPACK_DECOMPRESSION_FAILED;

interface Entry {
  name: string;
  value: string;
  size: number;
}

/**
 * The peer's dynamic table: entries by absolute index (0 for the first ever inserted),
 * evicted oldest first.
 */
class DynamicTable {
  #entries: Entry[] = [];
  /** Absolute index of `#entries[#head]` (the oldest entry still in the table). */
  #dropped = 0;
  #head = 0;
  /** Entries ever inserted. */
  insertCount = 0;
  size = 0;
  capacity = 0;
  constructor(readonly maxCapacity: number) {}

  get(abs: number): Entry | undefined {
    if (abs < this.#dropped || abs >= this.insertCount) return undefined;
    return this.#entries[this.#head + abs - this.#dropped];
  }

  setCapacity(capacity: number): void {
    if (capacity > this.maxCapacity) {
      throw new H3Error(
        ENC,
        `dynamic table capacity ${capacity} above the advertised ${this.maxCapacity}`,
      );
    }
    this.capacity = capacity;
    this.#evict(0);
  }

  insert(name: string, value: string): void {
    const size = name.length + value.length + 32;
    if (size > this.capacity) {
      throw new H3Error(ENC, `an entry of ${size} bytes does not fit the table (${this.capacity})`);
    }
    this.#evict(size);
    this.#entries.push({ name, value, size });
    this.insertCount++;
    this.size += size;
  }

  /** Evicts the oldest entries until `room` more bytes fit. */
  #evict(room: number): void {
    while (this.size + room > this.capacity && this.#head < this.#entries.length) {
      this.size -= this.#entries[this.#head].size;
      this.#head++;
      this.#dropped++;
    }
    if (this.#head > 64 && this.#head * 2 > this.#entries.length) {
      this.#entries = this.#entries.slice(this.#head);
      this.#head = 0;
    }
  }
}

/**
 * One connection's QPACK decoder.
 *
 * @example
 * ```ts
 * import { QpackDecoder } from "./decoder.ts";
 * const d = new QpackDecoder({ maxTableCapacity: 4096, maxBlockedStreams: 16, maxFieldSectionSize: 65536 });
 * // RFC 9204 B.1: a literal with a static name reference
 * d.decode(Uint8Array.from([0, 0, 0x51, 0x0b, ...new TextEncoder().encode("/index.html")]), 0);
 * // [":path", "/index.html"]
 * ```
 */
export class QpackDecoder {
  readonly table: DynamicTable;
  /** Encoder stream bytes of an instruction received in part. */
  #pending: Uint8Array | null = null;
  /** The insert count the encoder knows this side received (acks and increments sent). */
  #known = 0;
  /** Decoder stream instructions not yet sent. */
  #out: number[] = [];
  #waiters: { ric: number; resolve: () => void; reject: (e: unknown) => void }[] = [];
  #blocked = 0;
  #closed: unknown = null;

  constructor(readonly limits: DecoderLimits) {
    this.table = new DynamicTable(limits.maxTableCapacity);
  }

  /** Field sections waiting for inserts right now. */
  get blockedStreams(): number {
    return this.#blocked;
  }

  /**
   * Applies the instructions in `chunk` (more bytes of the peer's encoder stream); an
   * instruction cut at the end waits for the next chunk. Throws H3Error
   * (QPACK_ENCODER_STREAM_ERROR) on a bad one.
   */
  feedEncoderStream(chunk: Uint8Array): void {
    let buf = chunk;
    if (this.#pending) {
      buf = new Uint8Array(this.#pending.length + chunk.length);
      buf.set(this.#pending);
      buf.set(chunk, this.#pending.length);
      this.#pending = null;
    }
    const c = new Cursor(buf);
    const t = this.table;
    const max = this.limits.maxTableCapacity;
    while (c.pos < c.end) {
      const start = c.pos;
      const b = buf[start];
      if (b & 0x80) {
        // Insert With Name Reference: 1 T index(6) value(H, 7)
        const idx = readInt(c, 6, ENC);
        const value = idx < 0 ? null : readString(c, 7, max, ENC);
        if (value === null) {
          c.pos = start;
          break;
        }
        let name: string;
        if (b & 0x40) {
          const s = STATIC_TABLE[idx];
          if (!s) throw new H3Error(ENC, `static table index ${idx} out of range`);
          name = s[0];
        } else {
          const e = t.get(t.insertCount - 1 - idx);
          if (!e) throw new H3Error(ENC, `insert names dynamic entry ${idx}, which is not there`);
          name = e.name;
        }
        t.insert(name, value);
      } else if (b & 0x40) {
        // Insert With Literal Name: 01 H name(5) value(H, 7)
        const name = readString(c, 5, max, ENC);
        const value = name === null ? null : readString(c, 7, max, ENC);
        if (value === null) {
          c.pos = start;
          break;
        }
        t.insert(name!, value);
      } else if (b & 0x20) {
        // Set Dynamic Table Capacity: 001 capacity(5)
        const cap = readInt(c, 5, ENC);
        if (cap < 0) break;
        t.setCapacity(cap);
      } else {
        // Duplicate: 000 index(5)
        const idx = readInt(c, 5, ENC);
        if (idx < 0) break;
        const e = t.get(t.insertCount - 1 - idx);
        if (!e) throw new H3Error(ENC, `duplicate of dynamic entry ${idx}, which is not there`);
        t.insert(e.name, e.value);
      }
    }
    if (c.pos < c.end) {
      if (c.end - c.pos > max * 4 + 64) {
        throw new H3Error(ENC, "encoder stream instruction too long");
      }
      this.#pending = buf.slice(c.pos);
    }
    if (this.#waiters.length) {
      const ready = this.#waiters.filter((w) => w.ric <= t.insertCount);
      this.#waiters = this.#waiters.filter((w) => w.ric > t.insertCount);
      for (const w of ready) w.resolve();
    }
  }

  /** The Required Insert Count of an encoded one (§4.5.1.1). */
  #requiredInsertCount(encoded: number): number {
    if (encoded === 0) return 0;
    const maxEntries = Math.floor(this.limits.maxTableCapacity / 32);
    const fullRange = 2 * maxEntries;
    if (encoded > fullRange) throw new H3Error(DEC, "Required Insert Count out of range");
    const maxValue = this.table.insertCount + maxEntries;
    const maxWrapped = Math.floor(maxValue / fullRange) * fullRange;
    let ric = maxWrapped + encoded - 1;
    if (ric > maxValue) {
      if (ric <= fullRange) throw new H3Error(DEC, "Required Insert Count out of range");
      ric -= fullRange;
    }
    if (ric === 0) throw new H3Error(DEC, "Required Insert Count out of range");
    return ric;
  }

  /**
   * Decodes one encoded field section (a HEADERS frame's payload, `payload` from `start` to
   * `end`) of `streamId` into a flat
   * `[name, value, ...]` list, or returns BLOCKED when it needs inserts that have not arrived
   * (call `waitFor` with the count `required(payload)` gives, then decode again). Throws
   * H3Error: QPACK_DECOMPRESSION_FAILED (connection) on bad bytes, EXCESSIVE_LOAD (stream) for a
   * section over `maxFieldSectionSize`.
   */
  decode(
    payload: Uint8Array,
    streamId: number,
    start = 0,
    end = payload.length,
  ): string[] | typeof BLOCKED {
    const c = new Cursor(payload, start, end);
    const encoded = readInt(c, 8, DEC);
    if (encoded < 0 || c.pos >= c.end) throw new H3Error(DEC, "field section prefix cut short");
    const ric = this.#requiredInsertCount(encoded);
    const sign = payload[c.pos] & 0x80;
    const delta = readInt(c, 7, DEC);
    if (delta < 0) throw new H3Error(DEC, "field section prefix cut short");
    if (sign && delta >= ric) throw new H3Error(DEC, "negative Base in a field section");
    const base = sign ? ric - delta - 1 : ric + delta;
    const t = this.table;
    if (ric > t.insertCount) return BLOCKED;
    const max = this.limits.maxFieldSectionSize;
    const out: string[] = [];
    let size = 0;
    const dynamic = (abs: number): Entry => {
      const e = abs >= 0 && abs < ric ? t.get(abs) : undefined;
      if (!e) throw new H3Error(DEC, `field line names dynamic entry ${abs}, which is not there`);
      return e;
    };
    const limit = (n: number) => {
      size += n + 32;
      if (size > max) {
        this.#acknowledge(ric, streamId);
        throw new H3Error(H3.EXCESSIVE_LOAD, "field section too large", false);
      }
    };
    const stringMax = Math.min(max, 0x7fffffff);
    while (c.pos < c.end) {
      const b = payload[c.pos];
      let name: string;
      let value: string;
      if (b & 0x80) {
        // Indexed Field Line: 1 T index(6)
        const idx = readInt(c, 6, DEC);
        if (idx < 0) throw new H3Error(DEC, "field line cut short");
        if (b & 0x40) {
          const s = STATIC_TABLE[idx];
          if (!s) throw new H3Error(DEC, `static table index ${idx} out of range`);
          [name, value] = s;
        } else {
          const e = dynamic(base - 1 - idx);
          name = e.name;
          value = e.value;
        }
      } else if (b & 0x40) {
        // Literal Field Line With Name Reference: 01 N T index(4) value(H, 7)
        const idx = readInt(c, 4, DEC);
        if (idx < 0) throw new H3Error(DEC, "field line cut short");
        if (b & 0x10) {
          const s = STATIC_TABLE[idx];
          if (!s) throw new H3Error(DEC, `static table index ${idx} out of range`);
          name = s[0];
        } else name = dynamic(base - 1 - idx).name;
        const v = readString(c, 7, stringMax, DEC);
        if (v === null) throw new H3Error(DEC, "field line cut short");
        value = v;
      } else if (b & 0x20) {
        // Literal Field Line With Literal Name: 001 N H name(3) value(H, 7)
        const n = readString(c, 3, stringMax, DEC);
        const v = n === null ? null : readString(c, 7, stringMax, DEC);
        if (v === null) throw new H3Error(DEC, "field line cut short");
        name = n!;
        value = v;
      } else if (b & 0x10) {
        // Indexed Field Line With Post-Base Index: 0001 index(4)
        const idx = readInt(c, 4, DEC);
        if (idx < 0) throw new H3Error(DEC, "field line cut short");
        const e = dynamic(base + idx);
        name = e.name;
        value = e.value;
      } else {
        // Literal Field Line With Post-Base Name Reference: 0000 N index(3) value(H, 7)
        const idx = readInt(c, 3, DEC);
        if (idx < 0) throw new H3Error(DEC, "field line cut short");
        name = dynamic(base + idx).name;
        const v = readString(c, 7, stringMax, DEC);
        if (v === null) throw new H3Error(DEC, "field line cut short");
        value = v;
      }
      limit(name.length + value.length);
      out.push(name, value);
    }
    this.#acknowledge(ric, streamId);
    return out;
  }

  /** The Required Insert Count of an encoded section (what `waitFor` waits for). */
  required(payload: Uint8Array, start = 0, end = payload.length): number {
    const c = new Cursor(payload, start, end);
    const encoded = readInt(c, 8, DEC);
    if (encoded < 0) throw new H3Error(DEC, "field section prefix cut short");
    return this.#requiredInsertCount(encoded);
  }

  /**
   * Waits until `ric` entries were inserted: a blocked stream (H3Error QPACK_DECOMPRESSION_FAILED
   * when more than `maxBlockedStreams` would wait at once).
   */
  async waitFor(ric: number): Promise<void> {
    if (ric <= this.table.insertCount) return;
    if (this.#closed !== null) throw this.#closed;
    if (this.#blocked >= this.limits.maxBlockedStreams) {
      throw new H3Error(DEC, `more than ${this.limits.maxBlockedStreams} blocked streams`);
    }
    this.#blocked++;
    try {
      await new Promise<void>((resolve, reject) => this.#waiters.push({ ric, resolve, reject }));
    } finally {
      this.#blocked--;
    }
  }

  /** A stream abandoned before its field section was decoded (Stream Cancellation, §4.4.2). */
  cancelStream(streamId: number): void {
    if (this.limits.maxTableCapacity > 0) this.#instruction(streamId, 6, 0x40);
  }

  /** Fails every wait (the connection is closing). */
  close(reason: unknown): void {
    this.#closed = reason;
    const all = this.#waiters;
    this.#waiters = [];
    for (const w of all) w.reject(reason);
  }

  /**
   * Decoder stream bytes owed to the peer, or null when there are none: the acknowledgments
   * and cancellations so far, then an Insert Count Increment for the inserts none of them
   * acknowledged (§4.4.3), so the encoder may use them without blocking.
   */
  takeInstructions(): Uint8Array | null {
    const count = this.table.insertCount;
    if (count > this.#known) {
      // Insert Count Increment: 00 increment(6)
      this.#instruction(count - this.#known, 6, 0x00);
      this.#known = count;
    }
    if (this.#out.length === 0) return null;
    const out = Uint8Array.from(this.#out);
    this.#out = [];
    return out;
  }

  /** Section Acknowledgment (§4.4.1) of a section that used the dynamic table. */
  #acknowledge(ric: number, streamId: number): void {
    if (ric === 0) return;
    this.#instruction(streamId, 7, 0x80);
    if (ric > this.#known) this.#known = ric;
  }

  #instruction(v: number, prefix: number, flags: number): void {
    const buf = new Uint8Array(10);
    const n = writeInt(buf, 0, v, prefix, flags);
    for (let i = 0; i < n; i++) this.#out.push(buf[i]);
  }
}
