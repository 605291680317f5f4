/**
 * The node engine's HTTP/2 frame front (`lib/server/listeners/node/h2_frames.ts`), fuzzed both
 * ways (the client's bytes in, the session's bytes out):
 *
 * - whatever frames a client sends and however the bytes are split, the session gets exactly
 *   the preface and every frame but GOAWAY, byte for byte, and every GOAWAY is counted;
 * - the budgets: for any run of client frames, server answers and clock steps, split at any
 *   byte both ways, the front goes over the budget a plain frame-by-frame model of the rules
 *   says (or none), hands on a prefix of the frames before the one that went over, names the
 *   right last stream, and writes a well-formed GOAWAY(ENHANCE_YOUR_CALM) only at a frame
 *   boundary of the session's bytes;
 * - arbitrary bytes either way never make it throw or invent bytes.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  ClientFrames,
  ENHANCE_YOUR_CALM,
  type FrameBudgets,
  type OverBudget,
} from "../../../lib/server/listeners/node/h2_frames.ts";

/** No budget at all: the filter alone. */
const UNLIMITED: FrameBudgets = {
  earlyResets: Infinity,
  earlyResetsPerSecond: 0,
  unanswered: Infinity,
  continuations: Infinity,
  settings: Infinity,
  settingsPerSecond: 0,
};

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
        const filter = new ClientFrames(UNLIMITED);
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
  const whole = new ClientFrames(UNLIMITED);
  const byByte = new ClientFrames(UNLIMITED);
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
        const filter = new ClientFrames(UNLIMITED);
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
        const again = new ClientFrames(UNLIMITED);
        assert.deepEqual(concat(again.feed(bytes)), got);
      },
    ),
    { numRuns: 2000 },
  );
});

/** Small budgets, so that generated runs go over them often. */
const SMALL: FrameBudgets = {
  earlyResets: 3,
  earlyResetsPerSecond: 2,
  unanswered: 8,
  continuations: 2,
  settings: 3,
  settingsPerSecond: 1,
};

interface F {
  type: number;
  flags: number;
  stream: number;
  payload: Uint8Array;
}

/** A frame as generated: what it does, resolved to a stream against the streams opened so far. */
interface Intent {
  op: "open" | "reset" | "continue" | "settings" | "answer" | "raw";
  /** Which recent stream (0: the newest), or how many ids an open skips. */
  k: number;
  flags: number;
  raw: F;
}

/** One step of a run: client frames, the session's frames, or the clock moving on. */
type Step =
  | { kind: "client"; intents: Intent[]; cuts: number[] }
  | { kind: "server"; intents: Intent[]; cuts: number[] }
  | { kind: "wait"; ms: number };

const streamArb = fc.oneof(fc.integer({ min: 0, max: 16 }), fc.constant(0x7fffffff));
const rawArb = (types: fc.Arbitrary<number>, big = false): fc.Arbitrary<F> =>
  fc.record({
    type: types,
    flags: fc.constantFrom(0, 1, 4, 5, 0xff),
    stream: streamArb,
    payload: big
      ? fc.oneof(
        fc.uint8Array({ maxLength: 12 }),
        fc.integer({ min: 0, max: 3000 }).map((n) => new Uint8Array(n)),
      )
      : fc.uint8Array({ maxLength: 12 }),
  });
const intentArb = (ops: Intent["op"][], raw: fc.Arbitrary<F>): fc.Arbitrary<Intent> =>
  fc.record({
    op: fc.constantFrom(...ops),
    k: fc.integer({ min: 0, max: 4 }),
    flags: fc.constantFrom(0, 1, 4, 5, 4, 5),
    raw,
  });
// client: opening and resetting streams, header blocks, SETTINGS, and any frame (GOAWAY too)
const clientIntentArb = intentArb(
  ["open", "open", "reset", "reset", "reset", "continue", "settings", "raw"],
  rawArb(fc.oneof(fc.constantFrom(0, 1, 3, 4, 6, 7, 7, 8, 9), fc.integer({ min: 0, max: 255 }))),
);
// session: answers (HEADERS or RST_STREAM on a recent stream) and other frames, some large
const serverIntentArb = intentArb(
  ["answer", "answer", "raw"],
  rawArb(fc.constantFrom(0, 1, 3, 4, 6, 7, 8), true),
);
const cutsArb = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 6 });
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("client" as const),
      intents: fc.array(clientIntentArb, { maxLength: 10 }),
      cuts: cutsArb,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("server" as const),
      intents: fc.array(serverIntentArb, { maxLength: 4 }),
      cuts: cutsArb,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("wait" as const),
      ms: fc.integer({ min: 0, max: 3000 }),
    }),
  },
);

/** Resolves intents to frames: `next` is the next client stream id to open. */
function resolve(intents: Intent[], s: { next: number }): F[] {
  const recent = (k: number) => Math.max(1, s.next - 2 * (1 + k));
  return intents.map((i): F => {
    switch (i.op) {
      case "open": {
        const id = s.next;
        s.next += 2 * (1 + (i.k % 2));
        return { type: 1, flags: i.flags, stream: id, payload: new Uint8Array(3) };
      }
      case "reset":
        return { type: 3, flags: 0, stream: recent(i.k), payload: new Uint8Array([0, 0, 0, 8]) };
      case "continue":
        return { type: 9, flags: i.k === 0 ? 4 : 0, stream: recent(0), payload: new Uint8Array(2) };
      case "settings":
        return { type: 4, flags: i.k === 0 ? 1 : 0, stream: 0, payload: new Uint8Array() };
      case "answer":
        return { type: i.k % 2 ? 3 : 1, flags: 4, stream: recent(i.k), payload: new Uint8Array(4) };
      default:
        return i.raw;
    }
  });
}

/** The rules, frame by frame, written out plainly. */
class Model {
  opened = 0;
  unanswered = new Set<number>();
  block = -1;
  resets: { tokens: number; at: number };
  settings: { tokens: number; at: number };
  constructor(readonly b: FrameBudgets, now: number) {
    this.resets = { tokens: b.earlyResets, at: now };
    this.settings = { tokens: b.settings, at: now };
  }
  #take(bucket: { tokens: number; at: number }, size: number, rate: number, now: number) {
    bucket.tokens = Math.min(size, bucket.tokens + ((now - bucket.at) * rate) / 1000);
    bucket.at = now;
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }
  client(f: F, now: number): OverBudget | null {
    const id = f.stream & 0x7fffffff;
    if (f.type === 1) {
      if (id % 2 === 1 && id > this.opened) {
        this.opened = id;
        this.unanswered.add(id);
        if (this.unanswered.size > this.b.unanswered) return "streams";
      }
      this.block = f.flags & 4 ? -1 : 0;
    } else if (f.type === 9 && this.block >= 0) {
      this.block++;
      if (this.block > this.b.continuations) return "continuations";
      if (f.flags & 4) this.block = -1;
    } else if (f.type === 3 && this.unanswered.delete(id)) {
      if (!this.#take(this.resets, this.b.earlyResets, this.b.earlyResetsPerSecond, now)) {
        return "resets";
      }
    } else if (f.type === 4 && !(f.flags & 1)) {
      if (!this.#take(this.settings, this.b.settings, this.b.settingsPerSecond, now)) {
        return "settings";
      }
    }
    return null;
  }
  server(f: F): void {
    if (f.type === 1 || f.type === 3) this.unanswered.delete(f.stream & 0x7fffffff);
  }
}

/** Checks what `calmFrames` gives: a GOAWAY(ENHANCE_YOUR_CALM, last) after an optional SETTINGS. */
function checkCalm(bytes: Uint8Array, last: number, settingsFirst: boolean): void {
  let o = 0;
  if (settingsFirst) {
    assert.deepEqual([...bytes.subarray(0, 9)], [0, 0, 0, 4, 0, 0, 0, 0, 0]);
    o = 9;
  }
  const v = new DataView(bytes.buffer, bytes.byteOffset + o);
  const length = v.getUint32(0) >>> 8;
  assert.equal(bytes.length - o, 9 + length, "one whole frame");
  assert.equal(bytes[o + 3], 7, "GOAWAY");
  assert.equal(v.getUint32(5), 0, "on stream 0");
  assert.equal(v.getUint32(9), last, "last stream id");
  assert.equal(v.getUint32(13), ENHANCE_YOUR_CALM);
}

Deno.test("h2 frame budgets: the front goes over exactly where the rules say, however the bytes are split both ways", () => {
  fc.assert(
    fc.property(fc.array(stepArb, { maxLength: 20 }), (steps) => {
      let clock = 1000;
      const front = new ClientFrames(SMALL, () => clock);
      const model = new Model(SMALL, clock);
      // the client's byte stream less GOAWAY frames, and where each frame starts in it
      const expected: Uint8Array[] = [PREFACE];
      let offset = PREFACE.length;
      const got: Uint8Array[] = [];
      let over: OverBudget | null = null;
      let overAt = Infinity; // offset of the frame that went over, in `expected`
      const newStreams: { id: number; end: number }[] = []; // where each new stream's header ends
      let serverFrames = 0;
      got.push(...front.feed(PREFACE));
      const ids = { next: 1 };
      for (const step of steps) {
        if (step.kind === "wait") {
          clock += step.ms;
          continue;
        }
        const frames = resolve(step.intents, ids);
        const bytes = frames.map((f) => frame(f.type, f.flags, f.stream, f.payload));
        if (step.kind === "server") {
          for (const f of frames) model.server(f);
          for (const p of pieces(concat(bytes), step.cuts)) front.sent(p);
          serverFrames += frames.length;
          continue;
        }
        frames.forEach((f, i) => {
          if (f.type === 7) return;
          if (over === null) {
            const opened = model.opened;
            over = model.client(f, clock);
            if (over) overAt = offset;
            else if (model.opened !== opened) {
              newStreams.push({ id: model.opened, end: offset + 9 });
            }
          }
          expected.push(bytes[i]);
          offset += bytes[i].length;
        });
        for (const p of pieces(concat(bytes), step.cuts)) got.push(...front.feed(p));
      }
      assert.equal(front.over, over);
      const out = concat(got);
      const all = concat(expected);
      if (over === null) {
        assert.deepEqual(out, all, "everything but GOAWAY goes on");
      } else {
        assert.ok(out.length <= overAt, "nothing from the frame that went over on");
        assert.deepEqual(out, all.subarray(0, out.length), "a prefix of the frames");
        assert.deepEqual(front.feed(new Uint8Array(30)), [], "nothing after");
      }
      // the last stream: the highest new stream whose header went on whole
      const last = newStreams.filter((s) => s.end <= out.length).map((s) => s.id);
      assert.equal(front.lastStream, last.length ? Math.max(...last) : 0);
      if (over === null) assert.equal(front.unanswered, model.unanswered.size);
      // the session's bytes ended on a frame boundary: a GOAWAY of ours is well-formed
      checkCalm(front.calmFrames(), front.lastStream, serverFrames === 0);
    }),
    { numRuns: 3000 },
  );
});

Deno.test("h2 frame budgets: the session's bytes split anywhere tell the same answers", () => {
  fc.assert(
    fc.property(
      fc.array(serverIntentArb, { minLength: 1, maxLength: 10 }),
      cutsArb,
      fc.integer({ min: 1, max: 8 }),
      (intents, cuts, cut) => {
        const frames = resolve(intents, { next: 17 });
        const bytes = concat(frames.map((f) => frame(f.type, f.flags, f.stream, f.payload)));
        // streams 1, 3, ..., 15 opened by the client, then the session's frames
        const open = () => {
          const c = new ClientFrames(UNLIMITED);
          const heads = Array.from(
            { length: 8 },
            (_, i) => frame(1, 5, 2 * i + 1, new Uint8Array()),
          );
          c.feed(concat([PREFACE, ...heads]));
          return c;
        };
        const whole = open();
        whole.sent(bytes);
        const split = open();
        for (const p of pieces(bytes, cuts)) split.sent(p);
        assert.equal(split.unanswered, whole.unanswered);
        const answered = new Set(
          frames.filter((f) => f.type === 1 || f.type === 3).map((f) => f.stream & 0x7fffffff),
        );
        const left = [1, 3, 5, 7, 9, 11, 13, 15].filter((id) => !answered.has(id)).length;
        assert.equal(whole.unanswered, left);
        // the session's bytes end `cut` bytes into the last frame: no GOAWAY could go out now
        const short = open();
        short.sent(bytes.subarray(0, bytes.length - cut));
        assert.equal(short.calmFrames().length, 0, "mid-frame: nothing");
        assert.ok(whole.calmFrames().length > 0, "on a frame boundary: a GOAWAY");
      },
    ),
    { numRuns: 2000 },
  );
});

Deno.test("h2 frame budgets: arbitrary bytes both ways never throw, and the GOAWAY is well-formed", () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.record({ out: fc.boolean(), bytes: fc.uint8Array({ maxLength: 400 }) }),
        { maxLength: 12 },
      ),
      (chunks) => {
        const front = new ClientFrames(SMALL, () => 0);
        let fed = 0;
        let passed = 0;
        for (const c of chunks) {
          if (c.out) front.sent(c.bytes);
          else {
            fed += c.bytes.length;
            passed += concat(front.feed(c.bytes)).length;
          }
        }
        assert.ok(passed <= fed);
        const calm = front.calmFrames();
        if (calm.length) checkCalm(calm, front.lastStream, calm[3] === 4);
      },
    ),
    { numRuns: 2000 },
  );
});
