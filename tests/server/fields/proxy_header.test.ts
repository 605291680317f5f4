/**
 * The PROXY protocol header parser, by properties: whatever bytes arrive it never throws and
 * always gives one of its four verdicts; a header it writes reads back with the same addresses
 * and length, whatever follows it; every strict prefix of a header asks for more; a bounded
 * v1 header without CRLF is refused; mutated headers never throw.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  encodeProxyV1,
  encodeProxyV2,
  parseProxyHeader,
  V1_MAX,
  V2_SIGNATURE,
} from "../../../lib/server/listeners/wrappers/proxy_header.ts";
import { parseIP } from "../../../lib/server/net/ip.ts";

const RUNS = { numRuns: 400, interruptAfterTimeLimit: 10_000 };

const v4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((b) => b.join("."));
const v6 = fc.array(fc.nat(0xffff), { minLength: 8, maxLength: 8 }).map((g) =>
  g.map((x) => x.toString(16)).join(":")
);
const port = fc.nat(65535);
const endpointPair = fc.oneof(
  fc.record({ s: v4, d: v4, sp: port, dp: port }),
  fc.record({ s: v6, d: v6, sp: port, dp: port }),
);
const tail = fc.uint8Array({ maxLength: 64 });

function same(a: string, b: string): boolean {
  return parseIP(a) === parseIP(b);
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

Deno.test("proxy header: any bytes give a verdict, never a throw", () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
      const v = parseProxyHeader(bytes);
      assert.ok(["none", "more", "header", "invalid"].includes(v.kind));
      if (v.kind === "header") assert.ok(v.length <= bytes.length);
    }),
    RUNS,
  );
  // and bytes that start like a header but go on at random
  const starts = fc.constantFrom(
    new TextEncoder().encode("PROXY "),
    new TextEncoder().encode("PROXY TCP4 "),
    new TextEncoder().encode("PROXY TCP6 "),
    V2_SIGNATURE,
    concat(V2_SIGNATURE, new Uint8Array([0x21, 0x11])),
    concat(V2_SIGNATURE, new Uint8Array([0x21, 0x21])),
  );
  fc.assert(
    fc.property(starts, fc.uint8Array({ maxLength: 300 }), (head, rest) => {
      const v = parseProxyHeader(concat(head, rest));
      if (v.kind === "header") assert.ok(v.length <= head.length + rest.length);
    }),
    RUNS,
  );
});

Deno.test("proxy header: v1 and v2 headers read back with their addresses, whatever follows", () => {
  fc.assert(
    fc.property(endpointPair, fc.boolean(), tail, ({ s, d, sp, dp }, two, after) => {
      const header = two
        ? encodeProxyV2({
          source: { hostname: s, port: sp },
          destination: { hostname: d, port: dp },
        })
        : encodeProxyV1({ hostname: s, port: sp }, { hostname: d, port: dp });
      const v = parseProxyHeader(concat(header, after));
      assert.equal(v.kind, "header");
      if (v.kind !== "header") return;
      assert.equal(v.length, header.length);
      assert.equal(v.header.version, two ? 2 : 1);
      assert.equal(v.header.command, "proxy");
      const src = v.header.source!, dst = v.header.destination!;
      assert.ok(src.transport === "tcp" && dst.transport === "tcp");
      assert.ok(same(src.hostname, s), `${src.hostname} vs ${s}`);
      assert.ok(same(dst.hostname, d));
      assert.equal(src.port, sp);
      assert.equal(dst.port, dp);
    }),
    RUNS,
  );
});

Deno.test("proxy header: every strict prefix of a header asks for more bytes", () => {
  fc.assert(
    fc.property(endpointPair, fc.boolean(), fc.nat(), ({ s, d, sp, dp }, two, cut) => {
      const header = two
        ? encodeProxyV2({
          source: { hostname: s, port: sp },
          destination: { hostname: d, port: dp },
          tlvs: new Uint8Array([1, 0, 2, 104, 50]),
        })
        : encodeProxyV1({ hostname: s, port: sp }, { hostname: d, port: dp });
      const n = cut % header.length;
      assert.equal(parseProxyHeader(header.subarray(0, n)).kind, "more");
    }),
    RUNS,
  );
});

Deno.test("proxy header: anything not starting with a signature is not a header", () => {
  fc.assert(
    fc.property(fc.uint8Array({ minLength: 1, maxLength: 64 }), (bytes) => {
      fc.pre(bytes[0] !== 0x50 /* P */ && bytes[0] !== 0x0d);
      assert.equal(parseProxyHeader(bytes).kind, "none");
    }),
    RUNS,
  );
  const http = new TextEncoder().encode("GET / HTTP/1.1\r\nHost: a\r\n\r\n");
  assert.equal(parseProxyHeader(http).kind, "none");
  // a TLS ClientHello starts with 0x16
  assert.equal(parseProxyHeader(new Uint8Array([0x16, 0x03, 0x01, 0x02, 0x00])).kind, "none");
});

Deno.test("proxy header: v1 without CRLF within 107 bytes, bad fields and bad v2 are refused", () => {
  const enc = new TextEncoder();
  assert.equal(V1_MAX, 107);
  const long = enc.encode("PROXY TCP4 " + "1".repeat(120));
  assert.equal(parseProxyHeader(long.subarray(0, 106)).kind, "more");
  assert.equal(parseProxyHeader(long).kind, "invalid");
  for (
    const bad of [
      "PROXY TCP4 1.2.3.4 5.6.7.8 1\r\n", // a field missing
      "PROXY TCP4 1.2.3.4 5.6.7.8 1 70000\r\n", // port out of range
      "PROXY TCP4 1.2.3.4 5.6.7.8 01 2\r\n", // leading zero
      "PROXY TCP4 ::1 ::1 1 2\r\n", // wrong family
      "PROXY TCP6 1.2.3.4 ::1 1 2\r\n",
      "PROXY TCP4 1.2.3.256 5.6.7.8 1 2\r\n",
      "PROXY UDP4 1.2.3.4 5.6.7.8 1 2\r\n", // not a v1 protocol
      "PROXY TCP4 1.2.3.4 5.6.7.8 1 2\n", // LF alone
      "PROXY TCP4 1.2.3.4\r5.6.7.8 1 2\r\n", // CR alone
    ]
  ) {
    assert.equal(parseProxyHeader(enc.encode(bad)).kind, "invalid", bad);
  }
  const unknown = parseProxyHeader(enc.encode("PROXY UNKNOWN\r\nGET /"));
  assert.equal(unknown.kind, "header");
  if (unknown.kind === "header") {
    assert.equal(unknown.length, 15);
    assert.equal(unknown.header.source, undefined);
  }
  const v2 = encodeProxyV2({
    source: { hostname: "1.2.3.4", port: 1 },
    destination: { hostname: "5.6.7.8", port: 2 },
  });
  const version = v2.slice();
  version[12] = 0x11; // version 1 in a v2 header
  assert.equal(parseProxyHeader(version).kind, "invalid");
  const command = v2.slice();
  command[12] = 0x22; // unknown command
  assert.equal(parseProxyHeader(command).kind, "invalid");
  const short = v2.slice();
  short[15] = 4; // addresses shorter than an IPv4 pair
  assert.equal(parseProxyHeader(short).kind, "invalid");
  const local = parseProxyHeader(encodeProxyV2({ local: true }));
  assert.equal(local.kind, "header");
  if (local.kind === "header") {
    assert.equal(local.header.command, "local");
    assert.equal(local.header.source, undefined);
  }
});

Deno.test("proxy header: mutated headers never throw, and a header never claims bytes it lacks", () => {
  fc.assert(
    fc.property(
      endpointPair,
      fc.boolean(),
      fc.array(fc.tuple(fc.nat(), fc.nat(255)), { maxLength: 6 }),
      fc.nat(200),
      ({ s, d, sp, dp }, two, flips, cut) => {
        const header = two
          ? encodeProxyV2({
            source: { hostname: s, port: sp },
            destination: { hostname: d, port: dp },
          })
          : encodeProxyV1({ hostname: s, port: sp }, { hostname: d, port: dp });
        const m = header.slice(0, Math.max(1, header.length - (cut % header.length)));
        for (const [i, b] of flips) m[i % m.length] = b;
        const v = parseProxyHeader(m);
        if (v.kind === "header") assert.ok(v.length <= m.length);
      },
    ),
    RUNS,
  );
});
