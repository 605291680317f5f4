/**
 * Properties of the upstream response parsers (h1parse.ts, h1chunked.ts): valid responses
 * read back exactly whatever way their bytes are split; hostile mutations and random bytes
 * only ever give a result or an `UpstreamProtocolError`, the same whatever the split.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { parseChunkSize } from "../../../lib/server/http/handlers/reverse_proxy/h1chunked.ts";
import {
  H1_LIMITS,
  HeadScanner,
  parseResponseHead,
  UpstreamProtocolError,
} from "../../../lib/server/http/handlers/reverse_proxy/h1parse.ts";
import {
  latin1Bytes,
  mutatedResponseArb,
  readWhole,
  show,
  validResponseArb,
} from "./upstream_arb.ts";

const piecesArb = fc.array(fc.integer({ min: 1, max: 64 }), { minLength: 1, maxLength: 8 });
const LIMIT = { interruptAfterTimeLimit: 20000 };

Deno.test("upstream parser: valid responses read back exactly, however the bytes arrive", () => {
  fc.assert(
    fc.property(validResponseArb, piecesArb, (r, pieces) => {
      for (const split of [undefined, pieces, [1]]) {
        const got = readWhole(r.bytes, split);
        assert.equal(got.kind, "ok", show(r.bytes));
        if (got.kind !== "ok") return;
        assert.equal(got.status, r.status);
        assert.deepEqual(got.body, r.body);
        assert.equal(got.leftover, 0);
        const framingless = got.headers.filter((h) =>
          h[0] !== "content-length" && h[0] !== "transfer-encoding"
        );
        assert.deepEqual(framingless, r.headers.map(([k, v]) => [k.toLowerCase(), v]));
        if (!r.chunked) {
          assert.deepEqual(got.headers.filter((h) => h[0] === "content-length"), [
            ["content-length", String(r.body.length)],
          ]);
        }
      }
    }),
    { numRuns: 300, ...LIMIT },
  );
});

Deno.test("upstream parser: hostile mutations give a result or a protocol error, the same for every split", () => {
  fc.assert(
    fc.property(mutatedResponseArb, piecesArb, (bytes, pieces) => {
      const whole = readWhole(bytes);
      const split = readWhole(bytes, pieces);
      const bytewise = readWhole(bytes, [1]);
      for (const other of [split, bytewise]) {
        assert.equal(other.kind, whole.kind, show(bytes));
        if (whole.kind === "ok" && other.kind === "ok") {
          assert.equal(other.status, whole.status);
          assert.deepEqual(other.body, whole.body);
          assert.deepEqual(other.headers, whole.headers);
        }
      }
    }),
    { numRuns: 1000, ...LIMIT },
  );
});

Deno.test("upstream parser: random bytes never throw anything but a protocol error", () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 600 }), piecesArb, (bytes, pieces) => {
      readWhole(bytes, pieces);
      const withHead = new Uint8Array([...latin1Bytes("HTTP/1.1 200 OK\r\n"), ...bytes]);
      readWhole(withHead, pieces);
      const chunked = new Uint8Array([
        ...latin1Bytes("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"),
        ...bytes,
      ]);
      readWhole(chunked, pieces);
    }),
    { numRuns: 1000, ...LIMIT },
  );
});

Deno.test("upstream parser: chunk-size lines are 1-16 hex digits and well-formed extensions", () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 40 }), (s) => {
      try {
        const n = parseChunkSize(s);
        assert.ok(Number.isSafeInteger(n) && n >= 0);
        assert.match(s, /^[0-9a-fA-F]{1,16}/);
        assert.equal(n, parseInt(s.match(/^[0-9a-fA-F]+/)![0], 16));
      } catch (e) {
        if (!(e instanceof UpstreamProtocolError)) throw e;
      }
    }),
    { numRuns: 2000, ...LIMIT },
  );
  for (const ok of ["0", "1a", "00000000000000ff", "3;a", "3 ; a = b", '3;a="x\\"y";b']) {
    assert.doesNotThrow(() => parseChunkSize(ok), ok);
  }
  for (const bad of ["", "-1", "+1", "0x1", "1 1", "g", "3;", "3;=a", '3;a="x', "3;a=", "3,a"]) {
    assert.throws(() => parseChunkSize(bad), UpstreamProtocolError, bad);
  }
  assert.throws(() => parseChunkSize("f".repeat(17)), UpstreamProtocolError);
  assert.throws(() => parseChunkSize("fffffffffffffff0"), UpstreamProtocolError, "over 2^53");
});

Deno.test("upstream parser: Content-Length values and their combinations", () => {
  const head = (...cl: string[]) =>
    latin1Bytes(`HTTP/1.1 200 OK\r\n${cl.map((v) => `Content-Length: ${v}\r\n`).join("")}\r\n`);
  const ok: [string[], number][] = [
    [["0"], 0],
    [["003"], 3],
    [["3", "3"], 3],
    [["3, 3"], 3],
    [["3 ,3", "3"], 3],
    [["999999999999999"], 999999999999999],
  ];
  for (const [values, n] of ok) {
    const h = parseResponseHead(head(...values));
    assert.equal(h.contentLength, n, values.join("|"));
    assert.deepEqual(h.headers, [["content-length", String(n)]]);
  }
  const bad = [
    ["abc"],
    ["-1"],
    ["+3"],
    ["3 3"],
    ["0x3"],
    [""],
    ["1e3"],
    ["3."],
    [
      "9999999999999999",
    ],
    ["3", "4"],
    ["3, 4"],
    ["3,"],
    [" , 3"],
  ];
  for (const values of bad) {
    assert.throws(
      () => parseResponseHead(head(...values)),
      UpstreamProtocolError,
      values.join("|"),
    );
  }
});

Deno.test("upstream parser: head limits and line endings fail as soon as they are seen", () => {
  const scan = (s: string) => new HeadScanner().scan(latin1Bytes(s));
  assert.equal(scan("HTTP/1.1 200 OK\r\n\r\nrest"), 19);
  assert.equal(scan("HTTP/1.1 200 OK\r\nX: y"), -1);
  assert.throws(() => scan("HTTP/1.1 200 OK\n"), UpstreamProtocolError);
  assert.throws(() => scan("HTTP/1.1 200 OK\rX"), UpstreamProtocolError);
  assert.throws(() => scan("HTTP/1.1 200 OK\r\nX: \0"), UpstreamProtocolError);
  assert.throws(
    () => scan(`HTTP/1.1 200 OK\r\n${"A: b\r\n".repeat(H1_LIMITS.maxFieldLines + 1)}`),
    UpstreamProtocolError,
  );
  assert.equal(
    scan(`HTTP/1.1 200 OK\r\n${"A: b\r\n".repeat(H1_LIMITS.maxFieldLines)}\r\n`) > 0,
    true,
  );
  assert.throws(() => scan("H".repeat(H1_LIMITS.maxHeadBytes + 1)), UpstreamProtocolError);
  // Incremental: the same scanner over a growing buffer.
  const s = new HeadScanner();
  const all = latin1Bytes("HTTP/1.1 200 OK\r\nA: b\r\n\r\n");
  let end = -1;
  for (let i = 1; i <= all.length && end < 0; i++) end = s.scan(all.subarray(0, i));
  assert.equal(end, all.length);
});
