/**
 * Public URLs come from configuration, never from the request's `Host` header: the whole app
 * in production on a loopback port, requests with a forged `Host` over a raw socket, and every
 * link the app mails or redirects to (reset and e-mail-change links, OAuth redirect URIs, relay
 * and broker redirects, mail file links).
 */
import assert from "node:assert/strict";
import { loadAppEnv } from "../../app/env.ts";
import { publicOrigin } from "../../app/public_url.ts";
import { type ProdApp, startProdApp } from "./_prod.ts";
import { fetchAs, type RawResponse, withHost } from "./_raw.ts";
import { PNG } from "../mail/_harness.ts";
import { ResponseChecker } from "../mail/_openapi.ts";

const EVIL = "evil.example";
const json = { accept: "application/json" };

function assertNoEvil(where: string, text: string | null): void {
  assert.ok(!String(text).includes(EVIL), `${where} carries the forged host: ${text}`);
}

/** Signs a user up through the API (on a served host) and returns the session cookie. */
async function signedInUser(app: ProdApp, host: string, email: string): Promise<string> {
  const form = (o: Record<string, string>, cookie = "") => ({
    method: "POST",
    headers: cookie ? { ...json, cookie } : json,
    body: new URLSearchParams(o),
  });
  const next = app.mail();
  const up = await fetchAs(
    app.port,
    host,
    "/users/api/auth/signup",
    form({ email, password: "a long enough password" }),
  );
  assert.equal(up.status, 200, up.body);
  const code = (await next).text.match(/\b(\d{6})\b/)![1];
  // The code confirms the signup of the browser that made it: its attempt cookie goes along.
  const attempt = up.headers.getSetCookie().find((c) => c.startsWith("__Host-users-signup="));
  assert.ok(attempt, "signup sets the attempt cookie");
  const verify = await fetchAs(
    app.port,
    host,
    "/users/api/auth/verify",
    form({ email, code }, attempt.split(";")[0]),
  );
  assert.equal(verify.status, 200);
  const cookie = verify.headers.getSetCookie().find((c) => c.startsWith("__Host-users-session="));
  return cookie!.split(";")[0];
}

for (
  const [label, vars, host, served] of [
    ["APP_URL", { APP_URL: "https://app.example" }, EVIL, "127.0.0.1"],
    ["APP_HOSTS", { APP_HOSTS: "app.example, www.app.example" }, "app.example", "app.example"],
  ] as const
) {
  Deno.test(`public URLs (${label}): a forged Host never reaches a mailed link or a Location`, async () => {
    const app = await startProdApp(vars);
    try {
      const cookie = await signedInUser(app, served, "ada@example.com");
      const sent = app.mails.length;

      // password reset link
      const forgot = await withHost(app.port, "POST", "/users/api/auth/forgot", host, {
        "content-type": "application/x-www-form-urlencoded",
        accept: "application/json",
      }, "email=ada%40example.com");
      assert.equal(forgot.status, 200, forgot.body);
      const reset = await app.mail(sent);
      assert.equal(app.mails.length, sent + 1, "the reset mail was sent");
      assert.match(reset.text, /https:\/\/app\.example\/users\/reset\?token=/);
      assertNoEvil("reset mail", reset.text + reset.html);

      // e-mail change confirmation link
      const change = await withHost(app.port, "POST", "/users/account/email", host, {
        "content-type": "application/x-www-form-urlencoded",
        cookie,
      }, "newEmail=ada2%40example.com&password=a+long+enough+password");
      assert.equal(change.status, 303);
      assert.equal(
        change.headers.get("location"),
        "/users/?done=email_sent&to=ada2%40example.com",
      );
      const confirm = await app.mail(sent + 1);
      assert.match(confirm.text, /https:\/\/app\.example\/users\/confirm-email\?token=/);
      assertNoEvil("e-mail change mail", confirm.text + confirm.html);

      // OAuth redirect URIs of both sites, relay start and broker start
      for (
        const [target, expect] of [
          [
            "/owner/api/auth/oauth/github/start",
            "https://app.example/owner/api/auth/oauth/github/callback",
          ],
          [
            "/users/api/auth/oauth/github/start",
            "https://app.example/users/api/auth/oauth/github/callback",
          ],
          ["/relay-demo/api/auth/relay/start?provider=github", "https://app.example/broker/start?"],
        ] as const
      ) {
        const res = await withHost(app.port, "GET", target, host);
        assert.equal(res.status, 302, target);
        const location = res.headers.get("location")!;
        assertNoEvil(target, location);
        assert.ok(
          location.startsWith(expect) ||
            new URL(location).searchParams.get("redirect_uri") === expect,
          `${target} → ${location}`,
        );
        if (target.startsWith("/relay-demo")) {
          const next = new URL(location);
          assert.equal(
            next.searchParams.get("return_to"),
            "https://app.example/relay-demo/api/auth/relay/callback",
          );
          const broker = await withHost(app.port, "GET", next.pathname + next.search, host);
          assert.equal(broker.status, 302);
          assert.equal(
            new URL(broker.headers.get("location")!).searchParams.get("redirect_uri"),
            "https://app.example/broker/api/auth/oauth/github/callback",
          );
          // A return URL on the forged host is not one of the site's URLs.
          const forged = new URL(next);
          forged.searchParams.set(
            "return_to",
            `https://${EVIL}/relay-demo/api/auth/relay/callback`,
          );
          const refused = await withHost(app.port, "GET", forged.pathname + forged.search, EVIL);
          assert.ok(refused.status === 400 || refused.status === 421, String(refused.status));
          assert.equal(refused.headers.get("location"), null);
        }
      }

      // mail API: file links and the index's OpenAPI link (every answer checked against the
      // API's OpenAPI document)
      const mail = new ResponseChecker();
      const checked = async <T extends RawResponse>(method: string, path: string, res: T) => {
        await mail.checkRaw({ method, url: `http://${served}${path}` }, res);
        return res;
      };
      const ops = { authorization: "Bearer prod-operator-token-0123456789" };
      const post = (path: string, body: unknown) =>
        fetchAs(app.port, served, `/api/account-docs/v2/mailroom${path}`, {
          method: "POST",
          headers: { ...ops, "content-type": "application/json" },
          body: JSON.stringify(body),
        }).then((r) => checked("POST", `/api/account-docs/v2/mailroom${path}`, r))
          .then((r) => JSON.parse(r.body));
      const { account_id } = await post("/accounts", { name: "Acme" });
      const { user_id } = await post(`/accounts/${account_id}/users`, { full_name: "Ada" });
      const { address_id } = await post(`/accounts/${account_id}/addresses`, { user_id });
      const { api_key } = await post(`/accounts/${account_id}/api-keys`, {});
      const item = new FormData();
      item.set("address_id", address_id);
      item.set("sender_name", "Bank");
      item.set("envelope", new Blob([PNG], { type: "image/png" }), "e.png");
      const received = await checked(
        "POST",
        "/api/account-docs/v2/mailroom/items",
        await fetchAs(app.port, served, `/api/account-docs/v2/mailroom/items`, {
          method: "POST",
          headers: ops,
          body: item,
        }),
      );
      assert.equal(received.status, 201, received.body);
      const list = await checked(
        "GET",
        "/api/account-docs/v2/items",
        await withHost(app.port, "GET", "/api/account-docs/v2/items", host, {
          "x-api-key": api_key,
        }),
      );
      assert.equal(list.status, 200, list.body);
      assertNoEvil("item list", list.body);
      assert.match(list.body, /"https:\/\/app\.example\/api\/account-docs\/v2\/files\/covers\//);
      const index = await checked(
        "GET",
        "/api/account-docs/v2/",
        await withHost(app.port, "GET", "/api/account-docs/v2/", host),
      );
      assert.equal(
        JSON.parse(index.body).openapi,
        "https://app.example/api/account-docs/v2/openapi.json",
      );
      mail.assertClean();
      assert.equal(mail.seen.size, 7, [...mail.seen].join(", "));
    } finally {
      await app.close();
    }
  });
}

Deno.test("public URLs (APP_HOSTS): a request for another host is refused with 421 and no work", async () => {
  const app = await startProdApp({ APP_HOSTS: "app.example" });
  try {
    const before = app.mails.length;
    const forgot = await withHost(app.port, "POST", "/users/api/auth/forgot", EVIL, {
      "content-type": "application/x-www-form-urlencoded",
    }, "email=ada%40example.com");
    assert.equal(forgot.status, 421);
    const start = await withHost(app.port, "GET", "/relay-demo/api/auth/relay/start", EVIL);
    assert.equal(start.status, 421);
    assert.equal(start.headers.get("location"), null);
    assert.equal(start.headers.get("set-cookie"), null);
    assert.equal(app.mails.length, before, "nothing was sent");
    const ok = await withHost(app.port, "GET", "/owner/login", "APP.example");
    assert.equal(ok.status, 200);
  } finally {
    await app.close();
  }
});

Deno.test("public URLs: production without APP_URL or APP_HOSTS refuses to start, naming APP_URL", () => {
  assert.throws(() => loadAppEnv({ MODE: "production" }), /APP_URL must be set in production/);
  assert.throws(() => loadAppEnv({ DENO_DEPLOYMENT_ID: "abc123" }), /APP_URL must be set/);
  assert.equal(
    loadAppEnv({ DENO_DEPLOYMENT_ID: "abc123", APP_URL: "https://a.example" }).MODE,
    "production",
  );
  assert.throws(() => loadAppEnv({ MODE: "production", APP_URL: "http://app.example" }), /https/);
  assert.throws(() => loadAppEnv({ APP_URL: "https://app.example/sub" }), /origin only/);
  assert.throws(() => loadAppEnv({ APP_URL: "not a url" }), /APP_URL/);
  assert.throws(() => loadAppEnv({ APP_HOSTS: "app.example/x" }), /APP_HOSTS/);
  assert.throws(() => loadAppEnv({ MODE: "prod" }), /MODE must be development or production/);
});

Deno.test("public URLs: development without configuration uses the request's origin", () => {
  const env = loadAppEnv({});
  assert.equal(publicOrigin(env, new Request("http://127.0.0.1:8000/x")), "http://127.0.0.1:8000");
  const hosts = loadAppEnv({ APP_HOSTS: "a.example, http://127.0.0.1:8000" });
  assert.equal(
    publicOrigin(hosts, new Request("http://127.0.0.1:8000/x")),
    "http://127.0.0.1:8000",
  );
  assert.equal(publicOrigin(hosts, new Request("http://a.example/x")), "https://a.example");
  assert.equal(publicOrigin(hosts, new Request("http://b.example/x")), "https://a.example");
});
