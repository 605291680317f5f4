/**
 * `http.handlers.cache` against a real origin process (tests/server/fixtures/origin.ts), one
 * behaviour per case: RFC 9111 (freshness, validation, Vary, storing rules, request
 * directives, invalidation), RFC 5861 (stale-while-revalidate, stale-if-error), RFC 9211
 * (`Cache-Status`), and the options of caddyserver/cache-handler (README.md "What does these
 * directives mean?", configuration.go) and Souin it follows (pkg/middleware/middleware.go
 * Store/Upstream/Revalidate, context/key.go, context/mode.go). Stale answers are made without
 * waiting: the origin sends an `Age` past the `max-age`.
 */
import assert from "node:assert/strict";
import { serve, startHttp } from "./harness.ts";
import { type Origin, startOrigin } from "../fixtures/origin_process.ts";
import { startServer } from "../../../lib/server/embed.ts";
import { freePort } from "../fixtures/helpers.ts";
import { decodeCache, decodeCacheApp } from "../../../lib/server/http/handlers/cache/config.ts";

// deno-lint-ignore no-explicit-any
type J = Record<string, any>;

interface Got {
  status: number;
  headers: Headers;
  body: string;
}

async function get(url: string, init: RequestInit = {}): Promise<Got> {
  const r = await fetch(url, init);
  return { status: r.status, headers: r.headers, body: await r.text() };
}

/** A path with the origin's query parameters. */
function path(p: string, q: Record<string, string | string[]> = {}): string {
  const s = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) for (const x of [v].flat()) s.append(k, x);
  const t = s.toString();
  return t ? `${p}?${t}` : p;
}

const status = (g: Got) => g.headers.get("cache-status") ?? "";

/** An origin and a server running `cache` (with `cfg`) in front of a proxy to it. */
async function withCache(
  cfg: J,
  fn: (base: string, origin: Origin, srv: Awaited<ReturnType<typeof serve>>) => Promise<void>,
  before: J[] = [],
): Promise<void> {
  const origin = await startOrigin();
  const srv = await serve([{
    handle: [
      ...before,
      { handler: "cache", ...cfg },
      { handler: "reverse_proxy", upstreams: [{ dial: origin.dial }] },
    ],
  }]);
  try {
    await fn(srv.url(), origin, srv);
  } finally {
    await srv.stop();
    await origin.stop();
  }
}

/** A unique path, so tests sharing the process-wide memory storage never meet. */
let n = 0;
const unique = (name: string) => `/${name}-${Date.now().toString(36)}-${n++}`;

Deno.test("cache: a fresh stored answer is a hit (max-age), with Age and Cache-Status", async () => {
  await withCache({}, async (base, origin) => {
    const p = path(unique("fresh"), { cc: "max-age=60" });
    const a = await get(base + p);
    assert.equal(a.status, 200);
    assert.match(a.body, /^n=1 /);
    assert.match(
      status(a),
      /^Gatehouse; fwd=uri-miss; stored; key="GET-http-127\.0\.0\.1:\d+-\/fresh/,
    );
    const b = await get(base + p);
    assert.equal(b.body, a.body);
    assert.match(status(b), /^Gatehouse; hit; ttl=(59|60); key="/);
    assert.equal(b.headers.get("age"), "0");
    assert.equal(b.headers.get("cache-control"), "max-age=60");
    assert.equal(await origin.count(p), 1);
  });
});

Deno.test("cache: freshness from s-maxage over max-age, from Expires - Date, less the upstream's Age (RFC 9111 §4.2)", async () => {
  await withCache({}, async (base, origin) => {
    const ttl = async (q: Record<string, string>) => {
      const p = path(unique("life"), q);
      await get(base + p);
      const hit = await get(base + p);
      assert.equal(await origin.count(p), 1, JSON.stringify(q));
      return Number(/ttl=(-?\d+)/.exec(status(hit))?.[1]);
    };
    assert.ok([299, 300].includes(await ttl({ cc: "max-age=60, s-maxage=300" })));
    const date = new Date(Math.floor(Date.now() / 1000) * 1000);
    const expires = new Date(date.getTime() + 200_000);
    assert.ok(
      [198, 199, 200].includes(
        await ttl({ date: date.toUTCString(), expires: expires.toUTCString() }),
      ),
    );
    // an answer 50 s old with a 60 s lifetime has about 10 s left, and says so in Age
    const p = path(unique("aged"), { cc: "max-age=60", age: "50" });
    await get(base + p);
    const hit = await get(base + p);
    assert.ok(Number(hit.headers.get("age")) >= 50);
    assert.ok([9, 10].includes(Number(/ttl=(-?\d+)/.exec(status(hit))?.[1])), status(hit));
  });
});

Deno.test("cache: without Cache-Control an answer is fresh for ttl; default_cache_control sets one", async () => {
  await withCache({ ttl: "45s" }, async (base, origin) => {
    const p = path(unique("ttl"));
    await get(base + p);
    const hit = await get(base + p);
    assert.match(status(hit), /hit; ttl=(44|45)/);
    // statuses that are not heuristically cacheable need explicit freshness
    const r = path(unique("302"), { status: "302", h: "location:/x" });
    await get(base + r, { redirect: "manual" });
    const again = await get(base + r, { redirect: "manual" });
    assert.match(status(again), /detail=UNCACHEABLE-STATUS-CODE/);
    assert.equal(await origin.count(r), 2);
  });
  await withCache({ default_cache_control: "no-store" }, async (base, origin) => {
    const p = path(unique("dcc"));
    const a = await get(base + p);
    assert.equal(a.headers.get("cache-control"), "no-store");
    await get(base + p);
    assert.equal(await origin.count(p), 2);
  });
});

Deno.test("cache: no-store and private answers are not stored; no-cache ones are, and revalidated each time", async () => {
  await withCache({}, async (base, origin) => {
    for (const cc of ["no-store", "private", "max-age=60, private"]) {
      const p = path(unique("nostore"), { cc });
      const a = await get(base + p);
      assert.match(status(a), /detail=(NO-STORE-DIRECTIVE|PRIVATE-OR-AUTHENTICATED-RESPONSE)/, cc);
      await get(base + p);
      assert.equal(await origin.count(p), 2, cc);
    }
    const p = path(unique("nocache"), { cc: "no-cache", etag: '"v1"' });
    await get(base + p);
    const b = await get(base + p);
    assert.match(b.body, /^n=1 /, "the 304 kept the stored body");
    assert.match(status(b), /fwd=stale; fwd-status=304/);
    assert.equal((await origin.seen(p))?.["if-none-match"], '"v1"');
    assert.equal(await origin.count(p), 2);
    // private="Set-Cookie" stores the answer without the field
    const q = path(unique("qualified"), { cc: 'max-age=60, private="Set-Cookie"', cookie: "1" });
    const first = await get(base + q);
    assert.ok(first.headers.get("set-cookie"));
    const hit = await get(base + q);
    assert.match(status(hit), /hit/);
    assert.equal(hit.headers.get("set-cookie"), null);
  });
});

Deno.test("cache: a stale answer is revalidated with its ETag or Last-Modified; a 304 makes it fresh again (RFC 9111 §4.3)", async () => {
  await withCache({}, async (base, origin) => {
    const p = path(unique("etag"), { cc: "max-age=60", age: "61", etag: '"abc"' });
    const a = await get(base + p);
    assert.match(a.body, /^n=1 /);
    const b = await get(base + p);
    assert.match(b.body, /^n=1 /);
    assert.match(status(b), /fwd=stale; fwd-status=304; ttl=(59|60)/);
    assert.equal((await origin.seen(p))?.["if-none-match"], '"abc"');
    // refreshed by the 304: a hit now
    const c = await get(base + p);
    assert.match(status(c), /^Gatehouse; hit; ttl=(59|60)/);
    assert.equal(await origin.count(p), 2);
    const lm = "Tue, 01 Dec 2026 10:00:00 GMT";
    const q = path(unique("lm"), { cc: "max-age=60", age: "61", lm });
    await get(base + q);
    const d = await get(base + q);
    assert.match(status(d), /fwd-status=304/);
    assert.equal((await origin.seen(q))?.["if-modified-since"], lm);
    // a changed answer (no validator matches) replaces the stored one
    const r = path(unique("changed"), { cc: "max-age=60", age: "61" });
    await get(base + r);
    const e = await get(base + r);
    assert.match(e.body, /^n=2 /);
    assert.match(status(e), /fwd=stale; fwd-status=200; stored/);
  });
});

Deno.test("cache: clients' conditional requests get 304 from a stored answer (RFC 9110 §13.1)", async () => {
  await withCache({}, async (base, origin) => {
    const lm = "Tue, 01 Dec 2026 10:00:00 GMT";
    const p = path(unique("cond"), { cc: "max-age=60", etag: 'W/"t1"', lm });
    await get(base + p);
    const inm = await get(base + p, { headers: { "if-none-match": '"x", "t1"' } });
    assert.equal(inm.status, 304);
    assert.equal(inm.headers.get("etag"), 'W/"t1"');
    assert.equal(inm.headers.get("content-length"), null);
    const ims = await get(base + p, { headers: { "if-modified-since": lm } });
    assert.equal(ims.status, 304);
    const older = await get(base + p, {
      headers: { "if-modified-since": "Mon, 30 Nov 2026 10:00:00 GMT" },
    });
    assert.equal(older.status, 200);
    assert.equal(await origin.count(p), 1);
  });
});

Deno.test("cache: Vary keeps one answer per variant; Vary: * is not stored", async () => {
  await withCache({}, async (base, origin) => {
    const p = path(unique("vary"), { cc: "max-age=60", vary: "Accept-Language" });
    const en = { headers: { "accept-language": "en" } };
    const fr = { headers: { "accept-language": "fr" } };
    assert.match((await get(base + p, en)).body, /^n=1 /);
    assert.match((await get(base + p, fr)).body, /^n=2 /);
    assert.match((await get(base + p, en)).body, /^n=1 /);
    const frHit = await get(base + p, fr);
    assert.match(frHit.body, /^n=2 /);
    assert.match(status(frHit), /hit/);
    assert.equal(await origin.count(p), 2);
    const star = path(unique("star"), { cc: "max-age=60", vary: "*" });
    assert.match(status(await get(base + star)), /detail=UPSTREAM-VARY-STAR/);
    await get(base + star);
    assert.equal(await origin.count(star), 2);
  });
  // key.disable_vary: one answer whatever the fields
  await withCache({ key: { disable_vary: true } }, async (base, origin) => {
    const p = path(unique("novary"), { cc: "max-age=60", vary: "Accept-Language" });
    await get(base + p, { headers: { "accept-language": "en" } });
    assert.match((await get(base + p, { headers: { "accept-language": "fr" } })).body, /^n=1 /);
    assert.equal(await origin.count(p), 1);
  });
});

Deno.test("cache: stale-while-revalidate serves the stale answer at once and revalidates in the background (RFC 5861 §3)", async () => {
  await withCache({}, async (base, origin) => {
    const p = path(unique("swr"), {
      cc: "max-age=60, stale-while-revalidate=600",
      age: "61",
      etag: '"s"',
    });
    await get(base + p);
    const stale = await get(base + p);
    assert.match(stale.body, /^n=1 /);
    assert.match(status(stale), /hit; ttl=-\d+; key=.*detail=STALE-WHILE-REVALIDATE/);
    // the background request reaches the origin, gets 304, and the answer is fresh again
    const deadline = Date.now() + 10_000;
    let fresh: Got;
    do {
      fresh = await get(base + p);
    } while (!/^Gatehouse; hit; ttl=\d+/.test(status(fresh)) && Date.now() < deadline);
    assert.match(status(fresh), /^Gatehouse; hit; ttl=(59|60)/);
    assert.equal(await origin.count(p), 2);
    assert.equal((await origin.seen(p))?.["if-none-match"], '"s"');
  });
});

Deno.test("cache: stale-if-error, the request's stale-if-error and the stale option serve a stale answer when the upstream fails (RFC 5861 §4)", async () => {
  await withCache({}, async (base, origin) => {
    const p = path(unique("sie"), { cc: "max-age=60, stale-if-error=600", age: "61" });
    await get(base + p);
    await origin.fail(p, 503);
    const r = await get(base + p);
    assert.equal(r.status, 200);
    assert.match(r.body, /^n=1 /);
    assert.match(status(r), /fwd=stale; fwd-status=503; ttl=-\d+; .*detail=STALE-IF-ERROR/);
    // without a permission the 503 goes through
    const q = path(unique("nosie"), { cc: "max-age=60", age: "61" });
    await get(base + q);
    await origin.fail(q, 503);
    const s = await get(base + q);
    assert.equal(s.status, 503);
    assert.match(status(s), /detail=UNCACHEABLE-STATUS-CODE/);
    // the request may give the permission itself
    const t = await get(base + q, { headers: { "cache-control": "stale-if-error=600" } });
    assert.equal(t.status, 200);
    assert.match(t.body, /^n=1 /);
  });
  // the configured stale window, and an upstream that is gone altogether
  await withCache({ stale: "1h" }, async (base, origin) => {
    const p = path(unique("stale-opt"), { cc: "max-age=60", age: "61" });
    const m = path(unique("must"), { cc: "max-age=60, must-revalidate", age: "61" });
    await get(base + p);
    await get(base + m);
    await origin.stop();
    const r = await get(base + p);
    assert.equal(r.status, 200);
    assert.match(r.body, /^n=1 /);
    assert.match(status(r), /fwd=stale; fwd-status=502/);
    // must-revalidate forbids the configured window
    assert.equal((await get(base + m)).status, 502);
  });
});

Deno.test("cache: answers with Set-Cookie and answers to Authorization requests are not stored unless allowed (RFC 9111 §3.5)", async () => {
  await withCache({}, async (base, origin) => {
    const c = path(unique("cookie"), { cc: "max-age=60", cookie: "1" });
    assert.match(status(await get(base + c)), /detail=SET-COOKIE/);
    await get(base + c);
    assert.equal(await origin.count(c), 2);
    const auth = { headers: { authorization: "Bearer alice" } };
    const a = path(unique("auth"), { cc: "max-age=60" });
    assert.match(status(await get(base + a, auth)), /detail=PRIVATE-OR-AUTHENTICATED-RESPONSE/);
    await get(base + a, auth);
    assert.equal(await origin.count(a), 2);
    // public (or s-maxage, must-revalidate) says it may be shared
    const pub = path(unique("public"), { cc: "max-age=60, public" });
    await get(base + pub, auth);
    assert.match(status(await get(base + pub, auth)), /hit/);
  });
  // a key that has the credentials tells them apart
  await withCache({ key: { headers: ["Authorization"] } }, async (base, origin) => {
    const a = path(unique("keyed"), { cc: "max-age=60" });
    const alice = await get(base + a, { headers: { authorization: "Bearer alice" } });
    const bob = await get(base + a, { headers: { authorization: "Bearer bob" } });
    assert.notEqual(alice.body, bob.body);
    assert.equal(
      (await get(base + a, { headers: { authorization: "Bearer alice" } })).body,
      alice.body,
    );
    assert.equal(await origin.count(a), 2);
  });
});

Deno.test("cache: request directives: no-cache revalidates, max-age and min-fresh refuse older answers, max-stale accepts stale ones, only-if-cached gets 504", async () => {
  await withCache({}, async (base, origin) => {
    const p = path(unique("req"), { cc: "max-age=60", etag: '"r"' });
    await get(base + p);
    const nc = await get(base + p, { headers: { "cache-control": "no-cache" } });
    assert.match(status(nc), /fwd=request; fwd-status=304/);
    const ma = await get(base + p, { headers: { "cache-control": "max-age=0" } });
    assert.match(status(ma), /fwd=stale; fwd-status=304/);
    const mf = await get(base + p, { headers: { "cache-control": "min-fresh=120" } });
    assert.match(status(mf), /fwd-status=304/);
    assert.equal(await origin.count(p), 4);
    const s = path(unique("maxstale"), { cc: "max-age=60", age: "70" });
    await get(base + s);
    const ms = await get(base + s, { headers: { "cache-control": "max-stale=30" } });
    assert.match(status(ms), /^Gatehouse; hit; ttl=-\d+/);
    assert.equal(await origin.count(s), 1);
    const none = await get(base + path(unique("oic")), {
      headers: { "cache-control": "only-if-cached" },
    });
    assert.equal(none.status, 504);
    assert.match(status(none), /detail=ONLY-IF-CACHED/);
    // request no-store: not stored
    const ns = path(unique("reqnostore"), { cc: "max-age=60" });
    await get(base + ns, { headers: { "cache-control": "no-store" } });
    await get(base + ns);
    assert.equal(await origin.count(ns), 2);
  });
});

Deno.test("cache: mode bypass_request ignores the request's directives, bypass_response the answer's (Souin context/mode.go)", async () => {
  await withCache({ mode: "bypass_request" }, async (base, origin) => {
    const p = path(unique("bypreq"), { cc: "max-age=60" });
    await get(base + p);
    const r = await get(base + p, { headers: { "cache-control": "no-cache" } });
    assert.match(status(r), /hit/);
    assert.equal(await origin.count(p), 1);
  });
  await withCache({ mode: "bypass_response", ttl: "30s" }, async (base, origin) => {
    const p = path(unique("byprsp"), { cc: "no-store" });
    await get(base + p);
    const r = await get(base + p);
    assert.match(status(r), /hit; ttl=(29|30)/);
    assert.equal(await origin.count(p), 1);
  });
});

Deno.test("cache: each mode (README: mode bypass, bypass_request, bypass_response, strict; Souin context/mode.go) against the same request and answer directives", async () => {
  // what Souin's ModeContext makes of each: Bypass_request ignores the request's
  // Cache-Control, Bypass_response the answer's, bypass both, strict (the default) neither
  const modes = {
    strict: { request: true, response: true },
    bypass: { request: false, response: false },
    bypass_request: { request: false, response: true },
    bypass_response: { request: true, response: false },
  };
  for (const [mode, honours] of Object.entries(modes)) {
    await withCache({ mode, ttl: "30s" }, async (base, origin) => {
      // the request's no-cache: revalidated upstream, or a hit
      const nc = path(unique(`nc-${mode}`), { cc: "max-age=60" });
      await get(base + nc);
      const r1 = await get(base + nc, { headers: { "cache-control": "no-cache" } });
      assert.equal(await origin.count(nc), honours.request ? 2 : 1, `${mode}: request no-cache`);
      assert.match(status(r1), honours.request ? /fwd=request/ : /^Gatehouse; hit; ttl=/, mode);
      // the request's no-store: the answer is not stored, or it is
      const ns = path(unique(`ns-${mode}`), { cc: "max-age=60" });
      await get(base + ns, { headers: { "cache-control": "no-store" } });
      const r2 = await get(base + ns);
      assert.equal(await origin.count(ns), honours.request ? 2 : 1, `${mode}: request no-store`);
      // (stored for the answer's max-age, or for ttl when the answer's directives are not read)
      const ttl = honours.response
        ? /^Gatehouse; hit; ttl=(59|60)/
        : /^Gatehouse; hit; ttl=(29|30)/;
      if (!honours.request) assert.match(status(r2), ttl, mode);
      // the answer's no-store: not stored, or stored for ttl
      const as = path(unique(`as-${mode}`), { cc: "no-store" });
      const first = await get(base + as);
      const r3 = await get(base + as);
      assert.equal(await origin.count(as), honours.response ? 2 : 1, `${mode}: answer no-store`);
      if (honours.response) assert.match(status(first), /detail=NO-STORE-DIRECTIVE/, mode);
      else assert.match(status(r3), /^Gatehouse; hit; ttl=(29|30)/, mode);
      // the answer's no-cache: revalidated on every use, or a hit
      const an = path(unique(`an-${mode}`), { cc: "no-cache", etag: '"n"' });
      await get(base + an);
      const r4 = await get(base + an);
      assert.equal(await origin.count(an), honours.response ? 2 : 1, `${mode}: answer no-cache`);
      assert.match(status(r4), honours.response ? /fwd=stale; fwd-status=304/ : /hit/, mode);
    });
  }
});

Deno.test("cache: methods: HEAD answered from a stored GET; POST cached when allowed, its body in the key; unsafe methods invalidate (RFC 9111 §4.4)", async () => {
  await withCache({ allowed_http_verbs: ["GET", "HEAD", "POST"] }, async (base, origin) => {
    const p = path(unique("methods"), { cc: "max-age=60" });
    const g = await get(base + p);
    const h = await fetch(base + p, { method: "HEAD" });
    await h.body?.cancel();
    assert.equal(h.status, 200);
    assert.match(h.headers.get("cache-status") ?? "", /hit/);
    assert.equal(h.headers.get("content-length"), String(g.body.length));
    const post = (body: string) => get(base + p, { method: "POST", body });
    const q1 = await post('{"q":1}');
    const q2 = await post('{"q":2}');
    assert.notEqual(q1.body, q2.body);
    assert.match(status(await post('{"q":1}')), /hit/);
    assert.equal(await origin.count(p), 3);
  });
  // without the method in the key, a HEAD answer is not stored where a GET would find it
  await withCache({ key: { disable_method: true } }, async (base) => {
    const p = path(unique("headfirst"), { cc: "max-age=60" });
    const h = await fetch(base + p, { method: "HEAD" });
    await h.body?.cancel();
    assert.match(h.headers.get("cache-status") ?? "", /detail=HEAD-REQUEST/);
    const g = await get(base + p);
    assert.match(g.body, /^n=2 /);
    assert.match(status(await get(base + p)), /hit/);
  });
  await withCache({}, async (base, origin) => {
    const p = path(unique("invalidate"), { cc: "max-age=60" });
    await get(base + p);
    const del = await get(base + p, { method: "DELETE" });
    assert.match(status(del), /fwd=method/);
    const again = await get(base + p);
    assert.match(status(again), /fwd=uri-miss/);
    assert.equal(await origin.count(p), 3);
  });
});

Deno.test("cache: a Range request is answered from a stored answer with 206; a miss goes through unstored", async () => {
  await withCache({}, async (base, origin) => {
    const p = path(unique("range"), { cc: "max-age=60", size: "1000" });
    const miss = await get(base + p, { headers: { range: "bytes=0-9" } });
    assert.match(status(miss), /detail=RANGE-REQUEST/);
    await get(base + p);
    const r = await get(base + p, { headers: { range: "bytes=10-19" } });
    assert.equal(r.status, 206);
    assert.equal(r.headers.get("content-range"), "bytes 10-19/1000");
    assert.equal(r.body, "x".repeat(10));
    const bad = await get(base + p, { headers: { range: "bytes=5000-" } });
    assert.equal(bad.status, 416);
    assert.equal(await origin.count(p), 2);
  });
});

Deno.test("cache: a body larger than max_cacheable_body_bytes streams through whole and unstored", async () => {
  await withCache({ max_cacheable_body_bytes: 100_000 }, async (base, origin) => {
    for (const chunked of [false, true]) {
      const q: Record<string, string> = { cc: "max-age=60", size: String(1_000_000) };
      if (chunked) q.chunked = "1";
      const p = path(unique("big"), q);
      const a = await get(base + p);
      assert.equal(a.body.length, 1_000_000);
      if (!chunked) assert.match(status(a), /detail=UPSTREAM-RESPONSE-TOO-LARGE/);
      const b = await get(base + p);
      assert.equal(b.body.length, 1_000_000);
      assert.equal(await origin.count(p), 2, `chunked: ${chunked}`);
    }
    // one within the limit, without a length, is stored once it ended
    const p = path(unique("small"), { cc: "max-age=60", size: "50000", chunked: "1" });
    await get(base + p);
    assert.match(status(await get(base + p)), /hit/);
  });
});

Deno.test("cache: keys (Souin's form): parts left out, request fields added, a template, cache_keys by regular expression, hide and hash", async () => {
  await withCache({
    key: { disable_query: true, hide: true },
    cache_keys: {
      "^/tpl": { template: "tpl-{http.request.uri.path}" },
      "^/hashed": { hash: true },
    },
    headers: ["X-Tenant"],
  }, async (base, origin) => {
    const p = unique("noquery");
    await get(base + path(p, { cc: "max-age=60", v: "1" }), { headers: { "x-tenant": "a" } });
    const hit = await get(base + path(p, { cc: "max-age=60", v: "2" }), {
      headers: { "x-tenant": "a" },
    });
    assert.match(hit.body, /v=1/, "the query is not in the key");
    assert.doesNotMatch(status(hit), /key=/, "hide leaves the key out");
    const other = await get(base + path(p, { cc: "max-age=60", v: "2" }), {
      headers: { "x-tenant": "b" },
    });
    assert.match(other.body, /v=2/, "X-Tenant is in the key");
    const t = await get(base + path("/tpl" + p, { cc: "max-age=60" }));
    assert.match(status(t), /key="tpl-\/tpl\/noquery/);
    const h = await get(base + path("/hashed" + p, { cc: "max-age=60" }));
    assert.match(status(h), /key="\d+"/);
    void origin;
  });
});

Deno.test("cache: key parts left out and sort_query; disable_body shares an entry among bodies", async () => {
  await withCache({
    key: { disable_scheme: true, disable_method: true, disable_host: true, sort_query: true },
  }, async (base, origin) => {
    const p = unique("parts");
    const a = await get(base + `${p}?cc=max-age%3D60&b=2&a=1`);
    assert.match(status(a), new RegExp(`key="${p}\\?a=1&b=2&cc=max-age%3D60"`));
    const b = await get(base + `${p}?a=1&cc=max-age%3D60&b=2`);
    assert.match(status(b), /hit/, "the sorted query is the same key");
    assert.equal(await origin.count(`${p}?cc=max-age%3D60&b=2&a=1`), 1);
  });
  await withCache(
    { allowed_http_verbs: ["POST"], key: { disable_body: true } },
    async (base, origin) => {
      const p = path(unique("nobody"), { cc: "max-age=60" });
      await get(base + p, { method: "POST", body: "one" });
      assert.match(status(await get(base + p, { method: "POST", body: "two" })), /hit/);
      assert.equal(await origin.count(p), 1);
    },
  );
});

Deno.test("cache: allowed_additional_status_codes get the default lifetime; regex.exclude goes through", async () => {
  await withCache({ allowed_additional_status_codes: [202] }, async (base, origin) => {
    const p = path(unique("202"), { status: "202" });
    await get(base + p);
    assert.match(status(await get(base + p)), /hit/);
    assert.equal(await origin.count(p), 1);
  });
  await withCache({}, async (base, origin) => {
    const p = path(unique("202"), { status: "202" });
    await get(base + p);
    await get(base + p);
    assert.equal(await origin.count(p), 2);
  });
  await withCache({ regex: { exclude: "^/private/" } }, async (base, origin) => {
    const p = path("/private" + unique("excluded"), { cc: "max-age=60" });
    assert.match(status(await get(base + p)), /fwd=bypass; detail=EXCLUDED-REQUEST-URI/);
    await get(base + p);
    assert.equal(await origin.count(p), 2);
  });
});

Deno.test("cache: purge through the admin API: by URL, key, regular expression, or everything", async () => {
  await withCache({}, async (base, origin, srv) => {
    const admin = (await srv.admin("/cache/")).url.replace(/\/cache\/$/, "");
    const purge = async (body: unknown) => {
      const r = await fetch(`${admin}/cache/purge`, { method: "POST", body: JSON.stringify(body) });
      return { status: r.status, body: await r.json() };
    };
    const a = path(unique("pa"), { cc: "max-age=60" });
    const b = path(unique("pb"), { cc: "max-age=60" });
    const c = path(unique("pc"), { cc: "max-age=60" });
    for (const p of [a, b, c]) await get(base + p);
    const stats = await (await fetch(`${admin}/cache/`)).json();
    assert.ok(stats[0].entries >= 3 && stats[0].kind === "memory");
    const entries: J[] = await (await fetch(`${admin}/cache/entries`)).json();
    const ea = entries.find((e) => e.url === base + a)!;
    assert.equal(ea.method, "GET");
    assert.deepEqual(await purge({ urls: [base + a] }), { status: 200, body: { purged: 1 } });
    assert.match(status(await get(base + a)), /fwd=uri-miss/);
    const eb = entries.find((e) => e.url === base + b)!;
    assert.deepEqual((await purge({ keys: [eb.key] })).body, { purged: 1 });
    assert.match(status(await get(base + b)), /fwd=uri-miss/);
    assert.equal((await purge({ regex: "/pc-" })).body.purged, 1);
    assert.match(status(await get(base + c)), /fwd=uri-miss/);
    assert.ok((await purge({ all: true })).body.purged >= 3);
    assert.equal((await purge({ nothing: 1 })).status, 400);
    assert.equal((await purge({ regex: "(" })).status, 400);
    assert.equal((await fetch(`${admin}/cache/purge`)).status, 405);
    for (const p of [a, b, c]) assert.equal(await origin.count(p), 2);
  });
});

Deno.test("cache: headers set before the cache and by the handlers after it are kept with the stored answer", async () => {
  await withCache({}, async (base) => {
    const p = path(unique("fields"), { cc: "max-age=60" });
    await get(base + p);
    const hit = await get(base + p);
    assert.match(status(hit), /hit/);
    assert.equal(hit.headers.get("x-before"), "1");
  }, [{ handler: "headers", response: { set: { "X-Before": ["1"] } } }]);
});

Deno.test("cache: the stored answers outlive a config reload", async () => {
  const origin = await startOrigin();
  const cfg = (body: string) => ({
    servers: {
      srv0: {
        listen: ["127.0.0.1:0"],
        routes: [
          { match: [{ path: ["/other"] }], handle: [{ handler: "static_response", body }] },
          {
            handle: [
              { handler: "cache" },
              { handler: "reverse_proxy", upstreams: [{ dial: origin.dial }] },
            ],
          },
        ],
      },
    },
  });
  const srv = await startHttp(cfg("a"));
  try {
    const p = path(unique("reload"), { cc: "max-age=60" });
    await get(srv.url() + p);
    await srv.reload(cfg("b"));
    assert.equal((await get(srv.url() + "/other")).body, "b");
    assert.match(status(await get(srv.url() + p)), /hit/);
    assert.equal(await origin.count(p), 1);
  } finally {
    await srv.stop();
    await origin.stop();
  }
});

Deno.test("cache: the cache app (global option) gives every handler its defaults; the handler's own win", async () => {
  const origin = await startOrigin();
  const port = freePort();
  const server = await startServer({
    config: {
      admin: { listen: `127.0.0.1:${freePort()}` },
      apps: {
        cache: { ttl: "300s", cache_name: "Edge" },
        http: {
          servers: {
            srv0: {
              listen: [`127.0.0.1:${port}`],
              automatic_https: { disable: true },
              routes: [
                {
                  match: [{ path: ["/own/*"] }],
                  handle: [
                    { handler: "cache", ttl: "10s" },
                    { handler: "reverse_proxy", upstreams: [{ dial: origin.dial }] },
                  ],
                  terminal: true,
                },
                {
                  handle: [
                    { handler: "cache" },
                    { handler: "reverse_proxy", upstreams: [{ dial: origin.dial }] },
                  ],
                },
              ],
            },
          },
        },
      },
    },
  });
  try {
    const base = `http://127.0.0.1:${port}`;
    const d = path(unique("appttl"));
    await get(base + d);
    assert.match(status(await get(base + d)), /^Edge; hit; ttl=(299|300)/);
    const o = path("/own" + unique("own"));
    await get(base + o);
    assert.match(status(await get(base + o)), /^Edge; hit; ttl=(9|10)/);
  } finally {
    await server.stop();
    await origin.stop();
  }
});

Deno.test("cache config: refusals name the field and say why", () => {
  const bad: [J, RegExp][] = [
    [{ redis: { url: "127.0.0.1:6379" } }, /redis: the redis storage is not available/],
    [{ badger: { path: "/x" } }, /badger storage is not available/],
    [{ timeout: { backend: "10s" } }, /timeout: timeouts are the upstream's here/],
    [{ log_level: "debug" }, /log levels are set in the logging config/],
    [{ Configuration: { DefaultCache: { ttl: "1s" } } }, /internal Configuration tree/],
    [{ mode: "loose" }, /mode: must be one of strict, bypass/],
    [{ ttl: "soon" }, /ttl: invalid duration/],
    [{ stale: "-1s" }, /stale: must be greater than zero/],
    [{ regex: { exclude: "(" } }, /invalid regular expression/],
    [{ cache_keys: { "[": {} } }, /invalid regular expression/],
    [{ key: { disable_everything: true } }, /unknown field "disable_everything"/],
    [{ allowed_http_verbs: ["GET", "NOT A METHOD"] }, /is no method/],
    [{ allowed_additional_status_codes: [206] }, /206 answers are never stored/],
    [{ max_cacheable_body_bytes: -5 }, /at least 1/],
    [{ otter: { configuration: { size: "many" } } }, /size: must be a whole number/],
    [{ otter: { configuration: { max_bytes: "lots" } } }, /max_bytes: must be a size in bytes/],
    [{ otter: { path: "/x" } }, /in memory and has no path/],
    [{ simplefs: { url: "127.0.0.1:1" } }, /simplefs storage has no url/],
    [{ simplefs: { configuration: { directory_size: "1 parsec" } } }, /directory_size/],
    [{ otter: { configuration: {} }, simplefs: { path: "/x" } }, /one storage per cache/],
    [{ storers: ["redis"] }, /redis storage is not available/],
    [{ storers: ["simplefs"] }, /not the storage configured here \(otter\)/],
    [{ cache_name: 'a"b' }, /without quotes/],
    [{ bogus: 1 }, /unknown field "bogus"/],
  ];
  for (const storage of ["badger", "etcd", "nats", "nuts", "olric", "redis"]) {
    bad.push([{ [storage]: { url: "x" } }, new RegExp(`the ${storage} storage is not available`)]);
  }
  bad.push([{ cdn: { provider: "fastly" } }, /cdn: CDN purging is not available/]);
  bad.push([{ distributed: true }, /distributed: no distributed storage is available/]);
  for (const [cfg, re] of bad) {
    assert.throws(() => decodeCache({ handler: "cache", ...cfg }), re, JSON.stringify(cfg));
  }
  assert.throws(
    () => decodeCacheApp({ api: { basepath: "/x" } }),
    /the cache API is the admin API/,
  );
  // the empty providers the plugin's adapter writes are no refusal
  assert.deepEqual(
    decodeCache({ handler: "cache", redis: { configuration: null, path: "", url: "" } }),
    { handler: "cache" },
  );
});
