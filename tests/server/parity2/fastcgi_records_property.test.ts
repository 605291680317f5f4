/**
 * Properties of the FastCGI record layer and the CGI head parser: any bytes decode to records
 * or fail with a FastCGIProtocolError (never another error), however they are split; records
 * and parameters round-trip through the encoders; a head parses or fails the same way.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  concat,
  encodeParams,
  encodeRecord,
  END_REQUEST,
  FastCGIProtocolError,
  MAX_WRITE,
  PARAMS,
  RecordDecoder,
  type ResponseRecord,
  STDERR,
  STDOUT,
} from "../../../lib/server/http/handlers/reverse_proxy/fastcgi/records.ts";
import {
  headEnd,
  parseCGIHead,
} from "../../../lib/server/http/handlers/reverse_proxy/fastcgi/cgi_head.ts";

const RUNS = { numRuns: 300 };

/** Decodes pieces in order; the records, or the error class name. */
function decodeAll(pieces: Uint8Array[]): ResponseRecord[] | string {
  const d = new RecordDecoder();
  const out: ResponseRecord[] = [];
  try {
    for (const p of pieces) out.push(...d.push(p.slice()));
  } catch (e) {
    if (!(e instanceof FastCGIProtocolError)) throw e;
    return "FastCGIProtocolError";
  }
  return out;
}

/** Splits bytes at the given cut points. */
function split(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let prev = 0;
  for (const c of at) {
    out.push(bytes.subarray(prev, c));
    prev = c;
  }
  out.push(bytes.subarray(prev));
  return out;
}

const plain = (r: ResponseRecord[] | string) =>
  typeof r === "string"
    ? r
    : r.map((x) => x.type === END_REQUEST ? { ...x } : { type: x.type, content: [...x.content] });

Deno.test("fastcgi records: arbitrary bytes decode the same however split, or fail as protocol errors", () => {
  fc.assert(
    fc.property(
      fc.uint8Array({ maxLength: 600 }),
      fc.array(fc.nat(), { maxLength: 8 }),
      (b, cuts) => {
        assert.deepEqual(plain(decodeAll(split(b, cuts))), plain(decodeAll([b])));
      },
    ),
    RUNS,
  );
});

const recordArb = fc.oneof(
  fc.record({
    type: fc.constantFrom(STDOUT, STDERR),
    content: fc.uint8Array({ maxLength: 300 }),
  }),
  fc.record({
    type: fc.constant(END_REQUEST),
    appStatus: fc.nat({ max: 0xffffffff }),
    protocolStatus: fc.nat({ max: 3 }),
  }),
) as fc.Arbitrary<ResponseRecord>;

function encode(r: ResponseRecord, padding: number): Uint8Array {
  const content = r.type === END_REQUEST
    ? new Uint8Array([
      r.appStatus >>> 24,
      (r.appStatus >>> 16) & 0xff,
      (r.appStatus >>> 8) & 0xff,
      r.appStatus & 0xff,
      r.protocolStatus,
      0,
      0,
      0,
    ])
    : r.content;
  const rec = encodeRecord(r.type, content);
  // replace the encoder's padding with an arbitrary amount (responders may pad freely)
  const out = new Uint8Array(8 + content.length + padding);
  out.set(rec.subarray(0, 8 + content.length));
  out[6] = padding;
  out.fill(0xee, 8 + content.length);
  return out;
}

Deno.test("fastcgi records: well-formed records round-trip with any padding and splitting", () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(recordArb, fc.nat({ max: 255 })), { maxLength: 12 }),
      fc.array(fc.nat(), { maxLength: 10 }),
      (recs, cuts) => {
        const bytes = concat([new Uint8Array(0), ...recs.map(([r, p]) => encode(r, p))]);
        const got = decodeAll(split(bytes, cuts));
        assert.deepEqual(plain(got), plain(recs.map(([r]) => r)));
      },
    ),
    RUNS,
  );
});

/** A reference reader of the PARAMS stream: record by record, whole pairs in each. */
function readParams(bytes: Uint8Array): [string, string][] {
  const dec = new TextDecoder("utf-8", { fatal: true });
  const pairs: [string, string][] = [];
  let off = 0;
  let ended = false;
  while (off < bytes.length) {
    assert.equal(bytes[off], 1);
    assert.equal(bytes[off + 1], PARAMS);
    const len = (bytes[off + 4] << 8) | bytes[off + 5];
    const pad = bytes[off + 6];
    assert.ok(len <= MAX_WRITE, "record within the write size");
    assert.ok(!ended, "nothing after the empty record");
    if (len === 0) ended = true;
    const body = bytes.subarray(off + 8, off + 8 + len);
    let i = 0;
    const size = () => {
      if (body[i] < 128) return body[i++];
      const n = ((body[i] & 0x7f) << 24) | (body[i + 1] << 16) | (body[i + 2] << 8) | body[i + 3];
      i += 4;
      return n;
    };
    while (i < body.length) {
      const nl = size();
      const vl = size();
      const name = dec.decode(body.subarray(i, i + nl));
      i += nl;
      const value = dec.decode(body.subarray(i, i + vl));
      i += vl;
      assert.ok(i <= body.length, "a pair never spans two records");
      pairs.push([name, value]);
    }
    off += 8 + len + pad;
    assert.equal((len + pad) % 8, 0, "records padded to 8 bytes");
  }
  assert.ok(ended, "the stream ends with an empty record");
  return pairs;
}

Deno.test("fastcgi params: any names and values are encoded as whole pairs per record", () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.tuple(
          fc.string({ unit: "grapheme", minLength: 1, maxLength: 40 }),
          fc.oneof(
            fc.string({ unit: "grapheme", maxLength: 200 }),
            fc.nat({ max: 30000 }).map((n) => "v".repeat(n)),
          ),
        ),
        { maxLength: 20 },
      ),
      (pairs) => {
        assert.deepEqual(readParams(encodeParams(pairs)), pairs);
      },
    ),
    { numRuns: 150 },
  );
});

Deno.test("fastcgi head: arbitrary bytes parse or fail as protocol errors", () => {
  const field = fc.tuple(
    fc.stringMatching(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,12}$/),
    fc.string({ maxLength: 20 }),
  );
  const headArb = fc.oneof(
    fc.uint8Array({ maxLength: 300 }),
    fc.array(fc.oneof(field, fc.tuple(fc.constant("Status"), fc.string({ maxLength: 12 }))), {
      maxLength: 8,
    }).map((fs) =>
      new TextEncoder().encode(fs.map(([k, v]) => `${k}: ${v}\r\n`).join("") + "\r\n")
    ),
  );
  fc.assert(
    fc.property(headArb, (b) => {
      try {
        const end = headEnd(b);
        const h = parseCGIHead(end >= 0 ? b.subarray(0, end) : b);
        assert.ok(h.status >= 200 && h.status <= 599);
        for (const [k] of h.headers) assert.equal(k, k.toLowerCase());
      } catch (e) {
        if (!(e instanceof FastCGIProtocolError)) throw e;
      }
    }),
    RUNS,
  );
});
