/**
 * Every parser of HTTP/3 network bytes, fuzzed both ways:
 *
 * - round trips: what the encoders write (varints, frames and SETTINGS, QPACK prefixed
 *   integers and strings, Huffman, field sections) the parsers read back unchanged, however
 *   the bytes are split across reads (the frame reader, the QPACK encoder stream);
 * - arbitrary bytes never make a parser throw anything but `H3Error` (a protocol error);
 * - no parser reads past the end it is given: the same bytes followed by other bytes in the
 *   same buffer give the same answer.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { H3Error } from "../../../../lib/server/listeners/h3/errors.ts";
import {
  encodeFrame,
  encodeSettings,
  parseIdPayload,
  parseSettings,
  reservedFrameType,
} from "../../../../lib/server/listeners/h3/frames.ts";
import {
  huffmanDecode,
  huffmanEncode,
  huffmanLength,
} from "../../../../lib/server/listeners/h3/qpack/huffman.ts";
import {
  intSize,
  readInt,
  readString,
  stringSize,
  writeInt,
  writeString,
} from "../../../../lib/server/listeners/h3/qpack/primitives.ts";
import { BLOCKED, QpackDecoder } from "../../../../lib/server/listeners/h3/qpack/decoder.ts";
import { encodeFieldSection } from "../../../../lib/server/listeners/h3/qpack/encoder.ts";
import { StreamReader } from "../../../../lib/server/listeners/h3/stream_reader.ts";
import {
  Cursor,
  encodeVarint,
  MAX_VARINT,
  varintSize,
  writeVarint,
} from "../../../../lib/server/listeners/h3/varint.ts";

const RUNS = { numRuns: 300 };
const CODE = 0x200;

/** Runs `f`; a thrown value other than H3Error fails the property. */
function onlyProtocolErrors<T>(f: () => T): T | H3Error {
  try {
    return f();
  } catch (e) {
    if (e instanceof H3Error) return e;
    throw e;
  }
}

/** `bytes` at the start of a larger buffer of other bytes. */
function embedded(bytes: Uint8Array, tail: Uint8Array): Uint8Array {
  const out = new Uint8Array(bytes.length + tail.length);
  out.set(bytes);
  out.set(tail, bytes.length);
  return out;
}

/** Same outcome: equal values, or errors with the same code. */
function same(a: unknown, b: unknown): void {
  if (a instanceof H3Error || b instanceof H3Error) {
    assert.ok(a instanceof H3Error && b instanceof H3Error, `${a} vs ${b}`);
    assert.equal(a.code, b.code);
    return;
  }
  assert.deepEqual(a, b);
}

function stream(pieces: Uint8Array[]): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream({
    pull(ctl) {
      if (i < pieces.length) ctl.enqueue(pieces[i++]);
      else ctl.close();
    },
  });
}

function split(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const at = [...new Set(cuts.map((c) => Math.floor(c * bytes.length)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let from = 0;
  for (const c of at) (out.push(bytes.slice(from, c)), (from = c));
  out.push(bytes.slice(from));
  return out;
}

const cuts = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 8 });
const latin1 = fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 80 }).map((a) =>
  String.fromCharCode(...a)
);
const token = fc.stringMatching(/^[a-z0-9!#$%&'*+.^_`|~-]{1,24}$/);

Deno.test("varint: round trip of every size, and the RFC 9000 A.1 examples", () => {
  fc.assert(
    fc.property(
      fc.oneof(
        fc.integer({ min: 0, max: 63 }),
        fc.integer({ min: 0, max: 2 ** 31 }),
        fc.maxSafeNat(),
      ),
      (v) => {
        const buf = new Uint8Array(varintSize(v));
        assert.equal(writeVarint(buf, 0, v), buf.length);
        const c = new Cursor(buf);
        assert.equal(c.varint(), v);
        assert.equal(c.pos, buf.length);
        // one byte short: -1, nothing consumed
        const short = new Cursor(buf, 0, buf.length - 1);
        assert.equal(short.varint(), -1);
        assert.equal(short.pos, 0);
      },
    ),
    RUNS,
  );
  const examples: [string, number][] = [["9d7f3e7d", 494878333], ["7bbd", 15293], ["25", 37], [
    "4025",
    37,
  ]];
  for (const [hex, v] of examples) {
    const bytes = Uint8Array.from(hex.match(/../g)!.map((b) => parseInt(b, 16)));
    assert.equal(new Cursor(bytes).varint(), v);
  }
  // the 8-byte example is above 2^53: read approximately
  const big = Uint8Array.from("c2197c5eff14e88c".match(/../g)!.map((b) => parseInt(b, 16)));
  assert.ok(Math.abs(new Cursor(big).varint() - 151288809941952652) < 64);
  assert.equal(encodeVarint(MAX_VARINT).length, 8);
});

Deno.test("frames: SETTINGS round trip; arbitrary payloads are protocol errors or settings", () => {
  const ids = fc.uniqueArray(
    fc.integer({ min: 0, max: 2 ** 40 }).filter((id) => id < 2 || id > 5),
    { maxLength: 12 },
  );
  fc.assert(
    fc.property(
      ids,
      fc.array(fc.integer({ min: 0, max: 2 ** 40 }), { minLength: 12, maxLength: 12 }),
      (idList, values) => {
        const pairs: [number, number][] = idList.map((
          id,
          i,
        ) => [id, id === 8 ? values[i] % 2 : values[i]]);
        const frame = encodeSettings(pairs);
        const c = new Cursor(frame);
        assert.equal(c.varint(), 0x4);
        const len = c.varint();
        assert.equal(len, frame.length - c.pos);
        const s = parseSettings(frame, c.pos, frame.length);
        const get = (id: number, d: number) => pairs.find(([k]) => k === id)?.[1] ?? d;
        assert.equal(s.qpackMaxTableCapacity, get(1, 0));
        assert.equal(s.maxFieldSectionSize, get(6, Infinity));
        assert.equal(s.qpackBlockedStreams, get(7, 0));
      },
    ),
    RUNS,
  );
  fc.assert(
    fc.property(
      fc.uint8Array({ maxLength: 64 }),
      fc.uint8Array({ minLength: 1, maxLength: 16 }),
      (bytes, tail) => {
        const alone = onlyProtocolErrors(() => parseSettings(bytes));
        same(
          alone,
          onlyProtocolErrors(() => parseSettings(embedded(bytes, tail), 0, bytes.length)),
        );
        const id = onlyProtocolErrors(() => parseIdPayload(bytes, "GOAWAY"));
        same(
          id,
          onlyProtocolErrors(() =>
            parseIdPayload(embedded(bytes, tail), "GOAWAY", 0, bytes.length)
          ),
        );
      },
    ),
    RUNS,
  );
});

Deno.test("frames: the frame reader gives back every frame however the bytes are split", async () => {
  const frameArb = fc.record({
    type: fc.oneof(
      fc.constantFrom(0, 1, 4, 7),
      fc.integer({ min: 0, max: 1000 }).map(reservedFrameType),
    ),
    payload: fc.uint8Array({ maxLength: 300 }),
  });
  await fc.assert(
    fc.asyncProperty(fc.array(frameArb, { maxLength: 10 }), cuts, async (frames, cut) => {
      const bytes = new Uint8Array(
        frames.reduce((n, f) => n + encodeFrame(f.type, f.payload).length, 0),
      );
      let at = 0;
      for (const f of frames) {
        const e = encodeFrame(f.type, f.payload);
        bytes.set(e, at);
        at += e.length;
      }
      const r = new StreamReader(stream(split(bytes, cut)));
      for (const f of frames) {
        assert.ok(await r.frameHeader());
        assert.equal(r.type, f.type);
        assert.equal(r.length, f.payload.length);
        if (f.type === 0) {
          // DATA: read in pieces, without copying
          const parts: number[] = [];
          let left = r.length;
          while (left > 0) {
            const p = await r.piece(left);
            left -= p.length;
            parts.push(...p);
          }
          assert.deepEqual(parts, [...f.payload]);
        } else assert.deepEqual([...(await r.payload())], [...f.payload]);
      }
      assert.equal(await r.frameHeader(), false);
    }),
    { numRuns: 150 },
  );
});

Deno.test("frames: a stream cut inside a frame is a frame error, never anything else", async () => {
  await fc.assert(
    fc.asyncProperty(fc.uint8Array({ maxLength: 200 }), cuts, async (bytes, cut) => {
      const r = new StreamReader(stream(split(bytes, cut)));
      try {
        while (await r.frameHeader()) await r.payload(1 << 20);
      } catch (e) {
        assert.ok(e instanceof H3Error, String(e));
      }
    }),
    { numRuns: 200 },
  );
});

Deno.test("qpack: prefixed integers and string literals round trip; cut short, they wait", () => {
  fc.assert(
    fc.property(fc.maxSafeNat(), fc.integer({ min: 1, max: 8 }), (v, prefix) => {
      const buf = new Uint8Array(intSize(v, prefix));
      assert.equal(writeInt(buf, 0, v, prefix, 0), buf.length);
      assert.equal(readInt(new Cursor(buf), prefix, CODE), v);
      if (buf.length > 1) {
        assert.equal(readInt(new Cursor(buf, 0, buf.length - 1), prefix, CODE), -1);
      }
    }),
    RUNS,
  );
  fc.assert(
    fc.property(latin1, fc.integer({ min: 1, max: 7 }), (s, prefix) => {
      const buf = new Uint8Array(stringSize(s, prefix));
      assert.equal(writeString(buf, 0, s, prefix, 0), buf.length);
      assert.equal(readString(new Cursor(buf), prefix, 1000, CODE), s);
      const short = new Cursor(buf, 0, buf.length - 1);
      assert.equal(readString(short, prefix, 1000, CODE), null);
      assert.equal(short.pos, 0);
    }),
    RUNS,
  );
});

Deno.test("qpack: Huffman round trip; arbitrary bytes decode or are refused, never throw", () => {
  fc.assert(
    fc.property(latin1, (s) => {
      const buf = new Uint8Array(huffmanLength(s));
      assert.equal(huffmanEncode(s, buf, 0), buf.length);
      assert.equal(huffmanDecode(buf, 0, buf.length), s);
    }),
    RUNS,
  );
  fc.assert(
    fc.property(
      fc.uint8Array({ maxLength: 64 }),
      fc.uint8Array({ minLength: 1, maxLength: 8 }),
      (bytes, tail) => {
        const a = huffmanDecode(bytes, 0, bytes.length);
        assert.ok(a === null || typeof a === "string");
        assert.equal(huffmanDecode(embedded(bytes, tail), 0, bytes.length), a);
      },
    ),
    RUNS,
  );
});

const fieldList = fc.array(
  fc.tuple(
    fc.oneof(
      token,
      fc.constantFrom(":path", ":status", "content-type", "set-cookie", "accept", "date"),
    ),
    fc.oneof(latin1, fc.constantFrom("/", "200", "text/css", "*/*", "")),
  ),
  { maxLength: 20 },
);

Deno.test("qpack: encoded field sections decode to the same list", () => {
  fc.assert(
    fc.property(fieldList, fc.integer({ min: 0, max: 9 }), (pairs, prefix) => {
      const flat = pairs.flat();
      const section = encodeFieldSection(flat, prefix);
      const d = new QpackDecoder({
        maxTableCapacity: 0,
        maxBlockedStreams: 0,
        maxFieldSectionSize: 1 << 20,
      });
      assert.deepEqual(d.decode(section, 0, prefix), flat);
    }),
    RUNS,
  );
});

/** The encoder stream instructions of a list of inserts (a model encoder). */
function encoderStream(
  ops: (
    | { kind: "cap"; v: number }
    | { kind: "lit"; n: string; v: string }
    | { kind: "static"; i: number; v: string }
    | { kind: "dup"; i: number }
    | { kind: "dyn"; i: number; v: string }
  )[],
): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const op of ops) {
    let buf: Uint8Array;
    if (op.kind === "cap") {
      buf = new Uint8Array(intSize(op.v, 5));
      writeInt(buf, 0, op.v, 5, 0x20);
    } else if (op.kind === "lit") {
      buf = new Uint8Array(stringSize(op.n, 5) + stringSize(op.v, 7));
      writeString(buf, writeString(buf, 0, op.n, 5, 0x40), op.v, 7, 0);
    } else if (op.kind === "static" || op.kind === "dyn") {
      buf = new Uint8Array(intSize(op.i, 6) + stringSize(op.v, 7));
      writeString(buf, writeInt(buf, 0, op.i, 6, op.kind === "static" ? 0xc0 : 0x80), op.v, 7, 0);
    } else {
      buf = new Uint8Array(intSize(op.i, 5));
      writeInt(buf, 0, op.i, 5, 0x00);
    }
    parts.push(buf);
  }
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) (out.set(p, at), (at += p.length));
  return out;
}

const opArb = fc.oneof(
  fc.record({ kind: fc.constant("cap" as const), v: fc.integer({ min: 0, max: 300 }) }),
  fc.record({ kind: fc.constant("lit" as const), n: token, v: latin1 }),
  fc.record({
    kind: fc.constant("static" as const),
    i: fc.integer({ min: 0, max: 98 }),
    v: latin1,
  }),
  fc.record({ kind: fc.constant("dup" as const), i: fc.integer({ min: 0, max: 6 }) }),
  fc.record({ kind: fc.constant("dyn" as const), i: fc.integer({ min: 0, max: 6 }), v: latin1 }),
);

Deno.test("qpack: the encoder stream gives the same table however it is split", () => {
  fc.assert(
    fc.property(fc.array(opArb, { maxLength: 16 }), cuts, (ops, cut) => {
      const bytes = encoderStream([{ kind: "cap", v: 300 }, ...ops]);
      const limits = { maxTableCapacity: 300, maxBlockedStreams: 4, maxFieldSectionSize: 1 << 16 };
      const whole = new QpackDecoder(limits);
      const outcome = onlyProtocolErrors(() => whole.feedEncoderStream(bytes));
      const pieces = new QpackDecoder(limits);
      let pieceOutcome: unknown;
      for (const p of split(bytes, cut)) {
        pieceOutcome = onlyProtocolErrors(() => pieces.feedEncoderStream(p));
        if (pieceOutcome instanceof H3Error) break;
      }
      if (outcome instanceof H3Error) {
        assert.ok(pieceOutcome instanceof H3Error);
        assert.equal((pieceOutcome as H3Error).code, outcome.code);
        return;
      }
      assert.ok(!(pieceOutcome instanceof H3Error), String(pieceOutcome));
      assert.equal(pieces.table.insertCount, whole.table.insertCount);
      assert.equal(pieces.table.size, whole.table.size);
      for (let i = 0; i < whole.table.insertCount; i++) {
        assert.deepEqual(pieces.table.get(i), whole.table.get(i));
      }
    }),
    RUNS,
  );
});

Deno.test("qpack: arbitrary encoder stream bytes and field sections are protocol errors at worst", () => {
  fc.assert(
    fc.property(
      fc.array(opArb, { maxLength: 8 }),
      fc.uint8Array({ maxLength: 64 }),
      fc.uint8Array({ maxLength: 64 }),
      fc.uint8Array({ minLength: 1, maxLength: 8 }),
      (ops, noise, section, tail) => {
        const limits = { maxTableCapacity: 300, maxBlockedStreams: 4, maxFieldSectionSize: 4096 };
        const d = new QpackDecoder(limits);
        onlyProtocolErrors(() =>
          d.feedEncoderStream(encoderStream([{ kind: "cap", v: 300 }, ...ops]))
        );
        onlyProtocolErrors(() => d.feedEncoderStream(noise));
        const a = onlyProtocolErrors(() => d.decode(section, 0));
        assert.ok(a === BLOCKED || Array.isArray(a) || a instanceof H3Error);
        same(a, onlyProtocolErrors(() => d.decode(embedded(section, tail), 0, 0, section.length)));
        if (Array.isArray(a)) { for (const f of a) assert.equal(typeof f, "string"); }
      },
    ),
    { numRuns: 500 },
  );
});
