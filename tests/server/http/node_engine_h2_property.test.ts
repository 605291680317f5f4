/**
 * HTTP/2 requests on the node engine, differential: fast-check makes requests (paths with any
 * bytes percent-encoded or raw, queries, `:authority` forms, methods, a header field, bodies)
 * and a real Node HTTP/2 client sends each, over h2c, to the deno engine (`Deno.serve`) and to
 * the node engine (`node:http2`) running the same routes. Both must give the same status and
 * the same body (which echoes what the routes saw: URI, path, query, host, method, a
 * header), and neither may hang or drop the session; request bodies are left
 * unread by the route.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { freePort } from "./harness.ts";
import { gatehouse } from "../parity2/_h2_server.ts";
import { h2Client, type H2Request, nodeAvailable } from "../parity2/_h2_client.ts";

const NODE = nodeAvailable();

const ECHO = [
  "{http.request.method}",
  "{http.request.uri}",
  "{http.request.uri.path}",
  "{http.request.uri.query}",
  "{http.request.header.X-Fuzz}",
  "{http.request.header.Content-Length}",
  "{http.request.host}",
].join("|");
// Not compared: `{http.request.port}` without an authority port (each server's own) and
// `{http.request.proto}` (the deno engine infers it, and h2c with `:authority` looks like
// HTTP/1.1 there; see docs/http.md).

function server(port: number, engine: "deno" | "node") {
  return {
    listen: [`127.0.0.1:${port}`],
    listener_engine: engine,
    protocols: ["h1", "h2c"],
    routes: [{ handle: [{ handler: "static_response", body: ECHO }] }],
  };
}

/** A path: segments of printable ASCII, some percent-encoded bytes, some raw specials. */
const segment = fc.array(
  fc.oneof(
    fc.constantFrom(..."abcXYZ019-._~!$&'()*+,;=:@".split("")),
    fc.integer({ min: 0, max: 255 }).map((b) => `%${b.toString(16).padStart(2, "0")}`),
    fc.constantFrom("..", ".", "%2F", "%25", "//", "%c3%a9", "%20"),
  ),
  { maxLength: 6 },
).map((a) => a.join(""));
const pathArb = fc.array(segment, { minLength: 1, maxLength: 4 }).map((s) => "/" + s.join("/"));
const queryArb = fc.option(
  fc.array(
    fc.tuple(
      fc.constantFrom("a", "b", "q", "x+y", "%zz"),
      fc.constantFrom("", "1", "a=b", "%20", "%c3%a9", "a/b?"),
    ),
    { maxLength: 3 },
  ).map((kv) => kv.map(([k, v]) => `${k}=${v}`).join("&")),
);
const authorityArb = fc.constantFrom(
  undefined,
  "example.test",
  "Example.TEST:8080",
  "127.0.0.1",
  "[::1]:443",
  "xn--bcher-kva.test",
);
const headerArb = fc.option(
  fc.stringMatching(/^[!-~]([ !-~\t]{0,40}[!-~])?$/),
);
const requestArb = fc.record({
  path: pathArb,
  query: queryArb,
  authority: authorityArb,
  method: fc.constantFrom("GET", "POST", "PUT", "DELETE", "OPTIONS", "PATCH", "HEAD"),
  header: headerArb,
  // a body the route never reads (the stream is reset after the answer)
  body: fc.option(fc.string({ maxLength: 3000 }), { freq: 3 }),
});

Deno.test({
  name: "node engine h2: any request gets the same answer as on the deno engine",
  ignore: !NODE,
  async fn() {
    const [dPort, nPort] = [freePort(), freePort()];
    const srv = await gatehouse({
      http: { servers: { d: server(dPort, "deno"), n: server(nPort, "node") } },
    });
    const d = h2Client({ origin: `http://127.0.0.1:${dPort}` });
    const n = h2Client({ origin: `http://127.0.0.1:${nPort}` });
    let compared = 0;
    try {
      await fc.assert(
        fc.asyncProperty(requestArb, async (r) => {
          const req: H2Request = {
            path: r.path + (r.query === null ? "" : `?${r.query}`),
            method: r.method,
            ...(r.authority ? { authority: r.authority } : {}),
            headers: r.header === null ? {} : { "x-fuzz": r.header },
            // (Node's client ends GET, HEAD and DELETE streams at once: no body there)
            ...(r.body === null || ["GET", "HEAD", "DELETE"].includes(r.method)
              ? {}
              : { body: r.body }),
          };
          const [a, b] = await Promise.all([d.request(req), n.request(req)]);
          // the Node client refuses some requests itself: then it refuses both alike
          if (a.error || b.error) {
            assert.equal(b.code, a.code, `${JSON.stringify(req)}: ${a.error} / ${b.error}`);
            return;
          }
          compared++;
          assert.equal(b.status, a.status, JSON.stringify(req));
          assert.equal(b.body, a.body, JSON.stringify(req));
          assert.equal(b.headers?.["content-length"], a.headers?.["content-length"]);
        }),
        { numRuns: 300 },
      );
      assert.ok(compared >= 250, `only ${compared} requests compared`);
      // both sessions still serve
      assert.equal((await n.request({ path: "/end" })).status, 200);
      assert.equal(n.lines.filter((l) => l.ev === "connected").length, 1, "one session throughout");
    } finally {
      await d.close();
      await n.close();
      await srv.stop();
    }
  },
});
