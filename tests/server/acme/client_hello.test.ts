/**
 * The TLS-ALPN-01 responder's ClientHello parser and handshake: property tests on arbitrary
 * bytes (never throws, never reads past its input), a round trip of generated hellos, and the
 * responder on a real socket answering `openssl s_client` after being fed garbage.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  clientHelloFromRecords,
  parseClientHello,
} from "../../../lib/server/tls/acme/client_hello.ts";
import { tlsAlpnCertificate } from "../../../lib/server/tls/acme/crypto.ts";
import { holdTlsAlpnSolver } from "../../../lib/server/tls/acme/solvers.ts";
import type { Logger } from "../../../lib/server/module/instance.ts";
import { freePort } from "../fixtures/helpers.ts";

const quiet: Logger = {
  name: "test",
  debug() {},
  info() {},
  warn() {},
  error() {},
  named: () => quiet,
  enabled: () => false,
};

function u16(n: number): number[] {
  return [n >> 8, n & 0xff];
}

function ext(type: number, body: number[]): number[] {
  return [...u16(type), ...u16(body.length), ...body];
}

/** A ClientHello handshake message from its parts. */
function buildHello(p: {
  sid: number[];
  suites: number[];
  name: string;
  alpn: string[];
  versions: number[];
  shares: [number, number[]][];
}): Uint8Array {
  const name = [...new TextEncoder().encode(p.name)];
  const sni = [...u16(name.length + 3), 0, ...u16(name.length), ...name];
  const alpnList = p.alpn.flatMap((a) => [a.length, ...new TextEncoder().encode(a)]);
  const shares = p.shares.flatMap(([g, k]) => [...u16(g), ...u16(k.length), ...k]);
  const exts = [
    ...ext(0, sni),
    ...ext(16, [...u16(alpnList.length), ...alpnList]),
    ...ext(43, [p.versions.length * 2, ...p.versions.flatMap(u16)]),
    ...ext(13, [...u16(2), 4, 3]),
    ...ext(51, [...u16(shares.length), ...shares]),
  ];
  const body = [
    3,
    3,
    ...new Array(32).fill(7),
    p.sid.length,
    ...p.sid,
    ...u16(p.suites.length * 2),
    ...p.suites.flatMap(u16),
    1,
    0,
    ...u16(exts.length),
    ...exts,
  ];
  return new Uint8Array([
    1,
    body.length >> 16,
    (body.length >> 8) & 0xff,
    body.length & 0xff,
    ...body,
  ]);
}

Deno.test("client hello parser: arbitrary bytes never throw", () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 600 }), (bytes) => {
      const a = parseClientHello(bytes);
      const b = clientHelloFromRecords(bytes);
      assert.ok(a === null || typeof a === "object");
      assert.ok(b === null || b === undefined || b instanceof Uint8Array);
    }),
    { numRuns: 3000 },
  );
  // Mutations of a valid hello (the interesting inputs) never throw either.
  const valid = buildHello({
    sid: [1, 2, 3],
    suites: [0x1301],
    name: "a.test",
    alpn: ["acme-tls/1"],
    versions: [0x0304],
    shares: [[0x1d, new Array(32).fill(9)]],
  });
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.nat(valid.length - 1), fc.integer({ min: 0, max: 255 })), {
        maxLength: 8,
      }),
      fc.nat(valid.length),
      (edits, cut) => {
        const b = valid.slice(0, Math.max(cut, 1));
        for (const [i, v] of edits) if (i < b.length) b[i] = v;
        parseClientHello(b);
        clientHelloFromRecords(new Uint8Array([0x16, 3, 1, b.length >> 8, b.length & 0xff, ...b]));
      },
    ),
    { numRuns: 3000 },
  );
});

Deno.test("client hello parser: generated hellos round-trip, also split across records", () => {
  const label = fc.stringMatching(/^[a-z0-9]{1,12}$/);
  fc.assert(
    fc.property(
      fc.record({
        sid: fc.array(fc.nat(255), { maxLength: 32 }),
        suites: fc.array(fc.nat(0xffff), { minLength: 1, maxLength: 20 }),
        name: fc.array(label, { minLength: 1, maxLength: 4 }).map((l) => l.join(".")),
        alpn: fc.array(fc.stringMatching(/^[a-z0-9/.-]{1,20}$/), { minLength: 1, maxLength: 4 }),
        versions: fc.array(fc.nat(0xffff), { minLength: 1, maxLength: 6 }),
        shares: fc.uniqueArray(
          fc.tuple(fc.nat(0xffff), fc.array(fc.nat(255), { minLength: 1, maxLength: 65 })),
          { selector: (s) => s[0], maxLength: 3 },
        ),
      }),
      fc.integer({ min: 1, max: 64 }),
      (p, split) => {
        const msg = buildHello(p);
        const h = parseClientHello(msg);
        assert.ok(h);
        assert.deepEqual([...h.sessionId], p.sid);
        assert.deepEqual(h.cipherSuites, p.suites);
        assert.equal(h.serverName, p.name);
        assert.deepEqual(h.alpn, p.alpn);
        assert.deepEqual(h.versions, p.versions);
        assert.deepEqual([...h.keyShares.keys()], p.shares.map((s) => s[0]));
        // The same message in records of `split` bytes is collected whole.
        const records: number[] = [];
        for (let i = 0; i < msg.length; i += split) {
          const part = msg.subarray(i, i + split);
          records.push(0x16, 3, 1, part.length >> 8, part.length & 0xff, ...part);
        }
        const all = new Uint8Array(records);
        assert.deepEqual(clientHelloFromRecords(all), msg);
        assert.equal(clientHelloFromRecords(all.subarray(0, all.length - 1)), undefined);
      },
    ),
    { numRuns: 500 },
  );
});

async function opensslHandshake(port: number, name: string): Promise<string> {
  const o = await new Deno.Command("timeout", {
    args: [
      "10",
      "openssl",
      "s_client",
      "-connect",
      `127.0.0.1:${port}`,
      "-servername",
      name,
      "-alpn",
      "acme-tls/1",
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).output();
  return new TextDecoder().decode(o.stdout);
}

Deno.test("tls-alpn-01 responder: answers by SNI after garbage, refuses what it cannot answer", async () => {
  const port = freePort();
  const a = await tlsAlpnCertificate("a.test", "tok.a");
  const b = await tlsAlpnCertificate("b.test", "tok.b");
  const ha = await holdTlsAlpnSolver("127.0.0.1", port, "a.test", a, quiet);
  const hb = await holdTlsAlpnSolver("127.0.0.1", port, "b.test", b, quiet);
  assert.ok(ha.standalone && hb.standalone);
  try {
    // Garbage and truncated hellos: the connection is closed, the responder keeps serving.
    for (
      const bytes of [
        new TextEncoder().encode("GET / HTTP/1.1\r\n\r\n"),
        new Uint8Array([0x16, 3, 1, 0, 50, 1, 0]),
      ]
    ) {
      const c = await Deno.connect({ hostname: "127.0.0.1", port });
      await c.write(bytes);
      if (bytes.length < 10) c.closeWrite();
      const buf = new Uint8Array(64);
      const n = await c.read(buf);
      assert.ok(n === null || buf[0] === 0x15, "an alert or a close");
      c.close();
    }
    const outA = await opensslHandshake(port, "a.test");
    assert.match(outA, /Protocol *: TLSv1\.3|New, TLSv1\.3/);
    assert.match(outA, /ALPN protocol: acme-tls\/1/);
    assert.match(outA, /DNS:a\.test|subject=CN ?= ?ACME challenge/);
    // Each name gets its own certificate (chosen by SNI); an unknown name gets no handshake.
    const outB = await opensslHandshake(port, "b.test");
    assert.match(outB, /ALPN protocol: acme-tls\/1/);
    const certA = outA.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/)![0];
    const certB = outB.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/)![0];
    assert.equal(certA.replace(/\s/g, ""), a.cert.replace(/\s/g, ""));
    assert.equal(certB.replace(/\s/g, ""), b.cert.replace(/\s/g, ""));
    assert.doesNotMatch(await opensslHandshake(port, "c.test"), /BEGIN CERTIFICATE/);
  } finally {
    await ha.release();
    await hb.release();
  }
  // Released: the port is free again.
  const l = Deno.listen({ hostname: "127.0.0.1", port });
  l.close();
});
