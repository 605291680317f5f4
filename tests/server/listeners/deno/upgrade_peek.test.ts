/**
 * Which cleartext connections of a proxying server go to the upgrade relay, decided on a
 * connection's first bytes (the WebSocket and proxy tests of tests/server/http run both ways
 * on real connections), and a server process that decides it on real connections.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { headMayUpgrade, startOf } from "../../../../lib/server/listeners/deno/plain_http_peek.ts";
import { loneHead } from "../../../../lib/server/listeners/deno/upgrade_relay.ts";
import { call, freePort } from "../../fixtures/helpers.ts";
import { finish, QUIET, serve, up } from "../../fixtures/process.ts";
import { pairsWithin } from "../../fixtures/sockets.ts";

const enc = (s: string) => new TextEncoder().encode(s);

Deno.test("upgrade peek: a whole head without Upgrade is served directly; an Upgrade, a partial head or unknown bytes are relayed", () => {
  assert.equal(headMayUpgrade(enc("GET / HTTP/1.1\r\nHost: a\r\n\r\n")), false);
  assert.equal(
    headMayUpgrade(enc("POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc")),
    false,
  );
  assert.equal(headMayUpgrade(enc("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")), false, "h2c preface");
  assert.equal(
    headMayUpgrade(
      enc("GET /s HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"),
    ),
    true,
  );
  assert.equal(headMayUpgrade(enc("GET / HTTP/1.1\r\nHost: a\r\nUPGRADE :h2c\r\n\r\n")), true);
  assert.equal(headMayUpgrade(enc("GET / HTTP/1.1\r\nHost: a\r\n")), true, "head not all there");
  assert.equal(headMayUpgrade(new Uint8Array(0)), true);
  // a field that only contains the word is not an Upgrade field
  assert.equal(headMayUpgrade(enc("GET / HTTP/1.1\r\nX-Upgrade: no\r\n\r\n")), false);
  // the body's bytes never count: an Upgrade line after the head is data
  assert.equal(headMayUpgrade(enc("POST / HTTP/1.1\r\nHost: a\r\n\r\nUpgrade: x\r\n")), false);
});

Deno.test("upgrade peek: arbitrary bytes never throw; a head with an Upgrade field is always relayed", () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 600 }), (b) => {
      assert.equal(typeof headMayUpgrade(b), "boolean");
    }),
  );
  fc.assert(
    fc.property(
      fc.array(fc.stringMatching(/^[A-Za-z-]{1,12}: [ -~]{0,20}$/), { maxLength: 6 }),
      fc.nat(6),
      (fields, at) => {
        const all = [...fields];
        all.splice(Math.min(at, all.length), 0, "Upgrade: websocket");
        const head = `GET / HTTP/1.1\r\n${all.join("\r\n")}\r\n\r\n`;
        assert.equal(headMayUpgrade(enc(head)), true, head);
      },
    ),
  );
});

Deno.test("preface peek: the whole HTTP/2 preface is HTTP/2, anything that leaves it is not, a part of it is not known yet", () => {
  const preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
  assert.deepEqual(startOf(enc(preface)), { http2: true, mayUpgrade: false });
  assert.equal(startOf(enc(`${preface}\x00\x00\x12\x04`)).http2, true, "with its SETTINGS");
  assert.equal(startOf(enc("PRI * HTTP/2.0\r\n")).http2, undefined);
  assert.equal(startOf(new Uint8Array(0)).http2, undefined);
  assert.equal(startOf(enc("PRI * HTTP/1.1\r\n\r\n")).http2, false);
  assert.deepEqual(startOf(enc("GET / HTTP/1.1\r\nHost: a\r\n\r\n")), {
    http2: false,
    mayUpgrade: false,
  });
  assert.equal(startOf(enc("GET / HTTP/1.1\r\nUpgrade: websocket\r\n\r\n")).mayUpgrade, true);
});

Deno.test("hand-back: only one whole bodiless HTTP/1.1 head that asks for no upgrade lets a relayed connection go back", () => {
  assert.equal(loneHead(enc("GET / HTTP/1.1\r\nHost: a\r\n\r\n")), true);
  assert.equal(loneHead(enc("HEAD /x?y HTTP/1.1\r\nHost: a\r\nAccept: */*\r\n\r\n")), true);
  assert.equal(loneHead(enc("GET / HTTP/1.1\r\nHost: a\r\n")), false, "not all there");
  assert.equal(loneHead(enc("GET / HTTP/1.0\r\nHost: a\r\n\r\n")), false, "HTTP/1.0");
  assert.equal(loneHead(enc("POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n")), false);
  assert.equal(loneHead(enc("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n")), false);
  assert.equal(loneHead(enc("GET / HTTP/1.1\r\nUpgrade: websocket\r\n\r\n")), false);
  assert.equal(loneHead(enc("GET / HTTP/1.1\r\nExpect: 100-continue\r\n\r\n")), false);
  assert.equal(loneHead(enc("GET / HTTP/1.1\r\nConnection: keep-alive, close\r\n\r\n")), false);
  assert.equal(loneHead(enc("GET / HTTP/1.1\r\nConnection: closed\r\n\r\n")), true);
  assert.equal(loneHead(enc("GET / HTTP/1.1\r\nno colon\r\n\r\n")), false);
  assert.equal(
    loneHead(enc("GET /a HTTP/1.1\r\nHost: a\r\n\r\nGET /b HTTP/1.1\r\nHost: a\r\n\r\n")),
    false,
    "two heads",
  );
  assert.equal(loneHead(enc("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")), false);
});

Deno.test("hand-back: arbitrary bytes never throw; a head followed by anything, or with a body or upgrade field, never goes back", () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 600 }), (b) => {
      assert.equal(typeof loneHead(b), "boolean");
    }),
  );
  const field = fc.stringMatching(/^[A-Za-z][A-Za-z-]{0,11}: [ -~]{0,20}$/)
    .filter((f) => !/^(content-length|transfer-encoding|upgrade|expect|connection)\s*:/i.test(f));
  fc.assert(
    fc.property(
      fc.array(field, { maxLength: 6 }),
      fc.constantFrom(
        "Content-Length: 5",
        "transfer-encoding: chunked",
        "UPGRADE: h2c",
        "Expect: x",
      ),
      fc.nat(6),
      fc.uint8Array({ minLength: 1, maxLength: 40 }),
      (fields, framing, at, extra) => {
        const head = (fs: string[]) =>
          enc(`GET /p HTTP/1.1\r\n${fs.map((f) => `${f}\r\n`).join("")}\r\n`);
        assert.equal(loneHead(head(fields)), true);
        const withFraming = [...fields];
        withFraming.splice(Math.min(at, fields.length), 0, framing);
        assert.equal(loneHead(head(withFraming)), false);
        const plus = new Uint8Array([...head(fields), ...extra]);
        assert.equal(loneHead(plus), false);
      },
    ),
  );
});

Deno.test({
  name:
    "upgrade peek: a client that sends its first request a moment after connecting is served directly; one whose request asks to upgrade is relayed",
  ignore: Deno.build.os !== "linux",
  async fn() {
    const backend = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      () => new Response("from the backend"),
    );
    const port = freePort();
    const s = await serve({
      logging: QUIET,
      apps: {
        http: {
          servers: {
            s: {
              listen: [`127.0.0.1:${port}`],
              routes: [{
                handle: [{
                  handler: "reverse_proxy",
                  upstreams: [{ dial: `127.0.0.1:${backend.addr.port}` }],
                }],
              }],
            },
          },
        },
      },
    }, ["--workers", "1"]);
    // the server's connections between two ports that are neither its listeners' nor the
    // backend's: the relay's pair (its loopback server and the connection to it)
    const known = new Set([port, backend.addr.port, s.port]);
    const relayed = () => pairsWithin(s.p.child.pid, known);
    const request = async (head: string) => {
      const c = await Deno.connect({ hostname: "127.0.0.1", port });
      // the connection is accepted before it sends anything unless the kernel waits for bytes
      await new Promise((r) => setTimeout(r, 50));
      await c.write(new TextEncoder().encode(head));
      const buf = new Uint8Array(4096);
      let text = "";
      while (!text.includes("from the backend")) {
        const n = await c.read(buf);
        if (n === null) break;
        text += new TextDecoder().decode(buf.subarray(0, n));
      }
      return { c, text };
    };
    try {
      await up(s.base);
      const plain = await request("GET / HTTP/1.1\r\nHost: a\r\n\r\n");
      assert.match(plain.text, /^HTTP\/1\.1 200/);
      assert.equal(relayed(), 0, "a plain first request is served directly");
      plain.c.close();
      // the same delay with an Upgrade field (the backend answers it as a plain request)
      const upgrade = await request(
        "GET / HTTP/1.1\r\nHost: a\r\nUpgrade: something\r\nConnection: Upgrade\r\n\r\n",
      );
      assert.match(upgrade.text, /^HTTP\/1\.1 200/);
      assert.equal(relayed(), 1, "a first request that may upgrade is relayed");
      upgrade.c.close();
    } finally {
      await call(s.base, "POST", "/stop").catch(() => {});
      assert.equal(await finish(s.p, s.dir), 0, s.p.output());
      await backend.shutdown();
    }
  },
});
