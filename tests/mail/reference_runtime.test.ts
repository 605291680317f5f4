/**
 * How `reference.js`, the interactive reference's renderer, is served: the gzip file the package
 * carries (`lib/mail/scalar/standalone.js.gz`, `scripts/reference_bundle.ts`), sent as it is to
 * a client that accepts gzip and decompressed for one that does not, with an ETag (a `304` for
 * a matching `If-None-Match`) and a day of caching; read from disk, or fetched beside the module
 * when the package is served over HTTP(S) as JSR serves it; a 503 saying what is missing when it
 * cannot be read. A Deno project of its own that imports the module (as a JSR user does) needs
 * no npm package for it. The committed file is the locked `@scalar/api-reference`'s bundle,
 * unchanged. (The npm mirror's copy is tested in Node: tests/npm/mail_reference.test.mjs.)
 */
import assert from "node:assert/strict";
import { gunzipSync } from "node:zlib";
import { Hono } from "hono";
import { acceptsGzip, compressedJson, referenceRouter } from "../../lib/mail/reference_page.ts";
import { scalarPackageDir } from "../../scripts/reference_bundle.ts";

const BASE = "/api/account-docs/v2";
const BUNDLE = new URL("../../lib/mail/scalar/standalone.js.gz", import.meta.url);
const MODULE = new URL("../../lib/mail/reference_page.ts", import.meta.url).href;

const script = (headers: Record<string, string> = {}, bundle?: URL) =>
  referenceRouter(BASE, bundle).request("/assets/reference.js", { headers });

Deno.test("reference.js: gzip as stored to a client that accepts it, under 1.5 MB", async () => {
  const r = await script({ "accept-encoding": "gzip, deflate, br" });
  assert.equal(r.status, 200);
  assert.equal(r.headers.get("content-encoding"), "gzip");
  assert.match(r.headers.get("content-type") ?? "", /^text\/javascript/);
  assert.equal(r.headers.get("cache-control"), "public, max-age=86400");
  assert.equal(r.headers.get("vary"), "accept-encoding");
  const body = new Uint8Array(await r.arrayBuffer());
  assert.deepEqual(body, await Deno.readFile(BUNDLE));
  assert.ok(body.length < 1_500_000, `${body.length} bytes on the wire`);
});

Deno.test("reference.js: decompressed for a client that does not accept gzip", async () => {
  for (const encoding of [undefined, "identity", "gzip;q=0", "br"]) {
    const r = await script(encoding ? { "accept-encoding": encoding } : {});
    assert.equal(r.status, 200);
    assert.equal(r.headers.get("content-encoding"), null, encoding);
    const text = await r.text();
    assert.ok(text.length > 4_000_000 && text.includes("createApiReference"), encoding);
  }
});

Deno.test("reference.js: an ETag, and 304 for a matching If-None-Match", async () => {
  const first = await script({ "accept-encoding": "gzip" });
  await first.body?.cancel();
  const etag = first.headers.get("etag")!;
  assert.match(etag, /^"[0-9a-f]{24}"$/);
  for (const match of [etag, `W/${etag}`, `"other", ${etag}`]) {
    const again = await script({ "accept-encoding": "gzip", "if-none-match": match });
    assert.equal(again.status, 304, match);
    assert.equal(await again.text(), "");
    assert.equal(again.headers.get("etag"), etag);
  }
  const other = await script({ "accept-encoding": "gzip", "if-none-match": '"other"' });
  assert.equal(other.status, 200);
  await other.body?.cancel();
});

Deno.test("acceptsGzip: named or *, with a q-value above 0", () => {
  for (const yes of ["gzip", "GZIP", "deflate, gzip;q=0.5", "*", "br, *;q=0.1", "x-gzip"]) {
    assert.ok(acceptsGzip(yes), yes);
  }
  for (const no of [null, "", "identity", "br", "gzip;q=0", "*;q=0", "gzip;q=0, *"]) {
    assert.ok(!acceptsGzip(no), String(no));
  }
});

Deno.test("reference.js: fetched beside the module when the package is served over HTTP (as JSR does)", async () => {
  const gz = await Deno.readFile(BUNDLE);
  let asked = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    asked++;
    return new URL(req.url).pathname === "/pkg/lib/mail/scalar/standalone.js.gz"
      ? new Response(gz)
      : new Response("no", { status: 404 });
  });
  try {
    const at = `http://127.0.0.1:${server.addr.port}/pkg/lib/mail/scalar/standalone.js.gz`;
    for (let i = 0; i < 2; i++) {
      const r = await script({ "accept-encoding": "gzip" }, new URL(at));
      assert.equal(r.status, 200);
      assert.deepEqual(new Uint8Array(await r.arrayBuffer()), gz);
    }
    assert.equal(asked, 1, "read once");
    const missing = await script({}, new URL(at.replace("standalone", "gone")));
    assert.equal(missing.status, 503);
    assert.match(await missing.text(), /answered 404/);
  } finally {
    await server.shutdown();
  }
});

Deno.test("reference.js: a 503 that says what is missing when the file cannot be read", async () => {
  const r = await script({}, new URL("file:///nonexistent/standalone.js.gz"));
  assert.equal(r.status, 503);
  const text = await r.text();
  assert.match(
    text,
    /^The API reference renderer is missing from this installation of the package/,
  );
  assert.match(text, /file:\/\/\/nonexistent\/standalone\.js\.gz cannot be read/);
  assert.match(text, /The OpenAPI document is served at \/api\/account-docs\/v2\/openapi\.json\.$/);
});

Deno.test("reference.js: a Deno project of its own serves it with no npm package but hono", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-reference-runtime-" });
  try {
    await Deno.writeTextFile(
      `${dir}/deno.json`,
      JSON.stringify({ imports: { hono: "npm:hono@^4.13.19" } }),
    );
    await Deno.writeTextFile(
      `${dir}/probe.ts`,
      `import { referenceRouter } from ${JSON.stringify(MODULE)};
const r = await referenceRouter("/api/account-docs/v2").request("/assets/reference.js");
console.log(JSON.stringify({ status: r.status, length: (await r.text()).length }));
`,
    );
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--quiet", "probe.ts"],
      cwd: dir,
      env: { NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    const got = JSON.parse(new TextDecoder().decode(out.stdout).trim().split("\n").at(-1)!);
    assert.equal(got.status, 200);
    assert.ok(got.length > 4_000_000);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the carried bundle is the locked @scalar/api-reference's, unchanged, with its licence", async () => {
  const pkg = scalarPackageDir();
  const { version } = JSON.parse(await Deno.readTextFile(new URL("package.json", pkg)));
  const original = await Deno.readFile(new URL("dist/browser/standalone.js", pkg));
  assert.deepEqual(
    new Uint8Array(gunzipSync(await Deno.readFile(BUNDLE))),
    original,
    "run `deno run -A --config tests/deno.json scripts/reference_bundle.ts`",
  );
  const notice = await Deno.readTextFile(new URL("LICENSE", BUNDLE));
  assert.ok(notice.includes(`@scalar/api-reference\n${version} `), notice.slice(0, 200));
  assert.match(notice, /MIT License/);
});

Deno.test("openapi.json: gzip-compressed (made once) to a client that accepts it, plain otherwise", async () => {
  let made = 0;
  const handler = compressedJson(() => (made++, { openapi: "3.1.0", pad: "x".repeat(10_000) }));
  const app = new Hono().get("/openapi.json", handler);
  const gz = await app.request("/openapi.json", { headers: { "accept-encoding": "gzip" } });
  assert.equal(gz.headers.get("content-encoding"), "gzip");
  assert.equal(gz.headers.get("vary"), "accept-encoding");
  const bytes = new Uint8Array(await gz.arrayBuffer());
  assert.ok(bytes.length < 1_000, `${bytes.length} bytes`);
  assert.equal(JSON.parse(new TextDecoder().decode(gunzipSync(bytes))).openapi, "3.1.0");
  const plain = await app.request("/openapi.json");
  assert.equal(plain.headers.get("content-encoding"), null);
  assert.match(plain.headers.get("content-type") ?? "", /^application\/json/);
  assert.equal((await plain.json()).openapi, "3.1.0");
  assert.equal(made, 1);
});
