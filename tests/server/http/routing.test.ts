import assert from "node:assert/strict";
import { serve } from "./harness.ts";
import { raw } from "./raw.ts";

Deno.test("static_response with host, path and method matchers", async () => {
  const srv = await serve([
    {
      match: [{ host: ["example.com"], path: ["/hello"] }],
      handle: [{ handler: "static_response", body: "Hello, world!" }],
      terminal: true,
    },
    {
      match: [{ method: ["POST"] }, { path: ["/api/*"] }],
      handle: [{ handler: "static_response", status_code: 201, body: '{"ok":true}' }],
    },
  ]);
  try {
    const base = srv.url();
    const r1 = await raw(base, "GET", "/hello", { host: "Example.COM:8080" });
    assert.equal(r1.status, 200);
    assert.equal(r1.headers.get("content-type"), "text/plain; charset=utf-8");
    assert.equal(r1.headers.get("server"), "Gatehouse");
    assert.equal(r1.text, "Hello, world!");
    const r2 = await raw(base, "GET", "/hello", { host: "other.com" });
    assert.equal(r2.status, 200);
    assert.equal(r2.text, "");
    let res = await fetch(`${base}/api/x`);
    assert.equal(res.status, 201);
    assert.equal(res.headers.get("content-type"), "application/json");
    assert.equal(await res.text(), '{"ok":true}');
    res = await fetch(`${base}/x`, { method: "POST" });
    assert.equal(res.status, 201);
    await res.body?.cancel();
  } finally {
    await srv.stop();
  }
});
