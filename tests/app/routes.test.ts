/**
 * The spec's routes table on the owner-only and multi-user sites, over loopback HTTP with the
 * whole app (`createApp`) and the development provider: bodies and statuses as the spec says.
 */
import assert from "node:assert/strict";
import { createApp } from "../../app/main.ts";
import { loadAppEnv } from "../../app/env.ts";
import { Browser, consent } from "./_relay_harness.ts";

async function withApp(fn: (origin: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-routes-" });
  const app = await createApp(
    loadAppEnv({ MODE: "development", DATABASE_URL: `file:${dir}/app.db` }),
  );
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, app.fetch);
  try {
    await fn(`http://127.0.0.1:${server.addr.port}`);
  } finally {
    await server.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
}

const json = { accept: "application/json" };

Deno.test("routes: protected pages 302 to /api/auth/login, the LoginPage's action", async () => {
  await withApp(async (origin) => {
    for (const site of ["/owner", "/users"]) {
      const b = new Browser(origin);
      const home = await b.get(`${site}/`);
      assert.equal(home.status, 302, site);
      assert.equal(home.location, `${origin}${site}/api/auth/login`);
      const login = await b.get(home.location!);
      const page = login.status === 302 ? await b.get(login.location!) : login;
      assert.match(page.body, new RegExp(`<form method="post" action="${site}/api/auth/login">`));
    }
  });
});

Deno.test("routes: oauth start is startOAuth's 302; callback failures go to /login?oauth_error=", async () => {
  await withApp(async (origin) => {
    for (const site of ["/owner", "/users"]) {
      const b = new Browser(origin);
      const start = await b.get(`${site}/api/auth/oauth/github/start`);
      assert.equal(start.status, 302);
      assert.ok(start.location?.startsWith(`${origin}/dev-idp/github/login/oauth/authorize?`));
      assert.ok([...b.cookies.keys()].some((k) => k.endsWith("-oauth")), "state cookie");
      const denied = await b.get(await consent(b, start.location!, "x@example.com", "deny"));
      assert.equal(denied.status, 302);
      assert.equal(denied.location, `${origin}${site}/login?oauth_error=access_denied`);
      const forged = await new Browser(origin).get(
        `${site}/api/auth/oauth/github/callback?code=x&state=y`,
      );
      assert.equal(forged.location, `${origin}${site}/login?oauth_error=invalid_state`);
    }
  });
});

Deno.test("routes: allowlist failures answer 403 forbidden (owner site, provider-verified e-mail)", async () => {
  await withApp(async (origin) => {
    const b = new Browser(origin);
    const start = await b.get("/owner/api/auth/oauth/google/start");
    const res = await b.get(await consent(b, start.location!, "mallory@example.com"));
    assert.equal(res.status, 403);
    assert.equal(res.body, "forbidden");
  });
});

Deno.test("routes: /api/auth/reset answers 400 JSON {error}; /api/auth/verify issues the session", async () => {
  await withApp(async (origin) => {
    const b = new Browser(origin);
    const reset = await b.send("/users/api/auth/reset", {
      method: "POST",
      headers: json,
      body: new URLSearchParams({ token: "forged", password: "a new long password" }),
    });
    assert.equal(reset.status, 400);
    assert.deepEqual(JSON.parse(reset.body), { error: "invalid_token" });
    // A plain API client (curl's Accept: */*) gets the same JSON.
    const curl = await b.send("/users/api/auth/reset", {
      method: "POST",
      headers: { accept: "*/*" },
      body: new URLSearchParams({ token: "forged", password: "a new long password" }),
    });
    assert.equal(curl.status, 400);
    assert.deepEqual(JSON.parse(curl.body), { error: "invalid_token" });

    const forgot = await b.send("/users/api/auth/forgot", {
      method: "POST",
      headers: json,
      body: new URLSearchParams({ email: "nobody@example.com" }),
    });
    assert.equal(forgot.status, 200, "no account enumeration");

    const email = "route@example.com";
    const signup = await b.send("/users/api/auth/signup", {
      method: "POST",
      headers: json,
      body: new URLSearchParams({ email, password: "a long enough password" }),
    });
    assert.equal(signup.status, 200);
    const outbox = await b.get("/users/outbox");
    const code = outbox.body.match(/verification code is (\d{6})/)![1];
    const verify = await b.send("/users/api/auth/verify", {
      method: "POST",
      headers: json,
      body: new URLSearchParams({ email, code }),
    });
    assert.equal(verify.status, 200);
    assert.ok(b.cookies.has("__Host-users-session"), "session issued");
    const home = await b.get("/users/");
    assert.equal(home.status, 200);
    assert.match(home.body, /route@example\.com/);
  });
});
