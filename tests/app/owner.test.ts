/**
 * The owner-only demo site over real HTTP on loopback: password sign-in with the documented
 * local default and with an environment hash, the protected page, 403 `forbidden` for an
 * e-mail outside the allowlist, sign-out, production refusals, and the OAuth routes against the
 * fake provider.
 *
 * @module
 */
import assert from "node:assert/strict";
import { Hono } from "hono";
import { createSessionCookie, hashPassword } from "../../mod.ts";
import { loadAppEnv } from "../../app/env.ts";
import { createApp } from "../../app/main.ts";
import {
  createOwnerSite,
  DEV_OWNER_EMAIL,
  DEV_OWNER_PASSWORD,
  ownerSessionGeneration,
} from "../../app/owner.ts";
import { openLibsql } from "../../d1.ts";
import { HAVE_CHROMIUM, launch, startApp } from "../e2e/_harness.ts";
// @ts-types="../auth/_fake_provider.d.ts"
import { fakeProvider } from "../auth/_fake_provider.mjs";

interface Running {
  url: string;
  close(): Promise<void>;
}

function serve(handler: (r: Request) => Response | Promise<Response>): Running {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, handler);
  return { url: `http://127.0.0.1:${server.addr.port}`, close: () => server.shutdown() };
}

function serveOwner(vars: Record<string, string>): Running {
  // Password tries are counted in a database of the test's own.
  const dir = Deno.makeTempDirSync({ prefix: "gatehouse-owner-" });
  const db = openLibsql({ url: `file:${dir}/app.db` });
  const env = loadAppEnv({ DEV_IDP: "off", ...vars });
  const app = new Hono().route("/owner", createOwnerSite(env, "/owner", { db }));
  const running = serve(app.fetch);
  return {
    url: running.url,
    async close() {
      await running.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** `name=value` pairs of a response's Set-Cookie headers (dropping cleared cookies). */
function cookies(res: Response): string {
  return res.headers.getSetCookie().map((c) => c.split(";")[0]).filter((c) => !c.endsWith("="))
    .join("; ");
}

async function get(url: string, cookie = ""): Promise<Response> {
  return await fetch(url, { redirect: "manual", headers: cookie ? { cookie } : {} });
}

async function post(
  url: string,
  form: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<Response> {
  return await fetch(url, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(form).toString(),
  });
}

Deno.test("owner site: unauthenticated visits go to the sign-in form", async () => {
  const site = serveOwner({});
  try {
    for (const path of ["/owner", "/owner/"]) {
      const res = await get(site.url + path);
      await res.body?.cancel();
      assert.equal(res.status, 302);
      assert.equal(res.headers.get("location"), "/owner/api/auth/login");
    }
    const odd = await get(`${site.url}/owner/login?oauth_error=constructor`);
    assert.equal(odd.status, 200);
    const oddHtml = await odd.text();
    assert.match(oddHtml, /Something went wrong/);
    assert.ok(!oddHtml.includes("constructor"), "an unknown oauth_error is never echoed");
    for (const path of ["/owner/login", "/owner/api/auth/login"]) {
      const res = await get(site.url + path);
      assert.equal(res.status, 200);
      const html = await res.text();
      assert.match(html, /<form method="post" action="\/owner\/api\/auth\/login">/);
      assert.ok(!html.includes("oauth/"), "no OAuth links without configured providers");
    }
  } finally {
    await site.close();
  }
});

Deno.test("owner site: the documented local default password signs the owner in and out", async () => {
  const site = serveOwner({});
  try {
    const bad = await post(`${site.url}/owner/api/auth/login`, {
      email: DEV_OWNER_EMAIL,
      password: "wrong",
    });
    assert.equal(bad.status, 401);
    assert.equal(bad.headers.getSetCookie().length, 0);
    assert.match(await bad.text(), /Wrong e-mail or password/);

    const res = await post(`${site.url}/owner/api/auth/login`, {
      email: DEV_OWNER_EMAIL,
      password: DEV_OWNER_PASSWORD,
    });
    await res.body?.cancel();
    assert.equal(res.status, 302);
    assert.equal(res.headers.get("location"), "/owner/");
    const [setCookie] = res.headers.getSetCookie();
    assert.match(setCookie, /^__Host-owner-session=[^;]+; HttpOnly; Secure; SameSite=Lax; Path=\//);
    const jar = cookies(res);

    const home = await get(`${site.url}/owner/`, jar);
    assert.equal(home.status, 200);
    assert.match(await home.text(), /Signed in as <strong>owner@example\.com<\/strong>/);

    // Cross-site posts are refused app-wide: tests/app/cross_site.test.ts.
    const out = await post(`${site.url}/owner/logout`, {}, { cookie: jar });
    await out.body?.cancel();
    assert.equal(out.status, 302);
    assert.equal(out.headers.get("location"), "/owner/login");
    assert.match(out.headers.get("set-cookie") ?? "", /^__Host-owner-session=; .*Max-Age=0$/);
  } finally {
    await site.close();
  }
});

Deno.test("owner site: e-mails failing the allowlist get 403 forbidden", async () => {
  const secret = "test-session-secret-0123456789abcdef";
  const passwordHash = await hashPassword("s3cret-pass", { iterations: 1000 });
  const site = serveOwner({
    SESSION_SECRET: secret,
    OWNER_PASSWORD_HASH: passwordHash,
    OWNER_EMAILS: "boss@example.org",
    ACCESS_MODE: "domain",
    ACCESS_DOMAINS: "example.org",
  });
  try {
    // Right password, e-mail outside the allowlist.
    for (const email of ["x@evil-example.org", "x@example.org.evil.net"]) {
      const res = await post(`${site.url}/owner/api/auth/login`, {
        email,
        password: "s3cret-pass",
      });
      assert.equal(res.status, 403);
      assert.equal(await res.text(), "forbidden");
      assert.equal(res.headers.getSetCookie().length, 0);
    }
    // Domain mode lets the domain in.
    const ok = await post(`${site.url}/owner/api/auth/login`, {
      email: "Staff@Example.org",
      password: "s3cret-pass",
    });
    await ok.body?.cancel();
    assert.equal(ok.status, 302);
    const page = await get(`${site.url}/owner/`, cookies(ok));
    assert.match(await page.text(), /Signed in as <strong>staff@example\.org<\/strong>/);
    // A valid session for an e-mail the allowlist does not (or no longer) allow.
    const intruder = (await createSessionCookie(
      { secret, cookieName: "__Host-owner-session" },
      "someone@elsewhere.net",
      { generation: await ownerSessionGeneration(passwordHash) },
    )).split(";")[0];
    const res = await get(`${site.url}/owner/`, intruder);
    assert.equal(res.status, 403);
    assert.equal(await res.text(), "forbidden");
    // A session signed with another secret is no session at all.
    const forged = (await createSessionCookie(
      { secret: "attacker-secret", cookieName: "__Host-owner-session" },
      "boss@example.org",
    )).split(";")[0];
    const redirected = await get(`${site.url}/owner/`, forged);
    await redirected.body?.cancel();
    assert.equal(redirected.status, 302);
  } finally {
    await site.close();
  }
});

Deno.test("owner site: production refuses development defaults", async () => {
  const prod = (vars: Record<string, string>) =>
    createOwnerSite(
      loadAppEnv({ MODE: "production", APP_URL: "https://app.example", DEV_IDP: "off", ...vars }),
    );
  const hash = await hashPassword("pw", { iterations: 1000 });
  assert.throws(() => prod({ OWNER_PASSWORD_HASH: hash }), /SESSION_SECRET/);
  assert.throws(() => prod({ SESSION_SECRET: "a-real-secret" }), /OWNER_PASSWORD_HASH/);
  assert.throws(
    () =>
      prod({
        SESSION_SECRET: "a-real-secret",
        OWNER_PASSWORD_HASH: hash,
        GITHUB_CLIENT_ID: "id",
        GITHUB_CLIENT_SECRET: "secret",
      }),
    /STATE_SECRET/,
  );
  prod({ SESSION_SECRET: "a-real-secret", OWNER_PASSWORD_HASH: hash });
});

Deno.test("owner site: OAuth start and callback routes against the fake provider", async () => {
  const provider = serve(fakeProvider);
  const vars = (clientId: string, owners: string) => ({
    OWNER_EMAILS: owners,
    GITHUB_CLIENT_ID: clientId,
    GITHUB_CLIENT_SECRET: "secret",
    GITHUB_BASE_URL: `${provider.url}/github`,
  });
  /** start -> provider -> callback, as a browser would; returns the callback response. */
  async function signIn(site: Running): Promise<Response> {
    const start = await get(`${site.url}/owner/api/auth/oauth/github/start`);
    await start.body?.cancel();
    assert.equal(start.status, 302);
    const consent = await get(start.headers.get("location")!);
    await consent.body?.cancel();
    const callback = consent.headers.get("location")!;
    assert.ok(callback.startsWith(`${site.url}/owner/api/auth/oauth/github/callback?`));
    return await get(callback, cookies(start));
  }
  try {
    const site = serveOwner(vars("ok", "octocat@example.com"));
    try {
      const form = await (await get(`${site.url}/owner/login`)).text();
      assert.match(form, /href="\/owner\/api\/auth\/oauth\/github\/start"/);
      const google = await get(`${site.url}/owner/api/auth/oauth/google/start`);
      await google.body?.cancel();
      assert.equal(google.status, 404, "unconfigured provider");
      const res = await signIn(site);
      await res.body?.cancel();
      assert.equal(res.status, 302);
      assert.equal(res.headers.get("location"), "/owner/");
      assert.ok(
        res.headers.getSetCookie().some((c) => /^__Host-owner-oauth=;.*Max-Age=0$/.test(c)),
      );
      const home = await get(`${site.url}/owner/`, cookies(res));
      assert.match(await home.text(), /Signed in as <strong>octocat@example\.com<\/strong>/);
    } finally {
      await site.close();
    }

    const stranger = serveOwner(vars("ok", "boss@example.org"));
    try {
      const res = await signIn(stranger);
      assert.equal(res.status, 403);
      assert.equal(await res.text(), "forbidden");
    } finally {
      await stranger.close();
    }

    const denied = serveOwner(vars("deny", "octocat@example.com"));
    try {
      const res = await signIn(denied);
      await res.body?.cancel();
      assert.equal(res.status, 302);
      assert.equal(res.headers.get("location"), "/owner/login?oauth_error=access_denied");
      const form = await get(`${denied.url}${res.headers.get("location")}`);
      assert.match(await form.text(), /cancelled at the provider/);
    } finally {
      await denied.close();
    }
  } finally {
    await provider.close();
  }
});

Deno.test("owner site: mounted by the reference app at /owner", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-owner-app-" });
  try {
    const app = await createApp(
      loadAppEnv({ DEV_IDP: "off", DATABASE_URL: `file:${dir}/app.db` }),
    );
    const site = serve(app.fetch);
    try {
      const index = await get(`${site.url}/`);
      assert.match(await index.text(), /<a href="\/owner\/">Owner-only site<\/a>/);
      const login = await get(`${site.url}/owner/login`);
      assert.equal(login.status, 200);
      await login.body?.cancel();
    } finally {
      await site.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name:
    "owner site in Chromium: password and OAuth sign-in with Secure __Host- cookies on loopback",
  ignore: !HAVE_CHROMIUM,
  fn: async () => {
    const app = await startApp({ DEV_IDP: "on" });
    const browser = await launch();
    try {
      const page = await browser.newPage();
      // Password sign-in, the protected page, sign-out.
      await page.goto(`${app.origin}/owner/`);
      assert.equal(new URL(page.url()).pathname, "/owner/api/auth/login");
      await page.fill('input[name="email"]', DEV_OWNER_EMAIL);
      await page.fill('input[name="password"]', DEV_OWNER_PASSWORD);
      await Promise.all([
        page.waitForURL(`${app.origin}/owner/`),
        page.click('button[type="submit"]'),
      ]);
      assert.match(await page.textContent("body") ?? "", /Signed in as owner@example\.com/);
      await Promise.all([
        page.waitForURL(`${app.origin}/owner/login`),
        page.click("text=Sign out"),
      ]);
      await page.goto(`${app.origin}/owner/`);
      assert.equal(new URL(page.url()).pathname, "/owner/api/auth/login");

      // OAuth through the app's development identity provider: a stranger gets 403, the owner gets in.
      for (
        const [email, expected] of [[
          "stranger@example.net",
          /This account may not sign in here.*stranger@example\.net is not allowed to sign in to Owner-only site.*Sign in with another account/s,
        ], [
          DEV_OWNER_EMAIL,
          /Signed in as owner@example\.com/,
        ]] as const
      ) {
        await page.goto(`${app.origin}/owner/login`);
        await Promise.all([
          page.waitForURL(/\/dev-idp\/github\//),
          page.click("text=Continue with Github"),
        ]);
        await page.fill('input[name="email"]', email);
        await Promise.all([page.waitForLoadState("load"), page.click('button[value="allow"]')]);
        await page.waitForFunction(() => !location.pathname.startsWith("/dev-idp/"));
        assert.match((await page.textContent("body"))?.trim() ?? "", expected);
      }
    } finally {
      await browser.close();
      await app.close();
    }
  },
});
