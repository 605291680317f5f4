/**
 * Which cleartext connections of a proxying server go to the upgrade relay, decided on a
 * connection's first bytes (the WebSocket and proxy tests of tests/server/http run both ways
 * on real connections).
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { headMayUpgrade, startOf } from "../../../../lib/server/listeners/deno/plain_http_peek.ts";

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
