/**
 * The listener wrappers' connection logic by properties, over a connection that delivers its
 * bytes in random pieces: the outcome (go on, or close; the address used; the bytes left for
 * TLS/HTTP) does not depend on how the bytes were cut, a wrapper always finishes, and the
 * redirect answer is always a 308 with a clean Location or a 400.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  acceptProxyHeader,
  parseProxyProtocolConfig,
} from "../../../lib/server/listeners/wrappers/proxy_protocol.ts";
import {
  acceptRedirect,
  redirectFor,
} from "../../../lib/server/listeners/wrappers/http_redirect.ts";
import {
  encodeProxyV1,
  encodeProxyV2,
} from "../../../lib/server/listeners/wrappers/proxy_header.ts";
import type { PeerAddress, PendingConnection } from "../../../lib/server/module/listener.ts";

const RUNS = { numRuns: 300, interruptAfterTimeLimit: 15_000 };

/** A connection that hands out `bytes` in the given piece sizes, then ends. */
class Pieces implements PendingConnection {
  remote: PeerAddress;
  readonly socketRemote: PeerAddress = { transport: "tcp", hostname: "127.0.0.1", port: 40000 };
  buffered = new Uint8Array(0);
  answered: Uint8Array | null = null;
  closed = false;
  #at = 0;
  #i = 0;
  constructor(readonly bytes: Uint8Array, readonly sizes: number[], readonly silentAtEnd = false) {
    this.remote = this.socketRemote;
  }
  fill(): Promise<"data" | "eof" | "timeout"> {
    if (this.#at >= this.bytes.length) {
      return Promise.resolve(this.silentAtEnd ? "timeout" : "eof");
    }
    const n = Math.max(1, this.sizes[this.#i++ % this.sizes.length] ?? 1);
    const next = this.bytes.subarray(this.#at, this.#at + n);
    this.#at += next.length;
    const b = new Uint8Array(this.buffered.length + next.length);
    b.set(this.buffered);
    b.set(next, this.buffered.length);
    this.buffered = b;
    return Promise.resolve("data");
  }
  consume(n: number): void {
    this.buffered = this.buffered.subarray(n);
  }
  answer(bytes: Uint8Array): void {
    this.answered = bytes;
    this.closed = true;
  }
  close(): void {
    this.closed = true;
  }
  /** What TLS/HTTP would read next: the unconsumed buffer and the bytes not yet delivered. */
  rest(): string {
    return new TextDecoder("latin1").decode(this.buffered) +
      new TextDecoder("latin1").decode(this.bytes.subarray(this.#at));
  }
}

const header = fc.oneof(
  fc.tuple(fc.ipV4(), fc.nat(65535)).map(([h, p]) =>
    encodeProxyV1({ hostname: h, port: p }, { hostname: "127.0.0.1", port: 443 })
  ),
  fc.tuple(fc.ipV6(), fc.nat(65535)).map(([h, p]) =>
    encodeProxyV2({ source: { hostname: h, port: p }, destination: { hostname: "::1", port: 1 } })
  ),
  fc.constant(new Uint8Array(0)),
  fc.uint8Array({ maxLength: 40 }),
);
const policy = fc.constantFrom("IGNORE", "USE", "REJECT", "REQUIRE", "SKIP");
const sizes = fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 8 });
const request = new TextEncoder().encode("GET / HTTP/1.1\r\nHost: a\r\n\r\n");

Deno.test("proxy_protocol: the outcome does not depend on how the bytes arrive", async () => {
  await fc.assert(
    fc.asyncProperty(header, policy, sizes, async (h, fallback, cut) => {
      const cfg = parseProxyProtocolConfig({ fallback_policy: fallback });
      const bytes = new Uint8Array([...h, ...request]);
      const whole = new Pieces(bytes, [bytes.length]);
      const pieces = new Pieces(bytes, cut);
      const a = await acceptProxyHeader(cfg, whole);
      const b = await acceptProxyHeader(cfg, pieces);
      assert.equal(a, b);
      if (a) {
        assert.deepEqual(pieces.remote, whole.remote);
        assert.equal(pieces.rest(), whole.rest());
        assert.ok(pieces.rest().endsWith("GET / HTTP/1.1\r\nHost: a\r\n\r\n"));
      }
    }),
    RUNS,
  );
});

Deno.test("proxy_protocol: silence until the timeout goes on without a header (REQUIRE: closed)", async () => {
  for (const p of ["IGNORE", "USE", "REJECT", "REQUIRE"]) {
    const cfg = parseProxyProtocolConfig({ fallback_policy: p, timeout: 1_000_000 });
    assert.equal(
      await acceptProxyHeader(cfg, new Pieces(new Uint8Array(0), [1], true)),
      p !== "REQUIRE",
    );
    // a header cut off by the timeout is never taken for a whole one
    const cut = new Pieces(new TextEncoder().encode("PROXY TCP4 1.2.3.4"), [5], true);
    assert.equal(await acceptProxyHeader(cfg, cut), false);
  }
});

Deno.test("http_redirect: any first bytes: on to TLS, a 308 with a clean Location, a 400, or closed", async () => {
  const head = fc.tuple(
    fc.constantFrom("GET /", "HEAD ", "POST ", "PUT /", "OPTIO", "\x16\x03\x01", "PRI * "),
    fc.string({ maxLength: 60 }),
    fc.option(fc.string({ maxLength: 30 })),
  ).map(([start, rest, host]) =>
    new TextEncoder().encode(
      start + rest + "\r\n" + (host === null ? "" : `Host: ${host}\r\n`) + "\r\n",
    )
  );
  await fc.assert(
    fc.asyncProperty(head, sizes, fc.integer({ min: 8, max: 200 }), async (bytes, cut, max) => {
      const c = new Pieces(bytes, cut);
      const go = await acceptRedirect(max, c);
      if (go) {
        assert.equal(c.answered, null);
        assert.equal(c.rest(), new TextDecoder("latin1").decode(bytes), "untouched for TLS");
        return;
      }
      if (c.answered === null) return; // closed: too long, or ended early
      const text = new TextDecoder().decode(c.answered);
      assert.match(text, /^HTTP\/1\.0 (308 Permanent Redirect|400 Bad Request)\r\n/);
      const loc = /\r\nLocation: ([^\r\n]*)\r\n/.exec(text);
      if (text.includes(" 308 ")) {
        assert.ok(loc, text);
        assert.match(loc![1], /^https:\/\/[^\s/?#@]+\/[\x21-\x7e]*$/);
      }
    }),
    RUNS,
  );
  const r = new TextDecoder().decode(
    redirectFor(
      new TextEncoder().encode("GET http://evil.test/x?y HTTP/1.1\r\nHost: a.test\r\n\r\n"),
    ),
  );
  assert.match(r, /\r\nLocation: https:\/\/a\.test\/x\?y\r\n/, "absolute-form keeps its path only");
});
