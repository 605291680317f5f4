/**
 * Properties of `push` over arbitrary `Link` fields: reading them never throws, and what is
 * pushed is always a well-formed absolute path on the request's own origin, never another
 * origin or a malformed target. Checked on the functions the handler uses, then end to end:
 * a running server answers with the generated Link fields and a real Node HTTP/2 client
 * records every PUSH_PROMISE.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { parseLinkHeader, pushPath } from "../../../lib/server/http/handlers/push/link.ts";
import { runServer } from "../fields/_server.ts";
import { makePki } from "../http/pki.ts";
import { nodeH2Client, nodeVersion } from "./_push.ts";

const HOST = "example.com:8443";

/** An origin-form target a client can send as `:path`: no spaces, controls or bad escapes. */
function wellFormed(p: string): boolean {
  return /^\/(?!\/)[A-Za-z0-9\-._~!$&'()*+,;=:@/?%]*$/.test(p) &&
    !/%(?![0-9A-Fa-f]{2})/.test(p);
}

/** True when `uri` names `host`'s origin over https (WHATWG URL parsing, the browsers'). */
function sameOrigin(uri: string, host: string): boolean {
  try {
    const u = new URL(uri);
    return u.protocol === "https:" && u.host === host.toLowerCase() && u.username === "" &&
      u.password === "";
  } catch {
    return false;
  }
}

const hosts = fc.constantFrom(HOST, "EXAMPLE.com:8443", "example.com", "evil.example:8443");
/** URIs that look like what sites send, and the tricks a hostile one might try. */
const uri = fc.oneof(
  fc.webPath(),
  fc.tuple(fc.constantFrom("https://", "http://", "HTTPS://", "//", "ftp://"), hosts, fc.webPath())
    .map(([s, h, p]) => `${s}${h}${p}`),
  fc.tuple(hosts, fc.constantFrom("@evil.example", "\\@evil.example", ".evil.example", ""))
    .map(([h, t]) => `https://${h}${t}/x`),
  fc.string({ unit: fc.constantFrom("/", "%", "z", "1", " ", "\t", "#", "?", ":", "a", "é") }),
  fc.string(),
);
const param = fc.oneof(
  fc.constantFrom("rel=preload", "nopush", "as=style", "rel=icon", " ; ", "="),
  fc.string({ maxLength: 8 }),
);
const link = fc.tuple(uri, fc.array(param, { maxLength: 3 }), fc.constantFrom("<", ""))
  .map(([u, ps, open]) => `${open}${u}>${ps.map((p) => `; ${p}`).join("")}`);
const linkField = fc.oneof(
  fc.array(link, { maxLength: 4 }).map((l) => l.join(", ")),
  fc.string(),
);
/** Fields most of whose links point at this origin (so that pushes happen), and any others. */
const localLink = fc.tuple(fc.webPath(), fc.array(param, { maxLength: 2 }))
  .map(([p, ps]) => `</${p.replace(/^\/+/, "")}>${ps.map((x) => `; ${x}`).join("")}`);
const liveField = fc.oneof(
  fc.array(fc.oneof(localLink, localLink, link), { minLength: 1, maxLength: 4 })
    .map((l) => l.join(", ")),
  linkField,
);

Deno.test("push property: reading any Link field never throws; a pushed path is well formed and same-origin", () => {
  fc.assert(
    fc.property(linkField, (field) => {
      for (const l of parseLinkHeader(field)) {
        const p = pushPath(l.uri, "https", HOST);
        if (p === null) continue;
        assert.ok(wellFormed(p), `${JSON.stringify(l.uri)} → ${JSON.stringify(p)}`);
        const local = l.uri.startsWith("/") && !l.uri.startsWith("//");
        assert.ok(local || sameOrigin(l.uri, HOST), `${JSON.stringify(l.uri)} is another origin`);
      }
    }),
    { numRuns: 3000 },
  );
  // what another origin looks like is never pushed, however it is spelled
  for (
    const u of [
      "https://evil.example:8443/x",
      "https://example.com:8443@evil.example/x",
      "https://example.com:8443\\@evil.example/x",
      "http://example.com:8443/x",
      "//example.com:8443/x",
      "javascript:alert(1)",
      "x.css",
      "/a%zz",
      "/a\u0000b",
      "https://example.com:8443//evil.example/x",
    ]
  ) assert.equal(pushPath(u, "https", HOST), null, u);
  assert.equal(pushPath("HTTPS://EXAMPLE.com:8443/a b#f", "https", HOST), "/a%20b");
});

/** Header values a client can send (tab and visible ASCII). */
const sendable = (s: string) => /^[\t\x20-\x7e]*$/.test(s) && s.trim() === s;

Deno.test({
  name: "push property: a running server pushes only well-formed same-origin paths for any Link",
  ignore: !nodeVersion(),
  sanitizeResources: false,
  async fn() {
    const pki = await makePki({ local: { dns: ["localhost"], ip: ["127.0.0.1"] } });
    const srv = await runServer({
      servers: {
        tls: {
          listen: ["127.0.0.1:0"],
          tls_connection_policies: [{}],
          routes: [{
            handle: [
              { handler: "push" },
              {
                handler: "static_response",
                headers: { Link: ["{http.request.header.X-Link}"] },
                body: "{http.request.uri}",
              },
            ],
          }],
        },
      },
    }, {
      tls: {
        certificates: {
          load_pem: [{ certificate: pki.leafs.local.cert, key: pki.leafs.local.key }],
        },
      },
    });
    try {
      const host = `localhost:${srv.ports()[0]}`;
      const spelled = (s: string) => s.replaceAll(HOST, host).replaceAll("EXAMPLE.com:8443", host);
      const fields = fc.sample(liveField.map(spelled).filter(sendable), { numRuns: 120, seed: 19 });
      const answers = await nodeH2Client(
        `https://${host}`,
        true,
        fields.map((f, i) => ({ path: `/r${i}`, headers: { "x-link": f } })),
        pki.caPem,
      );
      let pushed = 0;
      answers.forEach((a, i) => {
        assert.equal(a.status, 200, fields[i]);
        assert.equal(a.body, `/r${i}`);
        // exactly what the handler's own reading of the field gives, in order
        const expected = parseLinkHeader(fields[i]).filter((l) =>
          !("nopush" in l.params) && !/^(\/\/|https?:\/\/)/.test(l.uri)
        ).map((l) => pushPath(l.uri, "https", host));
        const stop = expected.indexOf(null);
        const want = stop < 0 ? expected : expected.slice(0, stop);
        assert.deepEqual(a.pushes.map((p) => p.promised[":path"]), want, fields[i]);
        for (const p of a.pushes) {
          pushed++;
          assert.ok(wellFormed(p.promised[":path"]), p.promised[":path"]);
          assert.equal(p.promised[":authority"], host);
          assert.equal(p.promised[":scheme"], "https");
          assert.equal(p.status, 200);
          // served through the routes like any request, with the path as promised (dot
          // segments kept, as Go serves a pushed request and as every request is received)
          assert.equal(p.body, p.promised[":path"]);
        }
      });
      assert.ok(pushed > 10, `some Link fields were pushed (${pushed})`);
    } finally {
      await srv.stop();
    }
  },
});
