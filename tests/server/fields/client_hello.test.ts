/**
 * The ClientHello server-name reader, by properties (built ClientHellos, split over records,
 * prefixes, mutations, random bytes) and on the real ClientHellos of Deno's and node's TLS
 * clients.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { MAX_HELLO, parseClientHello } from "../../../lib/server/listeners/client_hello.ts";

const RUNS = { numRuns: 400, interruptAfterTimeLimit: 10_000 };

function u16(n: number): number[] {
  return [n >> 8, n & 0xff];
}

function hello(o: {
  name?: string;
  session: Uint8Array;
  suites: number;
  extra: Uint8Array[];
  namePosition: number;
}): Uint8Array {
  const exts: number[][] = o.extra.map((d, i) => [...u16(100 + i), ...u16(d.length), ...d]);
  if (o.name !== undefined) {
    const n = [...new TextEncoder().encode(o.name)];
    const entry = [0, ...u16(n.length), ...n];
    exts.splice(o.namePosition % (exts.length + 1), 0, [
      0,
      0,
      ...u16(entry.length + 2),
      ...u16(entry.length),
      ...entry,
    ]);
  }
  const extBytes = exts.flat();
  const body = [
    3,
    3,
    ...new Array(32).fill(7),
    o.session.length,
    ...o.session,
    ...u16(o.suites * 2),
    ...new Array(o.suites * 2).fill(0x13),
    1,
    0,
    ...u16(extBytes.length),
    ...extBytes,
  ];
  return new Uint8Array([
    1,
    body.length >> 16,
    (body.length >> 8) & 0xff,
    body.length & 0xff,
    ...body,
  ]);
}

/** Wraps handshake bytes in TLS records of at most `size` bytes. */
function records(hs: Uint8Array, size: number): Uint8Array {
  const out: number[] = [];
  for (let i = 0; i < hs.length; i += size) {
    const part = hs.subarray(i, i + size);
    out.push(0x16, 3, 1, ...u16(part.length), ...part);
  }
  return new Uint8Array(out);
}

const label = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?$/);
const hostName = fc.array(label, { minLength: 1, maxLength: 4 }).map((l) => l.join("."));
const helloArb = fc.record({
  name: fc.option(hostName, { nil: undefined }),
  session: fc.uint8Array({ maxLength: 32 }),
  suites: fc.integer({ min: 1, max: 20 }),
  extra: fc.array(fc.uint8Array({ maxLength: 40 }), { maxLength: 5 }),
  namePosition: fc.nat(),
});

Deno.test("client hello: the server name reads back, whatever the record split", () => {
  fc.assert(
    fc.property(
      helloArb,
      fc.integer({ min: 1, max: 300 }),
      fc.uint8Array({ maxLength: 20 }),
      (h, size, after) => {
        const bytes = records(hello(h), size);
        const all = new Uint8Array([...bytes, ...after]);
        const v = parseClientHello(all);
        assert.deepEqual(v, { kind: "hello", serverName: h.name ?? "" });
      },
    ),
    RUNS,
  );
});

Deno.test("client hello: every strict prefix asks for more", () => {
  fc.assert(
    fc.property(helloArb, fc.integer({ min: 1, max: 300 }), fc.nat(), (h, size, cut) => {
      const bytes = records(hello(h), size);
      assert.equal(parseClientHello(bytes.subarray(0, cut % bytes.length)).kind, "more");
    }),
    RUNS,
  );
});

Deno.test("client hello: random and mutated bytes never throw", () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 600 }), (b) => {
      const v = parseClientHello(b);
      assert.ok(["more", "hello", "invalid"].includes(v.kind));
    }),
    RUNS,
  );
  fc.assert(
    fc.property(
      helloArb,
      fc.array(fc.tuple(fc.nat(), fc.nat(255)), { maxLength: 6 }),
      (h, flips) => {
        const m = records(hello(h), 512);
        for (const [i, b] of flips) m[i % m.length] = b;
        const v = parseClientHello(m);
        if (v.kind === "hello") assert.match(v.serverName, /^[\x21-\x7e]*$/);
      },
    ),
    RUNS,
  );
  assert.equal(parseClientHello(new TextEncoder().encode("GET / HTTP/1.1\r\n")).kind, "invalid");
  // a ClientHello announced longer than the limit is refused before it arrives
  const big = new Uint8Array([0x16, 3, 1, 0, 4, 1, ...[
    (MAX_HELLO + 1) >> 16,
    ((MAX_HELLO + 1) >> 8) & 0xff,
    (MAX_HELLO + 1) & 0xff,
  ]]);
  assert.equal(parseClientHello(big).kind, "invalid");
});

/** The first bytes a real TLS client sends to a listener that never answers. */
async function capture(connect: (port: number) => Promise<void>): Promise<Uint8Array> {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  const client = connect(port).catch(() => {});
  const c = await l.accept();
  let got = new Uint8Array(0);
  const buf = new Uint8Array(16384);
  while (parseClientHello(got).kind === "more") {
    const n = await c.read(buf);
    if (n === null) break;
    got = new Uint8Array([...got, ...buf.subarray(0, n)]);
  }
  c.close();
  l.close();
  await client;
  return got;
}

Deno.test("client hello: the ClientHellos of Deno's and node's TLS clients", async () => {
  const deno = await capture(async (port) => {
    const tcp = await Deno.connect({ hostname: "127.0.0.1", port });
    const conn = await Deno.startTls(tcp, { hostname: "example.test" });
    await conn.handshake();
  });
  assert.deepEqual(parseClientHello(deno), { kind: "hello", serverName: "example.test" });
  const tls = (await import("node:tls")).default;
  const node = await capture((port) =>
    new Promise((resolve) => {
      const s = tls.connect({ host: "127.0.0.1", port, servername: "Node.Example.TEST" });
      s.on("error", () => resolve());
      s.on("close", () => resolve());
    })
  );
  assert.deepEqual(parseClientHello(node), { kind: "hello", serverName: "node.example.test" });
});
