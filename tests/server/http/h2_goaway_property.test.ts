/**
 * The node engine's HTTP/2 client-frame filter (`lib/server/listeners/node/h2_goaway.ts`), fuzzed:
 * whatever frames a client sends and however the bytes are split, the session gets exactly the
 * preface and every frame but GOAWAY, byte for byte, and every GOAWAY is counted; arbitrary
 * bytes never make it throw or invent bytes.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { ClientFrames } from "../../../lib/server/listeners/node/h2_goaway.ts";

const PREFACE = new TextEncoder().encode("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

function frame(type: number, flags: number, stream: number, payload: Uint8Array): Uint8Array {
  const f = new Uint8Array(9 + payload.length);
  f[0] = payload.length >> 16;
  f[1] = (payload.length >> 8) & 0xff;
  f[2] = payload.length & 0xff;
  f[3] = type;
  f[4] = flags;
  new DataView(f.buffer).setUint32(5, stream >>> 0);
  f.set(payload, 9);
  return f;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) (out.set(p, o), (o += p.length));
  return out;
}

/** Splits `bytes` at the given cut points (fractions of its length). */
function pieces(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const at = [...new Set(cuts.map((c) => Math.floor(c * bytes.length)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let from = 0;
  for (const c of at) (out.push(bytes.subarray(from, c)), (from = c));
  out.push(bytes.subarray(from));
  return out;
}

const frameArb = fc.record({
  // GOAWAY often, and every other type (known and unknown)
  type: fc.oneof(fc.constant(7), fc.integer({ min: 0, max: 255 })),
  flags: fc.integer({ min: 0, max: 255 }),
  stream: fc.integer({ min: 0, max: 0x7fffffff }),
  payload: fc.oneof(
    fc.uint8Array({ maxLength: 40 }),
    fc.integer({ min: 0, max: 20_000 }).map((n) => new Uint8Array(n).fill(7)),
  ),
});

Deno.test("h2 client frames: the session gets every frame but GOAWAY, however the bytes are split", () => {
  fc.assert(
    fc.property(
      fc.array(frameArb, { maxLength: 12 }),
      fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 30 }),
      (frames, cuts) => {
        const built = frames.map((f) => ({
          ...f,
          bytes: frame(f.type, f.flags, f.stream, f.payload),
        }));
        const input = concat([PREFACE, ...built.map((f) => f.bytes)]);
        const expected = concat([
          PREFACE,
          ...built.filter((f) => f.type !== 7).map((f) => f.bytes),
        ]);
        const filter = new ClientFrames();
        const got = concat(pieces(input, cuts).flatMap((p) => filter.feed(p)));
        assert.deepEqual(got, expected);
        assert.equal(filter.goaways, frames.filter((f) => f.type === 7).length);
      },
    ),
    { numRuns: 2000 },
  );
});

Deno.test("h2 client frames: byte by byte is the same as whole", () => {
  const input = concat([
    PREFACE,
    frame(4, 0, 0, new Uint8Array(12)),
    frame(1, 5, 1, new Uint8Array([0x82, 0x84, 0x87])),
    frame(7, 0, 0, new Uint8Array(8)),
    frame(0, 1, 1, new TextEncoder().encode("body")),
    frame(7, 0, 0, new Uint8Array(0)),
  ]);
  const whole = new ClientFrames();
  const byByte = new ClientFrames();
  const a = concat(whole.feed(input));
  const b = concat([...input].flatMap((x) => byByte.feed(new Uint8Array([x]))));
  assert.deepEqual(a, b);
  assert.equal(a.length, input.length - 9 - 8 - 9);
  assert.equal(whole.goaways, 2);
  assert.equal(byByte.goaways, 2);
});

Deno.test("h2 client frames: arbitrary bytes never throw, and nothing comes out that did not go in", () => {
  fc.assert(
    fc.property(
      fc.uint8Array({ maxLength: 2000 }),
      fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 20 }),
      (bytes, cuts) => {
        const filter = new ClientFrames();
        const got = concat(pieces(bytes, cuts).flatMap((p) => filter.feed(p)));
        assert.ok(got.length <= bytes.length);
        // what comes out is what went in, in order, with dropped spans only
        let j = 0;
        for (const x of got) {
          while (j < bytes.length && bytes[j] !== x) j++;
          assert.ok(j < bytes.length, "an output byte that is not in the input");
          j++;
        }
        // the same bytes whole give the same output
        const again = new ClientFrames();
        assert.deepEqual(concat(again.feed(bytes)), got);
      },
    ),
    { numRuns: 2000 },
  );
});
