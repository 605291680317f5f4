/**
 * The client the mail API's wrong-key throttle counts, through the whole app: the connection's
 * address, or behind a proxy listed in `TRUSTED_PROXIES` the address it forwarded. A forwarded
 * header from anyone else changes nothing.
 */
import assert from "node:assert/strict";
import { createApp } from "../../app/main.ts";
import { loadAppEnv } from "../../app/env.ts";
import { clientAddress } from "../../app/client_address.ts";
import { ResponseChecker } from "../mail/_openapi.ts";

const TOKEN = "client-address-operator-token-0123456789";

async function withApp(
  vars: Record<string, string>,
  fn: (base: string, key: string) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-client-" });
  const app = await createApp(loadAppEnv({
    DATABASE_URL: `file:${dir}/app.db`,
    MAIL_BLOB_DIR: `${dir}/blobs`,
    MAIL_OPERATOR_TOKEN: TOKEN,
    ...vars,
  }));
  // every answer of the mail API is checked against its OpenAPI document
  const mail = new ResponseChecker();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    mail.wrap(async (request, info) => await app.fetch(request, info)),
  );
  const base = `http://127.0.0.1:${server.addr.port}/api/account-docs/v2`;
  try {
    const ops = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
    const account = await (await fetch(`${base}/mailroom/accounts`, {
      method: "POST",
      headers: ops,
      body: JSON.stringify({ name: "A" }),
    })).json();
    const key = await (await fetch(`${base}/mailroom/accounts/${account.account_id}/api-keys`, {
      method: "POST",
      headers: ops,
      body: "{}",
    })).json();
    await fn(base, key.api_key);
    mail.assertClean();
    assert.ok(mail.seen.has("GET /items 401") && mail.seen.has("GET /items 429"));
  } finally {
    await server.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
}

async function items(base: string, key: string, forwardedFor: string): Promise<number> {
  const res = await fetch(`${base}/items`, {
    headers: { "x-api-key": key, "x-forwarded-for": forwardedFor },
  });
  await res.body?.cancel();
  return res.status;
}

Deno.test("client address: behind a trusted proxy, one guessing client does not block the others", async () => {
  await withApp({ TRUSTED_PROXIES: "127.0.0.1" }, async (base, key) => {
    for (let i = 0; i < 10; i++) {
      assert.equal(await items(base, `gh_live_x${i}`, "203.0.113.1"), 401);
    }
    assert.equal(await items(base, "gh_live_x10", "203.0.113.1"), 429);
    assert.equal(await items(base, key, "203.0.113.1"), 429, "the guesser waits");
    assert.equal(await items(base, key, "203.0.113.2"), 200, "another client behind the proxy");
  });
});

Deno.test("client address: X-Forwarded-For from an untrusted peer is ignored", async () => {
  await withApp({}, async (base, key) => {
    for (let i = 0; i < 11; i++) await items(base, `gh_live_x${i}`, `198.51.100.${i}`);
    assert.equal(await items(base, key, "198.51.100.200"), 429, "a new header is not a new client");
  });
});

Deno.test("client address: the rightmost forwarded address that is not a trusted proxy", () => {
  const of = clientAddress(loadAppEnv({ TRUSTED_PROXIES: "127.0.0.1, 10.0.0.2" }));
  const req = (xff?: string) =>
    new Request("http://x/", { headers: xff ? { "x-forwarded-for": xff } : {} });
  const via = (hostname: string) => ({ remoteAddr: { hostname } });
  assert.equal(of(req("1.1.1.1, 203.0.113.7, 10.0.0.2"), via("127.0.0.1")), "203.0.113.7");
  assert.equal(of(req("203.0.113.7"), via("192.0.2.1")), "192.0.2.1");
  assert.equal(of(req(), via("127.0.0.1")), "127.0.0.1");
  assert.equal(of(req("10.0.0.2"), via("127.0.0.1")), "127.0.0.1");
  assert.equal(of(req("x"), undefined), undefined);
});
