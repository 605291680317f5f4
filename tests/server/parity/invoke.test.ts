/**
 * `invoke` and `named_routes` on a real server: a named route runs with its matchers and
 * continues into the invoking chain, named routes nest, loops and unknown names fail with
 * 500 instead of taking the server down.
 */
import assert from "node:assert/strict";
import { startHttp } from "../http/harness.ts";
import { raw } from "../http/raw.ts";

const respond = (body: string) => ({ handler: "static_response", body });

Deno.test("invoke: named routes run, nest, continue the chain; loops and unknown names fail", async () => {
  const srv = await startHttp({
    servers: {
      srv0: {
        listen: ["127.0.0.1:0"],
        named_routes: {
          // sets a header and falls through to whatever follows the invoke
          tag: { handle: [{ handler: "headers", response: { set: { "X-Tagged": ["yes"] } } }] },
          // only for /api/*: answers; otherwise the invoking chain continues
          api: { match: [{ path: ["/api/*"] }], handle: [respond("api {http.request.uri.path}")] },
          a: { handle: [{ handler: "invoke", name: "b" }, respond("a")] },
          b: { handle: [{ handler: "invoke", name: "c" }, respond("b")] },
          c: { handle: [respond("c")] },
          loop1: { handle: [{ handler: "invoke", name: "loop2" }] },
          loop2: { handle: [{ handler: "invoke", name: "loop1" }] },
        },
        routes: [
          {
            match: [{ path: ["/nested"] }],
            handle: [{ handler: "invoke", name: "a" }],
            terminal: true,
          },
          {
            match: [{ path: ["/loop"] }],
            handle: [{ handler: "invoke", name: "loop1" }],
            terminal: true,
          },
          {
            match: [{ path: ["/nope"] }],
            handle: [{ handler: "invoke", name: "missing" }],
            terminal: true,
          },
          { handle: [{ handler: "invoke", name: "tag" }, { handler: "invoke", name: "api" }] },
          { handle: [respond("fallback")] },
        ],
      },
    },
  });
  try {
    const api = await raw(srv.url(), "GET", "/api/users");
    assert.equal(api.text, "api /api/users");
    assert.equal(api.headers.get("x-tagged"), "yes");
    const other = await raw(srv.url(), "GET", "/other");
    assert.equal(other.text, "fallback", "a named route whose matcher fails continues the chain");
    assert.equal(other.headers.get("x-tagged"), "yes");
    assert.equal((await raw(srv.url(), "GET", "/nested")).text, "c");
    const loop = await raw(srv.url(), "GET", "/loop");
    assert.equal(loop.status, 500);
    const nope = await raw(srv.url(), "GET", "/nope");
    assert.equal(nope.status, 500);
    const err = await srv.waitLog((l) =>
      String(l.error ?? l.msg).includes("route 'missing' not found")
    );
    assert.equal(err.logger, "http.log.error");
    // the server still answers after the loop
    assert.equal((await raw(srv.url(), "GET", "/api/x")).text, "api /api/x");
  } finally {
    await srv.stop();
  }
});
