/**
 * Request smuggling toward upstreams through a real `gatehouse run` process (both listener
 * engines): the framing `reverse_proxy` declares upstream is always the body it sends. A
 * `GET` or `HEAD` carrying `Content-Length` (whose body the listener reads and drops) must not
 * reach the upstream with that length and no body: an upstream that answers at the head and
 * then reads the declared body (nginx, node, Go) would take the next request's head as that
 * body and parse the next request's body as a request of its own — a request the proxy's
 * routes never saw. Identical duplicate lengths go upstream as one value.
 */
import assert from "node:assert/strict";
import { startGatehouse } from "../server/http/hostile.ts";
import { exchange, FramingUpstream } from "./_framing_upstream.ts";

const ENGINES = ["deno", "node"] as const;

function proxyWithBlockedAdmin(dial: string, engine: string) {
  return startGatehouse({
    site: {
      listener_engine: engine,
      routes: [
        {
          match: [{ path: ["/admin*"] }],
          handle: [{ handler: "static_response", status_code: 403, body: "refused by the proxy" }],
          terminal: true,
        },
        { handle: [{ handler: "reverse_proxy", upstreams: [{ dial }] }] },
      ],
    },
  });
}

function bodyOf(answer: string): string {
  return answer.slice(answer.indexOf("\r\n\r\n") + 4);
}

for (const engine of ENGINES) {
  Deno.test(`reverse_proxy (${engine} engine): a GET with Content-Length cannot smuggle a request past the routes`, async () => {
    const up = new FramingUpstream();
    const g = await proxyWithBlockedAdmin(up.dial, engine);
    try {
      const port = g.ports.site;
      const smuggled = "GET /admin HTTP/1.1\r\nHost: a\r\n\r\n";
      const second = `POST /public HTTP/1.1\r\nHost: a\r\nContent-Length: ${smuggled.length}\r\n` +
        `Connection: close\r\n\r\n${smuggled}`;
      // The route refuses /admin when asked directly.
      assert.match(
        await exchange(port, "GET /admin HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"),
        /^HTTP\/1\.1 403 /,
      );
      // Learn how long the proxy's head for the second request is upstream.
      assert.equal(bodyOf(await exchange(port, second)), "ok POST /public");
      const raw = up.raw.join("");
      const headLength = raw.indexOf("\r\n\r\n") + 4;
      // 1. A GET declaring exactly that many body bytes (the listener reads and drops them).
      const first = `GET /public HTTP/1.1\r\nHost: a\r\nContent-Length: ${headLength}\r\n` +
        `Connection: close\r\n\r\n${"x".repeat(headLength)}`;
      assert.equal(bodyOf(await exchange(port, first)), "ok GET /public");
      // 2. The same POST again: its head must not become the GET's body upstream.
      const answer = await exchange(port, second);
      assert.equal(bodyOf(answer), "ok POST /public", `second answer: ${answer}`);
      assert.deepEqual(
        up.requests.map((r) => `${r.method} ${r.target} ${JSON.stringify(r.body)}`),
        [
          `POST /public ${JSON.stringify(smuggled)}`,
          `GET /public ""`,
          `POST /public ${JSON.stringify(smuggled)}`,
        ],
        "the upstream parsed exactly the three requests the proxy routed, never /admin",
      );
      const get = up.requests[1];
      assert.equal(
        get.fields.find(([k]) => k === "content-length"),
        undefined,
        "a GET sent without a body declares no length",
      );
    } finally {
      await g.stop();
      await up.close();
    }
  });

  Deno.test(`reverse_proxy (${engine} engine): HEAD with a body and a repeated Content-Length are framed by what is sent`, async () => {
    const up = new FramingUpstream();
    const g = await proxyWithBlockedAdmin(up.dial, engine);
    try {
      const port = g.ports.site;
      const head = await exchange(
        port,
        "HEAD /h HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
      );
      assert.match(head, /^HTTP\/1\.1 200 /);
      const dup = await exchange(
        port,
        "POST /dup HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 5\r\n" +
          "Connection: close\r\n\r\nhello",
      );
      // The node engine refuses repeated lengths outright; the deno engine accepts equal ones.
      assert.match(dup, /^HTTP\/1\.1 (200|400) /);
      const after = await exchange(
        port,
        "GET /after HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
      );
      assert.equal(bodyOf(after), "ok GET /after");
      const seen = up.requests.map((r) => ({
        line: `${r.method} ${r.target}`,
        length: r.fields.filter(([k]) => k === "content-length").map(([, v]) => v),
        body: r.body,
      }));
      const expected: { line: string; length: string[]; body: string }[] = [
        { line: "HEAD /h", length: [], body: "" },
      ];
      if (dup.startsWith("HTTP/1.1 200")) {
        expected.push({ line: "POST /dup", length: ["5"], body: "hello" });
      }
      expected.push({ line: "GET /after", length: [], body: "" });
      assert.deepEqual(seen, expected);
    } finally {
      await g.stop();
      await up.close();
    }
  });
}
