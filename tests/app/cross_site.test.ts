/**
 * Cross-site state-changing requests are refused app-wide: every non-GET route of the whole
 * app (listed from the router itself, so a new route is covered when it is added), posted the
 * way a browser posts from another site, answers 403 `forbidden` and changes nothing: no
 * cookie is set or cleared, no mail is sent, the sessions and the account are as they were.
 */
import assert from "node:assert/strict";
import type { Hono } from "hono";
import { createApp } from "../../app/main.ts";
import { loadAppEnv } from "../../app/env.ts";
import { Browser, throughBroker } from "./_relay_harness.ts";

interface Running {
  app: Hono;
  origin: string;
  close(): Promise<void>;
}

async function start(): Promise<Running> {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-xsite-" });
  const app = await createApp(loadAppEnv({ DATABASE_URL: `file:${dir}/app.db` }));
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, app.fetch);
  return {
    app,
    origin: `http://127.0.0.1:${server.addr.port}`,
    async close() {
      await server.shutdown();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** Every state-changing route of the app, as a concrete path. */
function stateChangingRoutes(app: Hono): { method: string; path: string }[] {
  const out = new Map<string, { method: string; path: string }>();
  for (const r of app.routes) {
    const method = r.method === "ALL" ? "POST" : r.method;
    if (["GET", "HEAD", "OPTIONS"].includes(method)) continue;
    if (r.path === "*" || r.path === "/*") continue; // the app-wide middleware
    const path = r.path
      .replace(/:slash\{[^}]*\}/g, "")
      .replace(/:provider(\{[^}]*\})?/g, "google")
      .replace(/:tenant(\{[^}]*\})?/g, "common")
      .replace(/:[a-z_]+(\{[^}]*\})?/g, "1")
      .replace(/\/\*$/, "/items");
    out.set(`${method} ${path}`, { method, path });
  }
  return [...out.values()];
}

const BROWSERS: Record<string, Record<string, string>> = {
  "cross-site": { "sec-fetch-site": "cross-site", origin: "https://evil.example" },
  "same-site": { "sec-fetch-site": "same-site", origin: "https://sub.127.0.0.1.nip.example" },
  "old browser, other origin": { origin: "https://evil.example" },
  "old browser, Origin null": { origin: "null" },
};

Deno.test("cross-site: every state-changing route refuses a cross-site post and changes nothing", async () => {
  const s = await start();
  try {
    // A signed-in user on the multi-user site and on the relay demo, in one cookie jar.
    const b = new Browser(s.origin);
    const email = "victim@example.com";
    const form = { email, password: "a long enough password" };
    assert.equal(
      (await b.send("/users/api/auth/signup", {
        method: "POST",
        headers: { accept: "application/json" },
        body: new URLSearchParams(form),
      })).status,
      200,
    );
    const code = (await b.get("/users/outbox")).body.match(/verification code is (\d{6})/)![1];
    await b.send("/users/api/auth/verify", {
      method: "POST",
      headers: { accept: "application/json" },
      body: new URLSearchParams({ email, code }),
    });
    const start = await b.get("/relay-demo/api/auth/relay/start?provider=google");
    const back = await throughBroker(b, start.location!, email);
    assert.equal((await b.get(back)).status, 302);
    const jar = new Map(b.cookies);
    assert.ok(jar.has("__Host-users-session") && jar.has("__Host-gh-relay-demo"), "signed in");
    const outboxBefore = (await b.get("/users/outbox")).body;

    const routes = stateChangingRoutes(s.app);
    for (const must of ["/relay-demo/api/auth/logout", "/users/logout", "/owner/logout"]) {
      assert.ok(routes.some((r) => r.path === must), `${must} is listed`);
    }
    for (const { method, path } of routes) {
      for (const [label, headers] of Object.entries(BROWSERS)) {
        const res = await b.send(path, {
          method,
          headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
          body: new URLSearchParams({ email, name: "Mallory", newEmail: "m@evil.example" }),
        });
        assert.equal(res.status, 403, `${label}: ${method} ${path} → ${res.status}`);
        assert.equal(res.body, "forbidden", `${method} ${path}`);
        assert.deepEqual(b.cookies, jar, `${label}: ${method} ${path} touched a cookie`);
      }
    }

    // Nothing happened: both sessions work, the name is unchanged, no mail went out.
    const home = await b.get("/users/");
    assert.equal(home.status, 200);
    assert.ok(!home.body.includes("Mallory"));
    assert.equal((await b.get("/relay-demo/")).status, 200);
    assert.equal((await b.get("/users/outbox")).body, outboxBefore);

    // The same sign-out from the app's own page works; so does a client with no browser headers.
    const out = await b.send("/relay-demo/api/auth/logout", {
      method: "POST",
      headers: { "sec-fetch-site": "same-origin", origin: s.origin },
    });
    assert.equal(out.status, 302);
    assert.ok(!b.cookies.has("__Host-gh-relay-demo"), "signed out");
    const curl = await b.send("/users/account/name", {
      method: "POST",
      body: new URLSearchParams({ name: "Ada" }),
    });
    assert.equal(curl.status, 303);
    assert.match((await b.get("/users/")).body, /id="name">Ada</);
  } finally {
    await s.close();
  }
});
