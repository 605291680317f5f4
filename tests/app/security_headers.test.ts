/**
 * Security headers on every HTML page of the app: every GET route of the whole app (listed
 * from the router, so a new page is covered when it is added) is fetched signed in and signed
 * out; each HTML answer carries the CSP (no inline script, no framing), `nosniff`,
 * `Referrer-Policy` and `X-Frame-Options`. Refusals (403, 413, 421) carry them too.
 */
import assert from "node:assert/strict";
import type { Hono } from "hono";
import { createApp } from "../../app/main.ts";
import { loadAppEnv } from "../../app/env.ts";
import { Browser, consent, throughBroker } from "./_relay_harness.ts";
import { withHost } from "./_raw.ts";

function getRoutes(app: Hono): string[] {
  const out = new Set<string>();
  for (const r of app.routes) {
    if (r.method !== "GET" && r.method !== "ALL") continue;
    if (r.path === "*" || r.path === "/*") continue;
    out.add(
      r.path
        .replace(/:slash\{[^}]*\}/g, "/")
        .replace(/:provider(\{[^}]*\})?/g, "google")
        .replace(/:tenant(\{[^}]*\})?/g, "common")
        .replace(/:[a-z_]+(\{[^}]*\})?/g, "1")
        .replace(/\/\*$/, "/")
        .replace(/\/\/+/g, "/"),
    );
  }
  return [...out];
}

function assertSecure(where: string, headers: Headers): void {
  const csp = headers.get("content-security-policy") ?? "";
  assert.match(csp, /frame-ancestors 'none'/, where);
  assert.match(csp, /default-src 'self'/, where);
  const script = csp.split(";").map((d) => d.trim()).find((d) => d.startsWith("script-src"));
  assert.equal(script, "script-src 'self'", `${where}: ${csp}`);
  assert.equal(headers.get("x-content-type-options"), "nosniff", where);
  assert.equal(headers.get("referrer-policy"), "same-origin", where);
  assert.equal(headers.get("x-frame-options"), "DENY", where);
}

Deno.test("security headers: every HTML page of the app, signed in and out, and the refusals", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-headers-" });
  const app = await createApp(loadAppEnv({ DATABASE_URL: `file:${dir}/app.db` }));
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, app.fetch);
  const origin = `http://127.0.0.1:${server.addr.port}`;
  try {
    const anonymous = new Browser(origin);
    const signedIn = new Browser(origin);
    const start = await signedIn.get("/relay-demo/api/auth/relay/start?provider=google");
    await signedIn.get(await throughBroker(signedIn, start.location!, "owner@example.com"));
    const owner = await signedIn.get("/owner/api/auth/oauth/google/start");
    await signedIn.get(await consent(signedIn, owner.location!, "owner@example.com"));

    const pages = new Set<string>();
    for (const path of getRoutes(app)) {
      for (const b of [anonymous, signedIn]) {
        const res = await fetch(new URL(path, origin), {
          redirect: "manual",
          headers: b.cookies.size
            ? { cookie: [...b.cookies].map(([k, v]) => `${k}=${v}`).join("; ") }
            : {},
        });
        await res.body?.cancel();
        if (!(res.headers.get("content-type") ?? "").startsWith("text/html")) continue;
        assertSecure(`GET ${path}`, res.headers);
        pages.add(path);
      }
    }
    for (
      const must of [
        "/",
        "/owner/",
        "/owner/login",
        "/users/login",
        "/users/signup",
        "/users/verify",
        "/users/forgot",
        "/users/reset",
        "/users/outbox",
        "/users/confirm-email",
        "/broker/",
        "/broker/start",
        "/relay-demo/",
        "/relay-demo/login",
        "/dev-idp/",
        "/dev-idp/google/o/oauth2/v2/auth",
      ]
    ) {
      assert.ok(pages.has(must), `${must} was checked as an HTML page (${[...pages].join(" ")})`);
    }

    // Refusals carry the headers as well.
    const xsite = await fetch(`${origin}/users/logout`, {
      method: "POST",
      headers: { "sec-fetch-site": "cross-site" },
    });
    await xsite.body?.cancel();
    assert.equal(xsite.status, 403);
    assertSecure("403", xsite.headers);
    const big = await fetch(`${origin}/users/api/auth/login`, {
      method: "POST",
      body: "x".repeat(20_000),
    });
    await big.body?.cancel();
    assert.equal(big.status, 413);
    assertSecure("413", big.headers);
  } finally {
    await server.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("security headers: a request for a host outside APP_HOSTS gets 421 with the headers", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-headers-" });
  const app = await createApp(
    loadAppEnv({ DATABASE_URL: `file:${dir}/app.db`, APP_HOSTS: "app.example" }),
  );
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, app.fetch);
  try {
    const res = await withHost(server.addr.port, "GET", "/", "evil.example");
    assert.equal(res.status, 421);
    assertSecure("421", res.headers);
  } finally {
    await server.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});
