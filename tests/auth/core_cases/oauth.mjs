/**
 * Cases for OAuth: configured providers, start redirects, full flows against the fake provider and every failure code.
 *
 * @module
 */
import assert from "node:assert/strict";
import { cookiePair, test } from "./_harness.mjs";

function oauthConfig(providerUrl, scenario, extra = {}) {
  const client = (p) => ({
    clientId: scenario,
    clientSecret: "secret",
    baseUrl: `${providerUrl}/${p}`,
  });
  return {
    clients: { google: client("google"), github: client("github"), microsoft: client("microsoft") },
    stateSecret: "state-secret-for-tests",
    redirectUri: (p) => `https://site.example/api/auth/oauth/${p}/callback`,
    ...extra,
  };
}

/** start -> provider authorize -> callback, like a browser; returns the callback result. */
async function flow(api, config, provider, tamper = {}) {
  const start = await api.startOAuth(config, provider);
  assert.equal(start.status, 302);
  const cookie = tamper.cookie ?? cookiePair(start.headers.get("set-cookie"));
  const res = await fetch(start.headers.get("location"), { redirect: "manual" });
  await res.body?.cancel();
  assert.equal(res.status, 302, "the fake provider redirects back");
  const back = new URL(res.headers.get("location"));
  assert.equal(back.origin + back.pathname, config.redirectUri(provider));
  if (tamper.state !== undefined) back.searchParams.set("state", tamper.state);
  return await api.handleOAuthCallback(
    config,
    provider,
    new Request(back, { headers: { cookie } }),
    tamper.options,
  );
}

test("oauth: configuredProviders lists providers with credentials", ({ api }) => {
  const config = {
    clients: {
      microsoft: { clientId: "m", clientSecret: "ms" },
      github: { clientId: "g", clientSecret: "gs" },
      google: { clientId: "", clientSecret: "x" },
    },
    stateSecret: "s",
    redirectUri: () => "https://site.example/cb",
  };
  assert.deepEqual(api.configuredProviders(config), ["github", "microsoft"]);
  assert.deepEqual(api.configuredProviders({ ...config, clients: {} }), []);
  return Promise.resolve();
});

test("oauth: startOAuth redirects to the real authorize URLs with state, PKCE and a state cookie", async ({ api }) => {
  const client = { clientId: "cid", clientSecret: "secret" };
  const config = {
    clients: {
      google: client,
      github: client,
      microsoft: { ...client, tenantId: "contoso.onmicrosoft.com" },
    },
    stateSecret: "state-secret",
    redirectUri: (p) => `https://site.example/api/auth/oauth/${p}/callback`,
  };
  const expected = {
    google: ["https://accounts.google.com/o/oauth2/v2/auth", "openid email profile"],
    github: ["https://github.com/login/oauth/authorize", "read:user user:email"],
    microsoft: [
      "https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/authorize",
      "openid email profile",
    ],
  };
  for (const [provider, [authorize, scope]] of Object.entries(expected)) {
    const res = await api.startOAuth(config, provider);
    assert.equal(res.status, 302);
    const url = new URL(res.headers.get("location"));
    assert.equal(url.origin + url.pathname, authorize);
    const q = url.searchParams;
    assert.equal(q.get("client_id"), "cid");
    assert.equal(q.get("redirect_uri"), `https://site.example/api/auth/oauth/${provider}/callback`);
    assert.equal(q.get("scope"), scope);
    assert.equal(q.get("response_type"), "code");
    assert.match(q.get("state"), /^[A-Za-z0-9_-]{43}$/);
    assert.match(q.get("code_challenge"), /^[A-Za-z0-9_-]{43}$/);
    assert.equal(q.get("code_challenge_method"), "S256");
    const setCookie = res.headers.get("set-cookie");
    assert.match(
      setCookie,
      /^__Host-gatehouse-oauth=[A-Za-z0-9_.-]+; HttpOnly; Secure; SameSite=Lax; Path=\/; Max-Age=600$/,
    );
    assert.ok(!setCookie.includes(q.get("state")), "the cookie is signed, not the bare state");
  }
  const common = await api.startOAuth({ ...config, clients: { microsoft: client } }, "microsoft");
  assert.match(
    common.headers.get("location"),
    /^https:\/\/login\.microsoftonline\.com\/common\/oauth2\/v2\.0\/authorize\?/,
  );
  await assert.rejects(api.startOAuth({ ...config, clients: {} }, "github"), {
    code: "not_configured",
  });
  await assert.rejects(api.startOAuth(config, "gitlab"), { code: "not_configured" });
  // Tenants are path segments: anything else is refused.
  const badTenant = { microsoft: { ...client, tenantId: "../evil" } };
  await assert.rejects(api.startOAuth({ ...config, clients: badTenant }, "microsoft"), {
    code: "invalid_options",
  });
  // Full endpoint overrides (e.g. GitHub Enterprise) win over the defaults and baseUrl.
  const ghe = {
    ...client,
    baseUrl: "http://127.0.0.1:9/ignored",
    endpoints: { authorize: "https://ghe.example/login/oauth/authorize" },
  };
  const enterprise = await api.startOAuth({ ...config, clients: { github: ghe } }, "github");
  assert.match(
    enterprise.headers.get("location"),
    /^https:\/\/ghe\.example\/login\/oauth\/authorize\?/,
  );
  // A custom state cookie name.
  const named = await api.startOAuth({ ...config, stateCookieName: "oauth_state" }, "google");
  assert.match(named.headers.get("set-cookie"), /^oauth_state=/);
  assert.equal(
    api.clearOAuthStateCookie(config),
    "__Host-gatehouse-oauth=; HttpOnly; Secure; SameSite=Lax; Path=/; Max-Age=0",
  );
});

test("oauth: full flow succeeds for every provider", async ({ api, providerUrl }) => {
  const config = oauthConfig(providerUrl, "ok");
  assert.deepEqual(await flow(api, config, "google"), {
    ok: true,
    user: {
      provider: "google",
      providerUserId: "110169484474386276334",
      email: "ada@example.com",
      emailVerified: true,
      name: "Ada Lovelace",
    },
  });
  assert.deepEqual(await flow(api, config, "github"), {
    ok: true,
    user: {
      provider: "github",
      providerUserId: "583231",
      email: "octocat@example.com",
      emailVerified: true,
      name: "The Octocat",
    },
  });
  assert.deepEqual(await flow(api, config, "microsoft"), {
    ok: true,
    user: {
      provider: "microsoft",
      providerUserId: "OLu859SGc2Sr9ZsqbkG-QbeLgJlb41KcdiPoLYNpSFA",
      email: "grace@contoso.example",
      emailVerified: true,
      name: "Grace Hopper",
    },
  });
  const tenant = oauthConfig(providerUrl, "ok");
  tenant.clients.microsoft.tenantId = "organizations";
  assert.equal((await flow(api, tenant, "microsoft")).ok, true);
}, { provider: true });

test("oauth: GitHub falls back to the primary verified address", async ({ api, providerUrl }) => {
  const result = await flow(api, oauthConfig(providerUrl, "private"), "github");
  assert.deepEqual(result, {
    ok: true,
    user: {
      provider: "github",
      providerUserId: "583231",
      email: "octo-primary@example.com",
      emailVerified: true,
      name: "The Octocat",
    },
  });
}, { provider: true });

test("oauth: unverified e-mail fails for every provider", async ({ api, providerUrl }) => {
  const config = oauthConfig(providerUrl, "unverified");
  for (const p of ["google", "github", "microsoft"]) {
    assert.deepEqual(await flow(api, config, p), { ok: false, error: "email_unverified" }, p);
  }
}, { provider: true });

test("oauth: denied consent is access_denied", async ({ api, providerUrl }) => {
  const config = oauthConfig(providerUrl, "deny");
  for (const p of ["google", "github", "microsoft"]) {
    assert.deepEqual(await flow(api, config, p), { ok: false, error: "access_denied" }, p);
  }
}, { provider: true });

test(
  "oauth: state mismatch, missing, foreign or expired state cookie is invalid_state",
  async ({ api, providerUrl }) => {
    const config = oauthConfig(providerUrl, "ok");
    const invalid = { ok: false, error: "invalid_state" };
    for (const p of ["google", "github", "microsoft"]) {
      assert.deepEqual(await flow(api, config, p, { state: "x".repeat(43) }), invalid, p);
      assert.deepEqual(await flow(api, config, p, { cookie: "" }), invalid, p);
      // a cookie from another start (another state) of the same provider
      const other = cookiePair((await api.startOAuth(config, p)).headers.get("set-cookie"));
      assert.deepEqual(await flow(api, config, p, { cookie: other }), invalid, p);
      // the state cookie expires after 10 minutes
      assert.deepEqual(
        await flow(api, config, p, { options: { now: Date.now() + 601_000 } }),
        invalid,
        p,
      );
    }
    // a state cookie bound to another provider
    const gh = cookiePair((await api.startOAuth(config, "github")).headers.get("set-cookie"));
    assert.deepEqual(await flow(api, config, "google", { cookie: gh }), invalid);
    // a state cookie signed with another secret
    const foreign = { ...config, stateSecret: "attacker" };
    const forged = cookiePair((await api.startOAuth(foreign, "google")).headers.get("set-cookie"));
    assert.deepEqual(await flow(api, config, "google", { cookie: forged }), invalid);
  },
  { provider: true },
);

test(
  "oauth: exchange and profile failures, unconfigured provider",
  async ({ api, providerUrl }) => {
    for (const p of ["google", "github", "microsoft"]) {
      assert.deepEqual(await flow(api, oauthConfig(providerUrl, "exchange-fail"), p), {
        ok: false,
        error: "exchange_failed",
      }, p);
      assert.deepEqual(await flow(api, oauthConfig(providerUrl, "profile-fail"), p), {
        ok: false,
        error: "profile_failed",
      }, p);
    }
    // wrong client secret: the provider refuses the exchange
    const wrong = oauthConfig(providerUrl, "ok");
    wrong.clients.github.clientSecret = "not-the-secret";
    assert.deepEqual(await flow(api, wrong, "github"), { ok: false, error: "exchange_failed" });
    // a callback with valid state but no code
    const config = oauthConfig(providerUrl, "ok");
    const start = await api.startOAuth(config, "google");
    const state = new URL(start.headers.get("location")).searchParams.get("state");
    const req = new Request(`https://site.example/api/auth/oauth/google/callback?state=${state}`, {
      headers: { cookie: cookiePair(start.headers.get("set-cookie")) },
    });
    assert.deepEqual(await api.handleOAuthCallback(config, "google", req), {
      ok: false,
      error: "invalid_request",
    });
    assert.deepEqual(await api.handleOAuthCallback({ ...config, clients: {} }, "google", req), {
      ok: false,
      error: "not_configured",
    });
    assert.deepEqual(await api.handleOAuthCallback(config, "gitlab", req), {
      ok: false,
      error: "not_configured",
    });
  },
  { provider: true },
);
