/**
 * Differential test: the same JSON config runs in Caddy 2.6.2 (when `caddy` is installed) and
 * in Gatehouse; every request of REQUESTS goes to both and status, key headers and bodies
 * must agree. Differences we accept on purpose are listed in docs/http.md (ETag values come
 * from millisecond mtimes, the Server header names the product).
 */
import assert from "node:assert/strict";
import zlib from "node:zlib";
import { startServer } from "../../../lib/server/embed.ts";
import { freePort } from "./harness.ts";
import { raw, type RawResponse } from "./raw.ts";

function caddyInstalled(): boolean {
  try {
    return new Deno.Command("caddy", { args: ["version"], stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}

/** Headers compared on every response (when either side sends them). */
const KEY_HEADERS = [
  "content-type",
  "location",
  "content-range",
  "content-encoding",
  "vary",
  "accept-ranges",
  "www-authenticate",
  "x-custom",
  "x-up-host",
  "x-backend",
  "set-cookie",
  "last-modified",
];

/** The documented request set: [method, target, headers, note]. */
const REQUESTS: [string, string, Record<string, string>, string][] = [
  ["GET", "/", {}, "index.html from the file server"],
  ["GET", "/hello", { host: "static.test" }, "host + path matchers, static body with placeholders"],
  ["GET", "/hello", { host: "other.test" }, "host mismatch falls through to the file server (404)"],
  ["GET", "/json", {}, "JSON body gets application/json"],
  ["POST", "/status", {}, "method matcher, numeric status, custom header"],
  ["GET", "/teapot?x=1", {}, "status from a placeholder"],
  ["GET", "/files/a.txt", {}, "strip_path_prefix then file_server"],
  ["GET", "/files/a.txt", { range: "bytes=2-4" }, "single range"],
  ["GET", "/files/a.txt", { range: "bytes=-3" }, "suffix range"],
  ["GET", "/files/a.txt", { range: "bytes=100-200" }, "unsatisfiable range"],
  [
    "GET",
    "/files/a.txt",
    { "if-modified-since": "Wed, 01 Jan 2098 00:00:00 GMT" },
    "conditional GET 304",
  ],
  [
    "GET",
    "/files/a.txt",
    { "if-unmodified-since": "Mon, 01 Jan 2001 00:00:00 GMT" },
    "precondition failed 412",
  ],
  ["GET", "/files/sub", {}, "directory without slash redirects to slash (index)"],
  ["GET", "/files/sub/", {}, "directory index"],
  ["GET", "/files/sub/index.html", {}, "explicit index file"],
  ["GET", "/files/missing.txt", {}, "404 through errors routes"],
  ["GET", "/files/../../etc/passwd", {}, "traversal attempt"],
  ["GET", "/files/%2e%2e/%2e%2e/etc/passwd", {}, "encoded traversal attempt"],
  ["GET", "/files/style.css", {}, "css content type"],
  ["GET", "/files/noext", {}, "no content type for unknown extensions"],
  ["GET", "/big.txt", { "accept-encoding": "gzip" }, "encode gzip (compared decompressed)"],
  ["GET", "/big.txt", {}, "no encoding without Accept-Encoding"],
  ["GET", "/small.txt", { "accept-encoding": "gzip" }, "below minimum_length: identity"],
  ["GET", "/hdr", { "x-in": "v1" }, "headers handler: request set, response add/set"],
  ["GET", "/rw/abc?q=1", {}, "rewrite uri with placeholders"],
  ["GET", "/err", {}, "error handler with errors routes"],
  ["GET", "/proxy/p?q=1", { host: "front.test" }, "reverse proxy, headers up/down, Host kept"],
  ["GET", "/auth", {}, "basic auth challenge"],
  ["GET", "/auth", { authorization: "Basic " + btoa("ann:pw") }, "basic auth success"],
  ["GET", "/regex/42", {}, "path_regexp captures"],
  ["GET", "/q?mode=fast", {}, "query matcher"],
  ["GET", "/not", {}, "not matcher"],
  ["DELETE", "/anything", {}, "falls through to file server: 404"],
  ["GET", "/files/a.txt/", {}, "file path with a trailing slash"],
  ["HEAD", "/files/a.txt", {}, "HEAD on a file"],
  [
    "GET",
    "/files/a.txt",
    { range: "bytes=0-1,4-5", "if-range": "Mon, 01 Jan 2001 00:00:00 GMT" },
    "If-Range date mismatch: full body",
  ],
  ["GET", "/proxy/x", { "x-forwarded-for": "6.6.6.6" }, "untrusted X-Forwarded-For replaced"],
  ["GET", "/rw/%61b%20c", {}, "rewrite of an escaped path"],
];

function config(site: string, listen: string, upstream: string, hash: string) {
  return {
    servers: {
      srv0: {
        listen: [listen],
        automatic_https: { disable: true },
        routes: [
          {
            match: [{ host: ["static.test"], path: ["/hello"] }],
            handle: [{
              handler: "static_response",
              body: "hi {http.request.host} {http.request.uri.path}",
            }],
            terminal: true,
          },
          {
            match: [{ path: ["/json"] }],
            handle: [{ handler: "static_response", body: '{"ok": true}' }],
            terminal: true,
          },
          {
            match: [{ method: ["POST"], path: ["/status"] }],
            handle: [{
              handler: "static_response",
              status_code: 201,
              headers: { "X-Custom": ["c1"] },
              body: "created",
            }],
            terminal: true,
          },
          {
            match: [{ path: ["/teapot"] }],
            handle: [{
              handler: "static_response",
              status_code: "418",
              body: "q={http.request.uri.query}",
            }],
            terminal: true,
          },
          {
            match: [{ path: ["/hdr"] }],
            handle: [
              {
                handler: "headers",
                request: { set: { "X-In": ["changed-{http.request.header.X-In}"] } },
                response: { set: { "X-Custom": ["resp"] } },
              },
              { handler: "static_response", body: "in={http.request.header.X-In}" },
            ],
            terminal: true,
          },
          {
            match: [{ path: ["/rw/*"] }],
            handle: [
              {
                handler: "rewrite",
                uri: "/new{http.request.uri.path}?was={http.request.uri.query}",
              },
              { handler: "static_response", body: "{http.request.uri} {http.request.orig_uri}" },
            ],
            terminal: true,
          },
          {
            match: [{ path: ["/err"] }],
            handle: [{ handler: "error", status_code: 409, error: "conflict here" }],
            terminal: true,
          },
          {
            match: [{ path: ["/proxy/*"] }],
            handle: [{
              handler: "reverse_proxy",
              upstreams: [{ dial: upstream }],
              headers: { response: { set: { "X-Custom": ["proxied"] } } },
            }],
            terminal: true,
          },
          {
            match: [{ path: ["/auth"] }],
            handle: [
              {
                handler: "authentication",
                providers: { http_basic: { accounts: [{ username: "ann", password: hash }] } },
              },
              { handler: "static_response", body: "welcome {http.auth.user.id}" },
            ],
            terminal: true,
          },
          {
            match: [{ path_regexp: { name: "num", pattern: "^/regex/(\\d+)$" } }],
            handle: [{ handler: "static_response", body: "n={http.regexp.num.1}" }],
            terminal: true,
          },
          {
            match: [{ query: { mode: ["fast"] } }],
            handle: [{ handler: "static_response", body: "fast" }],
            terminal: true,
          },
          {
            match: [{ path: ["/not"], not: [{ method: ["POST"] }] }],
            handle: [{ handler: "static_response", body: "not post" }],
            terminal: true,
          },
          {
            match: [{ path: ["/files/*"] }],
            handle: [{ handler: "rewrite", strip_path_prefix: "/files" }, {
              handler: "file_server",
              root: site,
            }],
            terminal: true,
          },
          {
            handle: [
              { handler: "encode", encodings: { gzip: {} }, minimum_length: 256 },
              { handler: "file_server", root: site },
            ],
          },
        ],
        errors: {
          routes: [{
            handle: [{
              handler: "static_response",
              status_code: "{http.error.status_code}",
              body: "error {http.error.status_code} {http.error.status_text}",
            }],
          }],
        },
      },
    },
  };
}

function decoded(r: RawResponse): string {
  const enc = r.headers.get("content-encoding");
  if (enc === "gzip") return new TextDecoder().decode(zlib.gunzipSync(r.body));
  return r.text;
}

function normalizeBody(text: string, r: RawResponse): string {
  const ct = r.headers.get("content-type") ?? "";
  if (ct.startsWith("application/json") || text.startsWith("{")) {
    try {
      return JSON.stringify(JSON.parse(text));
    } catch { /* not JSON */ }
  }
  return text;
}

Deno.test({
  name: "differential: same JSON config in Caddy 2.6.2 and Gatehouse gives the same answers",
  ignore: !caddyInstalled(),
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "gatehouse-diff-" });
    const site = `${dir}/site`;
    await Deno.mkdir(`${site}/sub`, { recursive: true });
    await Deno.writeTextFile(`${site}/index.html`, "<h1>root</h1>");
    await Deno.writeTextFile(`${site}/a.txt`, "abcdefghij");
    await Deno.writeTextFile(`${site}/sub/index.html`, "<p>sub</p>");
    await Deno.writeTextFile(`${site}/style.css`, "p{}");
    await Deno.writeTextFile(`${site}/noext`, "raw");
    await Deno.writeTextFile(`${site}/big.txt`, "lorem ipsum ".repeat(200));
    await Deno.writeTextFile(`${site}/small.txt`, "tiny");
    const upstream = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
      const u = new URL(req.url);
      return new Response(
        `upstream ${u.pathname}${u.search} host=${req.headers.get("host")} xff=${
          req.headers.get("x-forwarded-for")
        } xfp=${req.headers.get("x-forwarded-proto")}`,
        {
          headers: { "x-backend": "b1", "content-type": "text/plain" },
        },
      );
    });
    const up = `127.0.0.1:${(upstream.addr as Deno.NetAddr).port}`;
    const { default: bcrypt } = await import("bcryptjs");
    const hash = btoa(bcrypt.hashSync("pw", 4).replace(/^\$2b\$/, "$2a$"));
    const caddyPort = freePort();
    const ghPort = freePort();
    const caddyAdmin = freePort();
    const caddyConfig = {
      admin: { listen: `127.0.0.1:${caddyAdmin}` },
      apps: { http: config(site, `127.0.0.1:${caddyPort}`, up, hash) },
    };
    await Deno.writeTextFile(`${dir}/caddy.json`, JSON.stringify(caddyConfig));
    const caddy = new Deno.Command("caddy", {
      args: ["run", "--config", `${dir}/caddy.json`],
      env: { HOME: dir, XDG_DATA_HOME: `${dir}/data`, XDG_CONFIG_HOME: `${dir}/config` },
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const caddyErr = new Response(caddy.stderr).text();
    const gh = await startServer({
      config: { apps: { http: config(site, `127.0.0.1:${ghPort}`, up, hash) } },
    });
    try {
      const caddyBase = `http://127.0.0.1:${caddyPort}`;
      const ghBase = `http://127.0.0.1:${ghPort}`;
      for (let i = 0; i < 100; i++) {
        try {
          await raw(caddyBase, "GET", "/json");
          break;
        } catch {
          await new Promise((r) => setTimeout(r, 50));
        }
      }
      const mismatches: string[] = [];
      for (const [method, target, headers, note] of REQUESTS) {
        const [c, g] = [
          await raw(caddyBase, method, target, headers),
          await raw(ghBase, method, target, headers),
        ];
        const where = `${method} ${target} (${note})`;
        if (c.status !== g.status) {
          mismatches.push(`${where}: status caddy=${c.status} gatehouse=${g.status}`);
        }
        for (const h of KEY_HEADERS) {
          let cv = c.headers.get(h);
          let gv = g.headers.get(h);
          if (h === "last-modified") {
            cv = cv === null ? null : "present";
            gv = gv === null ? null : "present";
          }
          if (cv !== gv) mismatches.push(`${where}: header ${h} caddy=${cv} gatehouse=${gv}`);
        }
        const cb = normalizeBody(decoded(c), c).replaceAll(String(caddyPort), "PORT");
        const gb = normalizeBody(decoded(g), g).replaceAll(String(ghPort), "PORT");
        if (cb !== gb) {
          mismatches.push(
            `${where}: body caddy=${JSON.stringify(cb)} gatehouse=${JSON.stringify(gb)}`,
          );
        }
        if ((c.headers.get("etag") === null) !== (g.headers.get("etag") === null)) {
          mismatches.push(`${where}: etag presence differs`);
        }
      }
      assert.deepEqual(mismatches, []);
    } finally {
      await gh.stop();
      caddy.kill("SIGTERM");
      await caddy.status;
      await caddyErr;
      await upstream.shutdown();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
