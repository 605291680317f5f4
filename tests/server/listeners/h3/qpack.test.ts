/**
 * QPACK and its primitives against the RFCs' own examples: the prefixed integers and Huffman
 * strings of RFC 7541 Appendix C (QPACK uses both unchanged), the Huffman codes of RFC 7541
 * Appendix B, the QPACK static table of RFC 9204 Appendix A, and the encoder/decoder exchange
 * of RFC 9204 Appendix B played through the decoder (dynamic table state and the decoder
 * stream bytes it owes).
 */
import assert from "node:assert/strict";
import { H3, H3Error } from "../../../../lib/server/listeners/h3/errors.ts";
import {
  huffmanCode,
  huffmanDecode,
  huffmanEncode,
  huffmanLength,
} from "../../../../lib/server/listeners/h3/qpack/huffman.ts";
import {
  intSize,
  readInt,
  readString,
  writeInt,
} from "../../../../lib/server/listeners/h3/qpack/primitives.ts";
import { BLOCKED, QpackDecoder } from "../../../../lib/server/listeners/h3/qpack/decoder.ts";
import { encodeFieldSection } from "../../../../lib/server/listeners/h3/qpack/encoder.ts";
import { STATIC_TABLE } from "../../../../lib/server/listeners/h3/qpack/static_table.ts";
import { Cursor } from "../../../../lib/server/listeners/h3/varint.ts";

const hex = (s: string) =>
  Uint8Array.from(s.replace(/\s+/g, "").match(/../g)!.map((b) => parseInt(b, 16)));
const toHex = (b: Uint8Array | null) =>
  b === null ? "null" : [...b].map((x) => x.toString(16).padStart(2, "0")).join("");

function decoder(capacity = 220) {
  return new QpackDecoder({
    maxTableCapacity: capacity,
    maxBlockedStreams: 16,
    maxFieldSectionSize: 1 << 16,
  });
}

Deno.test("qpack: prefixed integers of RFC 7541 C.1", () => {
  const cases: [number, number, string][] = [[10, 5, "0a"], [1337, 5, "1f9a0a"], [42, 8, "2a"]];
  for (const [v, prefix, want] of cases) {
    const buf = new Uint8Array(intSize(v, prefix));
    writeInt(buf, 0, v, prefix, 0);
    assert.equal(toHex(buf), want);
    assert.equal(readInt(new Cursor(hex(want)), prefix, H3.QPACK_DECOMPRESSION_FAILED), v);
  }
  // cut short: -1, the position unchanged
  const c = new Cursor(hex("1f9a"));
  assert.equal(readInt(c, 5, H3.QPACK_DECOMPRESSION_FAILED), -1);
  assert.equal(c.pos, 0);
});

Deno.test("qpack: Huffman strings of RFC 7541 C.4 and C.6", () => {
  const cases: [string, string][] = [
    ["www.example.com", "f1e3c2e5f23a6ba0ab90f4ff"],
    ["no-cache", "a8eb10649cbf"],
    ["custom-key", "25a849e95ba97d7f"],
    ["custom-value", "25a849e95bb8e8b4bf"],
    ["302", "6402"],
    ["private", "aec3771a4b"],
    ["Mon, 21 Oct 2013 20:13:21 GMT", "d07abe941054d444a8200595040b8166e082a62d1bff"],
    ["https://www.example.com", "9d29ad171863c78f0b97c8e9ae82ae43d3"],
    ["gzip", "9bd9ab"],
    [
      "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1",
      "94e7821dd7f2e6c7b335dfdfcd5b3960d5af27087f3672c1ab270fb5291f9587316065c003ed4ee5b1063d5007",
    ],
  ];
  for (const [text, coded] of cases) {
    assert.equal(huffmanLength(text), coded.length / 2, text);
    const buf = new Uint8Array(huffmanLength(text));
    assert.equal(huffmanEncode(text, buf, 0), buf.length);
    assert.equal(toHex(buf), coded, text);
    const bytes = hex(coded);
    assert.equal(huffmanDecode(bytes, 0, bytes.length), text);
  }
});

Deno.test("qpack: Huffman codes are RFC 7541 Appendix B's", () => {
  // a sample of the table's rows: symbol, code (hex, right-aligned), length
  const rows: [number, number, number][] = [
    [0, 0x1ff8, 13],
    [9, 0xffffea, 24],
    [10, 0x3ffffffc, 30],
    [32, 0x14, 6],
    [48, 0x0, 5],
    [60, 0x7ffc, 15],
    [92, 0x7fff0, 19],
    [97, 0x3, 5],
    [127, 0xffffffc, 28],
    [128, 0xfffe6, 20],
    [199, 0x1ffffec, 25],
    [203, 0x7ffffde, 27],
    [255, 0x3ffffee, 26],
    [256, 0x3fffffff, 30],
  ];
  for (const [sym, code, len] of rows) assert.deepEqual(huffmanCode(sym), [code, len], `${sym}`);
});

Deno.test("qpack: Huffman refuses EOS, long padding and padding that is not ones", () => {
  // "0" is 00000: padded with three ones it is 0x07
  assert.equal(huffmanDecode(hex("07"), 0, 1), "0");
  // padded with zeros
  assert.equal(huffmanDecode(hex("00"), 0, 1), null);
  // eight bits of padding after a whole symbol: "0" then a byte of ones
  assert.equal(huffmanDecode(hex("07ff"), 0, 2), null);
  // the EOS code (30 ones) inside the string
  assert.equal(huffmanDecode(hex("ffffffff"), 0, 4), null);
  // an empty string is valid
  assert.equal(huffmanDecode(new Uint8Array(0), 0, 0), "");
});

Deno.test("qpack: the static table is RFC 9204 Appendix A's", () => {
  assert.equal(STATIC_TABLE.length, 99);
  const spot: [number, string, string][] = [
    [0, ":authority", ""],
    [1, ":path", "/"],
    [17, ":method", "GET"],
    [25, ":status", "200"],
    [31, "accept-encoding", "gzip, deflate, br"],
    [52, "content-type", "text/html; charset=utf-8"],
    [63, ":status", "100"],
    [85, "content-security-policy", "script-src 'none'; object-src 'none'; base-uri 'none'"],
    [98, "x-frame-options", "sameorigin"],
  ];
  for (const [i, name, value] of spot) assert.deepEqual(STATIC_TABLE[i], [name, value], `${i}`);
});

Deno.test("qpack: string literals with a length beyond the limit fail before their bytes arrive", () => {
  const c = new Cursor(hex("7f8101")); // a 7-bit prefix length of 127 + 129 = 256, no bytes yet
  assert.throws(
    () => readString(c, 7, 100, H3.QPACK_DECOMPRESSION_FAILED),
    (e) => e instanceof H3Error && e.code === H3.QPACK_DECOMPRESSION_FAILED,
  );
  // within the limit and cut short: wait for more
  assert.equal(readString(new Cursor(hex("0561")), 7, 100, H3.QPACK_DECOMPRESSION_FAILED), null);
});

Deno.test("qpack: the exchange of RFC 9204 Appendix B, decoder side", () => {
  const d = decoder(220);
  // B.1: a literal with a static name reference, no dynamic table
  assert.deepEqual(d.decode(hex("0000 510b 2f69 6e64 6578 2e68 746d 6c"), 0), [
    ":path",
    "/index.html",
  ]);
  assert.equal(d.takeInstructions(), null);

  // B.2: capacity, two inserts with static name references, a section with post-base indexes
  d.feedEncoderStream(
    hex("3fbd01 c00f 7777 772e 6578 616d 706c 652e 636f 6d c10c 2f73 616d 706c 652f 7061 7468"),
  );
  assert.equal(d.table.capacity, 220);
  assert.equal(d.table.insertCount, 2);
  assert.equal(d.table.size, 106);
  assert.deepEqual(d.decode(hex("0381 10 11"), 4), [
    ":authority",
    "www.example.com",
    ":path",
    "/sample/path",
  ]);
  assert.equal(toHex(d.takeInstructions()), "84"); // Section Acknowledgment, stream 4

  // B.3: a speculative insert with a literal name, acknowledged by an Insert Count Increment
  d.feedEncoderStream(hex("4a63 7573 746f 6d2d 6b65 790c 6375 7374 6f6d 2d76 616c 7565"));
  assert.equal(d.table.size, 160);
  assert.equal(toHex(d.takeInstructions()), "01");

  // B.4: a section that needs the Duplicate still in flight; the decoder cancels the stream
  const section8 = hex("0500 80 c1 81");
  assert.equal(d.decode(section8, 8), BLOCKED);
  assert.equal(d.required(section8), 4);
  d.cancelStream(8);
  assert.equal(toHex(d.takeInstructions()), "48"); // Stream Cancellation, stream 8
  d.feedEncoderStream(hex("02")); // Duplicate (relative index 2: :authority)
  assert.equal(d.table.size, 217);
  // had it not been cancelled, the section decodes now
  assert.deepEqual(d.decode(section8, 8), [
    ":authority",
    "www.example.com",
    ":path",
    "/",
    "custom-key",
    "custom-value",
  ]);

  // B.5: an insert with a dynamic name reference evicts the oldest entry
  d.feedEncoderStream(hex("810d 6375 7374 6f6d 2d76 616c 7565 32"));
  assert.equal(d.table.insertCount, 5);
  assert.equal(d.table.size, 215);
  assert.equal(d.table.get(0), undefined);
  assert.equal(d.table.get(4)?.value, "custom-value2");
});

Deno.test("qpack: a blocked section resolves once its inserts arrive", async () => {
  const d = decoder(220);
  const section = hex("0200 80"); // Required Insert Count 1, Base 1, relative index 0
  assert.equal(d.decode(section, 0), BLOCKED);
  const waited = d.waitFor(d.required(section));
  assert.equal(d.blockedStreams, 1);
  d.feedEncoderStream(hex("3fbd01 c00f 7777 772e 6578 616d 706c 652e 636f 6d"));
  await waited;
  assert.equal(d.blockedStreams, 0);
  assert.deepEqual(d.decode(section, 0), [":authority", "www.example.com"]);
});

Deno.test("qpack: references the table cannot satisfy are decompression failures", () => {
  const failed = (f: () => unknown) =>
    assert.throws(f, (e) => e instanceof H3Error && e.code === H3.QPACK_DECOMPRESSION_FAILED);
  const d = decoder(220);
  failed(() => d.decode(hex("0080"), 0)); // Required Insert Count 0 and a negative Base
  failed(() => d.decode(hex("0000 ff24"), 0)); // static index 99 + ... out of range
  failed(() => d.decode(hex("0000 80"), 0)); // a dynamic reference with Required Insert Count 0
  failed(() => d.decode(hex("ff"), 0)); // prefix cut short
  failed(() => d.decode(hex("0f00"), 0)); // encoded insert count above 2 * MaxEntries (12)
  // no dynamic table at all: any non-zero Required Insert Count
  failed(() => decoder(0).decode(hex("0200 80"), 0));
});

Deno.test("qpack: bad encoder stream instructions are encoder stream errors", () => {
  const bad = (bytes: string, capacity = 220) =>
    assert.throws(
      () => decoder(capacity).feedEncoderStream(hex(bytes)),
      (e) => e instanceof H3Error && e.code === H3.QPACK_ENCODER_STREAM_ERROR,
      bytes,
    );
  bad("3fbe01"); // capacity 221 above the advertised 220
  bad("00"); // Duplicate of an entry that does not exist
  bad("3fbd01 80 00"); // insert naming dynamic entry 0 of an empty table
  bad("3fbd01 ff24 00"); // static index out of range
  bad("c00f 7777 772e 6578 616d 706c 652e 636f 6d"); // an insert into a table of capacity 0
});

Deno.test("qpack: a section over the field section limit is a stream error, acknowledged", () => {
  const d = new QpackDecoder({
    maxTableCapacity: 220,
    maxBlockedStreams: 1,
    maxFieldSectionSize: 100,
  });
  d.feedEncoderStream(hex("3fbd01 c00f 7777 772e 6578 616d 706c 652e 636f 6d"));
  d.takeInstructions();
  // the same 57-byte entry twice: 114 bytes
  assert.throws(
    () => d.decode(hex("0200 80 80"), 4),
    (e) => e instanceof H3Error && e.code === H3.EXCESSIVE_LOAD && !e.connection,
  );
  assert.equal(toHex(d.takeInstructions()), "84");
});

Deno.test("qpack: more blocked streams than advertised is a decompression failure", async () => {
  const d = new QpackDecoder({
    maxTableCapacity: 220,
    maxBlockedStreams: 1,
    maxFieldSectionSize: 1000,
  });
  const first = d.waitFor(1);
  await assert.rejects(
    d.waitFor(1),
    (e) => e instanceof H3Error && e.code === H3.QPACK_DECOMPRESSION_FAILED,
  );
  d.close(new Error("closed"));
  await assert.rejects(first, /closed/);
});

Deno.test("qpack: the encoder's field lines (static only)", () => {
  assert.equal(toHex(encodeFieldSection([":status", "200"], 0)), "0000d9");
  // a literal value with the static name of content-type (index 44), Huffman-coded
  const ct = encodeFieldSection([":status", "404", "content-type", "text/x"], 0);
  assert.deepEqual(decoder(0).decode(ct, 0), [":status", "404", "content-type", "text/x"]);
  // a literal name, and never-indexed on set-cookie: 0111 1110 (static name ref 14, N set)
  const sc = encodeFieldSection(["set-cookie", "a=b", "x-custom", "v"], 1);
  assert.equal(sc[0], 0);
  assert.equal(sc[3], 0x7e);
  assert.deepEqual(decoder(0).decode(sc, 0, 1), ["set-cookie", "a=b", "x-custom", "v"]);
});
