/**
 * `url_pattern` matcher on a real server: path patterns with named groups as placeholders,
 * a base URL with ignore_case, absolute patterns bound to a host and scheme, and the CEL form.
 */
import assert from "node:assert/strict";
import { startHttp } from "../http/harness.ts";
import { raw } from "../http/raw.ts";

Deno.test("url_pattern: groups, base_url + ignore_case, absolute patterns, CEL form", async () => {
  const respond = (body: string) => [{ handler: "static_response", body }];
  const srv = await startHttp({
    servers: {
      srv0: {
        listen: ["127.0.0.1:0"],
        routes: [
          {
            match: [{ url_pattern: { pattern: "/books/:id" } }],
            handle: respond("book {http.url_pattern.pathname.id}"),
            terminal: true,
          },
          {
            match: [{
              url_pattern: {
                pattern: "/api/:version/*",
                base_url: "http://example.com",
                ignore_case: true,
              },
            }],
            handle: respond("scoped {http.url_pattern.pathname.version}"),
            terminal: true,
          },
          {
            match: [{ url_pattern: { pattern: "http://users.test:*/users/:name" } }],
            handle: respond("user {http.url_pattern.pathname.name}"),
            terminal: true,
          },
          {
            match: [{ expression: "url_pattern('/search?q=:term')" }],
            handle: respond("search {http.url_pattern.search.term}"),
            terminal: true,
          },
          { handle: [{ handler: "static_response", body: "no match", status_code: 404 }] },
        ],
      },
    },
  });
  const get = async (target: string, host?: string) =>
    (await raw(srv.url(), "GET", target, host ? { host } : {})).text;
  try {
    assert.equal(await get("/books/42"), "book 42");
    assert.equal(await get("/books//42"), "book 42", "slashes merged first");
    assert.equal(await get("/books/42/extra"), "no match");
    assert.equal(await get("/API/V2/things", "example.com"), "scoped V2");
    assert.equal(await get("/api/v2/things", "other.test"), "no match", "bound to base_url's host");
    assert.equal(await get("/users/ann", "users.test"), "user ann");
    assert.equal(await get("/users/ann", "elsewhere.test"), "no match");
    assert.equal(await get("/search?q=cats"), "search cats");
  } finally {
    await srv.stop();
  }
});
