/** MailClient against the real server (and two loopback stand-ins for failure modes). */
import assert from "node:assert/strict";
import { MailApiError, MailClient } from "../../mail.ts";
import { startMail } from "./_harness.ts";

Deno.test("client: typed pages, iteration over all pages, typed errors", async () => {
  const h = await startMail();
  try {
    const a = await h.account({ users: 2 });
    for (let i = 0; i < 45; i++) await h.receive(a.addressIds[i % 2], `S${i}`);
    const page = await a.client.listItems({ page: 3, sort_order: "asc" });
    assert.deepEqual([page.data.length, page.current_page, page.total], [5, 3, 45]);
    const all: string[] = [];
    for await (const item of a.client.items({ sort_order: "asc" })) all.push(item.sender_name);
    assert.equal(all.length, 45);
    assert.deepEqual(all.slice(0, 3), ["S0", "S1", "S2"]);
    const rules = [];
    for await (const r of a.client.systemRules()) rules.push(r);
    assert.equal(rules.length, 2);
    // an origin-only base URL gets the API path
    const origin = new URL(h.base).origin;
    const byOrigin = new MailClient({ baseUrl: origin, apiKey: a.apiKey });
    assert.equal(byOrigin.baseUrl, h.base);
    assert.equal((await byOrigin.listItems()).total, 45);
    const bad = new MailClient({ baseUrl: h.base, apiKey: "gh_live_wrong" });
    await assert.rejects(bad.listItems(), (err: unknown) => {
      assert.ok(err instanceof MailApiError);
      assert.deepEqual([err.status, err.code], [401, 429]);
      return true;
    });
    await assert.rejects(a.client.open("999999", ["1"]), (err: unknown) => {
      assert.ok(err instanceof MailApiError);
      assert.deepEqual([err.status, err.code], [404, 89]);
      assert.match(err.message, /^Address not found: there is no address 999999\. .*GET \/items/);
      return true;
    });
    const doc = await a.client.openApi();
    assert.equal(doc.openapi, "3.1.0");
  } finally {
    await h.close();
  }
});

Deno.test("client: retries 429 after Retry-After, gives up with a typed error", async () => {
  const h = await startMail({ rateLimit: { burst: 1, perSecond: 1 } });
  try {
    const a = await h.account();
    await a.client.listItems();
    const started = Date.now();
    await a.client.listItems(); // 434/429 with Retry-After: 1, then retried
    assert.ok(Date.now() - started >= 900, "waited for Retry-After");
    const noRetry = new MailClient({ baseUrl: h.base, apiKey: a.apiKey, retries: 0 });
    await assert.rejects(noRetry.listItems(), (err: unknown) => {
      assert.ok(err instanceof MailApiError);
      assert.deepEqual([err.status, err.code, err.retryAfter], [429, 434, 1]);
      return true;
    });
  } finally {
    await h.close();
  }
});

Deno.test("client: retries 5xx answers with backoff", async () => {
  const h = await startMail();
  let calls = 0;
  // a loopback front that fails twice with 503, then forwards to the real server
  const front = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    calls++;
    if (calls <= 2) return Response.json({ code: 18, message: "Database error" }, { status: 503 });
    const url = new URL(req.url);
    return await fetch(new URL(url.pathname + url.search, h.base).href, {
      method: req.method,
      headers: req.headers,
      body: req.body,
    });
  });
  try {
    const a = await h.account();
    const base = `http://127.0.0.1:${front.addr.port}/api/account-docs/v2`;
    const client = new MailClient({ baseUrl: base, apiKey: a.apiKey, retryDelayMs: 20 });
    assert.equal((await client.listItems()).total, 0);
    assert.equal(calls, 3);
    calls = 0;
    const once = new MailClient({ baseUrl: base, apiKey: a.apiKey, retries: 1, retryDelayMs: 10 });
    await assert.rejects(once.listItems(), (e) => (e as MailApiError).status === 503);
    assert.equal(calls, 2);
  } finally {
    await front.shutdown();
    await h.close();
  }
});

Deno.test("client: tolerates the peer's empty list quirk", async () => {
  // stands in for the peer service, which answers an empty list with a message row
  const peer = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    if (req.headers.get("x-api-key") !== "peer-key") {
      return Response.json({ code: 429, message: "Key is not correct" }, { status: 401 });
    }
    return new URL(req.url).pathname.endsWith("/items")
      ? Response.json({ data: ["No items are received yet."] })
      : Response.json({
        data: ["No system defined rules found on this page."],
        current_page: 1,
        per_page: 20,
        total: 0,
      });
  });
  try {
    const client = new MailClient({
      baseUrl: `http://127.0.0.1:${peer.addr.port}/api/account-docs/v2/`,
      apiKey: "peer-key",
    });
    assert.deepEqual(await client.listItems(), {
      data: [],
      current_page: 1,
      per_page: 20,
      total: 0,
    });
    const seen = [];
    for await (const item of client.items()) seen.push(item);
    assert.equal(seen.length, 0);
    assert.equal((await client.listSystemRules()).data.length, 0);
  } finally {
    await peer.shutdown();
  }
});
