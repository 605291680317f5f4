import assert from "node:assert/strict";
import { Hono } from "hono";
import { handleOAuthCallback, startOAuth } from "../../mod.ts";
import { createClient } from "@libsql/client";
import { createBroker } from "../../app/broker.ts";
import {
  createDevIdp,
  devIdpEnabled,
  DevIdpError,
  devIdpSite,
  oauthClients,
} from "../../app/dev_idp.ts";
import { createRelayDemo } from "../../app/relay_demo.ts";
import { loadAppEnv } from "../../app/env.ts";

Deno.test("dev IdP: on in development without credentials, off with them, refused in production", () => {
  assert.equal(devIdpEnabled(loadAppEnv({})), true);
  assert.equal(devIdpEnabled(loadAppEnv({ DEV_IDP: "off" })), false);
  assert.equal(devIdpEnabled(loadAppEnv({ GITHUB_CLIENT_ID: "real" })), false);
  assert.equal(
    devIdpEnabled(loadAppEnv({ MODE: "production", APP_URL: "https://app.example" })),
    false,
  );
  assert.throws(
    () =>
      devIdpEnabled(
        loadAppEnv({ MODE: "production", APP_URL: "https://app.example", DEV_IDP: "on" }),
      ),
    DevIdpError,
  );
  const real = oauthClients(
    loadAppEnv({ GITHUB_CLIENT_ID: "id", GITHUB_CLIENT_SECRET: "s" }),
    "http://x",
  );
  assert.deepEqual(Object.keys(real), ["github"]);
  assert.equal(real.github?.baseUrl, undefined);
  const dev = oauthClients(loadAppEnv({}), "http://127.0.0.1:1");
  assert.deepEqual(Object.keys(dev), ["google", "github", "microsoft"]);
  assert.equal(dev.google?.baseUrl, "http://127.0.0.1:1/dev-idp/google");
  assert.deepEqual(
    oauthClients(loadAppEnv({ MODE: "production", APP_URL: "https://app.example" }), "http://x"),
    {},
  );
});

Deno.test("dev IdP: codes are single-use and bound to the PKCE verifier", async () => {
  const app = new Hono();
  app.route("/dev-idp", createDevIdp());
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, app.fetch);
  const origin = `http://127.0.0.1:${server.addr.port}`;
  try {
    const config = {
      clients: oauthClients(loadAppEnv({}), origin),
      stateSecret: "state-secret",
      redirectUri: (p: string) => `${origin}/cb/${p}`,
    };
    const start = await startOAuth(config, "google");
    const cookie = start.headers.get("set-cookie")!.split(";")[0];
    const authorize = new URL(start.headers.get("location")!);
    assert.equal(
      authorize.origin + authorize.pathname,
      `${origin}/dev-idp/google/o/oauth2/v2/auth`,
    );
    const page = await fetch(authorize);
    assert.match(await page.text(), /development identity provider/);
    const form = new URLSearchParams({
      email: "ada@example.com",
      verified: "1",
      decision: "allow",
    });
    for (
      const k of ["client_id", "redirect_uri", "state", "code_challenge", "code_challenge_method"]
    ) {
      form.set(k, authorize.searchParams.get(k) ?? "");
    }
    const consent = await fetch(authorize, { method: "POST", body: form, redirect: "manual" });
    await consent.body?.cancel();
    const back = consent.headers.get("location")!;
    const request = () => new Request(back, { headers: { cookie } });
    const ok = await handleOAuthCallback(config, "google", request());
    assert.equal(ok.ok, true);
    if (ok.ok) assert.equal(ok.user.email, "ada@example.com");
    const again = await handleOAuthCallback(config, "google", request());
    assert.deepEqual(again, { ok: false, error: "exchange_failed" });
    // A wrong verifier is refused.
    const code = await fetch(authorize, { method: "POST", body: form, redirect: "manual" });
    await code.body?.cancel();
    const c = new URL(code.headers.get("location")!).searchParams.get("code")!;
    const token = await fetch(`${origin}/dev-idp/google/token`, {
      method: "POST",
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code: c,
        redirect_uri: `${origin}/cb/google`,
        client_id: "gatehouse-dev-client",
        client_secret: "gatehouse-dev-secret",
        code_verifier: "wrong",
      }),
    });
    assert.equal(token.status, 400);
    assert.deepEqual(await token.json(), { error: "invalid_grant" });
  } finally {
    await server.shutdown();
  }
});

Deno.test("production: the dev IdP site refuses to start; broker and relay site need real secrets", async () => {
  const prod = (vars: Record<string, string> = {}) =>
    loadAppEnv({ MODE: "production", APP_URL: "https://app.example", ...vars });
  assert.throws(() => devIdpSite(prod({ DEV_IDP: "on" })), DevIdpError);
  const off = devIdpSite(prod());
  assert.equal((await off.request("/google/o/oauth2/v2/auth")).status, 404);
  const db = createClient({ url: ":memory:" });
  try {
    await assert.rejects(() => createBroker({ env: prod(), db }), /BROKER_SECRET/);
    await assert.rejects(() => createRelayDemo({ env: prod(), db }), /RELAY_DEMO_RELAY_SECRET/);
    await createBroker({ env: prod({ BROKER_SECRET: "a-real-broker-secret" }), db });
  } finally {
    db.close();
  }
});
