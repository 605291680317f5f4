/** Every error pair of the wire format, each provoked for real. */
import assert from "node:assert/strict";
import { createClient } from "@libsql/client";
import { createMailServer, mailErrors } from "../../mail.ts";
import { OPERATOR_TOKEN, startMail } from "./_harness.ts";
import { withHost } from "../app/_raw.ts";
import { openApiDocument } from "../../lib/mail/openapi.ts";
import { ResponseChecker } from "./_openapi.ts";

function expectError(
  r: { status: number; body: { code: number; message: string } },
  code: keyof typeof mailErrors,
  status = mailErrors[code].status,
): void {
  assert.equal(r.status, status, JSON.stringify(r.body));
  assert.equal(r.body.code, code);
  assert.equal(typeof r.body.message, "string");
}

Deno.test("auth errors: wrong key 429/401, revoked 431/401, closed 430/403, no access 433/403", async () => {
  const h = await startMail();
  try {
    const a = await h.account();
    expectError(await h.call("GET", "/items", { key: "gh_live_nope" }), 429);
    expectError(await h.call("GET", "/items"), 429); // no key at all
    const extra = await h.ops.createApiKey(a.accountId);
    await h.ops.revokeApiKey(extra.key_id);
    expectError(await h.call("GET", "/items", { key: extra.api_key }), 431);
    assert.equal((await h.call("GET", "/items", { key: a.apiKey })).status, 200);
    await h.ops.updateAccount(a.accountId, { api_access: false });
    expectError(await h.call("GET", "/items", { key: a.apiKey }), 433);
    await h.ops.updateAccount(a.accountId, { api_access: true, status: "closed" });
    expectError(await h.call("GET", "/items", { key: a.apiKey }), 430);
    await h.ops.updateAccount(a.accountId, { status: "open" });
    assert.equal((await h.call("GET", "/items", { key: a.apiKey })).status, 200);
    // the mailroom API has its own credentials
    const r = await fetch(`${h.base}/mailroom/requests`, {
      headers: { authorization: `Bearer ${a.apiKey}` },
    });
    expectError({ status: r.status, body: await r.json() }, 429);
  } finally {
    await h.close();
  }
});

Deno.test("wrong method 432/405 with Allow on every path the document has, customer and mailroom; unknown path 9404/404", async () => {
  const h = await startMail();
  try {
    const a = await h.account();
    const doc = openApiDocument("/api/account-docs/v2");
    const paths = doc.paths as Record<string, Record<string, unknown>>;
    const operator = { authorization: `Bearer ${OPERATOR_TOKEN}` };
    const accountsBefore = (await h.ops.listAccounts()).total;
    let checked = 0;
    for (const [template, item] of Object.entries(paths)) {
      const path = template.replace(/\{[^}]+\}/g, "1").replace("{file}", "init.js");
      const documented = Object.keys(item).map((m) => m.toUpperCase());
      const allow = [...new Set([...documented, ...(documented.includes("GET") ? ["HEAD"] : [])])]
        .sort().join(", ");
      for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]) {
        if (documented.includes(method)) continue;
        // checked before the key or the operator token: none, a customer key, the operator's
        const credentials: Record<string, string>[] = [{}, { "x-api-key": a.apiKey }, operator];
        for (const headers of credentials) {
          const r = await h.call(method, path, { headers });
          expectError(r, 432);
          assert.equal(r.headers.get("allow"), allow, `${method} ${path}`);
          const words = documented.sort();
          const named = words.length === 1
            ? words[0]
            : `${words.slice(0, -1).join(", ")} or ${words.at(-1)}`;
          assert.ok(
            r.body.message.endsWith(`takes ${named}.`),
            `${method} ${path}: ${r.body.message}`,
          );
        }
        checked++;
      }
    }
    assert.ok(checked > 150, `${checked} wrong methods`);
    // the mailroom's paths with several methods name them all
    const r = await h.call("DELETE", "/mailroom/accounts", { headers: operator });
    assert.deepEqual([r.status, r.headers.get("allow")], [405, "GET, HEAD, POST"]);
    assert.match(
      r.body.message,
      /\/api\/account-docs\/v2\/mailroom\/accounts takes GET or POST\.$/,
    );
    const one = await h.call("POST", `/mailroom/accounts/${a.accountId}`, { headers: operator });
    assert.equal(one.headers.get("allow"), "GET, HEAD, PATCH");
    // and nothing was done
    assert.equal((await h.ops.listAccounts()).total, accountsBefore);
    assert.equal((await h.ops.getAccount(a.accountId)).status, "open");
    expectError(await h.call("GET", "/nothing-here", { key: a.apiKey }), 9404);
    expectError(await h.call("POST", "/addresses/1/items/actions/burn", { key: a.apiKey }), 9404);
    expectError(await h.call("GET", "/mailroom/nothing-here", { headers: operator }), 9404);
  } finally {
    await h.close();
  }
});

Deno.test("invalid input 19/422 and oversized bodies 19/413", async () => {
  const h = await startMail();
  try {
    const a = await h.account();
    const key = a.apiKey;
    const addr = a.addressIds[0];
    const id = await h.receive(addr);
    const act = (body: unknown, action = "open") =>
      h.call("POST", `/addresses/${addr}/items/actions/${action}`, { key, body });
    for (
      const q of ["page=0", "page=-1", "page=abc", "page=1.5", "sort_order=up", "sort_order=1"]
    ) {
      expectError(await h.call("GET", `/items?${q}`, { key }), 19);
      expectError(
        await h.call("GET", `/user-defined-rules/system-user-defined-rules?${q}`, { key }),
        19,
      );
    }
    expectError(await act("{not json"), 19);
    expectError(await act([id]), 19);
    expectError(await act({}), 19);
    expectError(await act({ mail_ids: [] }), 19);
    expectError(await act({ mail_ids: "1" }), 19);
    expectError(await act({ mail_ids: [{}] }), 19);
    expectError(await act({ mail_ids: ["a b"] }), 19);
    expectError(await act({ mail_ids: Array.from({ length: 501 }, (_, i) => String(i + 1)) }), 19);
    expectError(await act({ mail_ids: [id], mail_id: id }), 19);
    expectError(await act({ mail_ids: [id], delete_digital_copy: true }), 19); // not on open
    expectError(await act({ mail_ids: [id], delete_digital_copy: "yes" }, "shred"), 19);
    expectError(await act({ mail_ids: [id], rescan_type: 9 }, "rescan"), 19);
    expectError(await act({ mail_ids: [id], comment: 5 }, "rescan"), 19);
    expectError(await act({ mail_ids: [id], comment: "x" }, "rescan/cancel"), 19);
    const rule = (body: unknown) =>
      h.call("PUT", "/user-defined-rules/update-system-user-defined-rule", { key, body });
    for (
      const body of [
        {},
        { automation_name: "auto_ai_summary", is_active: 1 },
        { automation_name: "auto_scan" },
        { automation_name: "auto_scan", is_active: 2 },
        { automation_name: "auto_scan", is_active: "1" },
        { automation_name: "auto_scan", is_active: true },
        { automation_name: ["auto_scan"], is_active: 1 },
      ]
    ) expectError(await rule(body), 19);
    expectError(await act({ mail_ids: ["1"], comment: "x".repeat(70_000) }, "rescan"), 19, 413);
    // nothing of the above changed the item
    assert.equal((await h.ops.getItem(id)).current_status, "received");
  } finally {
    await h.close();
  }
});

Deno.test("address and item errors: 89, 9400, 14, 469, 471 — and none changes anything", async () => {
  const h = await startMail();
  try {
    const a = await h.account({ users: 2 });
    const b = await h.account();
    const [addr1, addr2] = a.addressIds;
    const mine = await h.receive(addr1);
    const other = await h.receive(addr2);
    const theirs = await h.receive(b.addressIds[0]);
    const act = (addr: string, ids: string[], action = "open") =>
      h.call("POST", `/addresses/${addr}/items/actions/${action}`, {
        key: a.apiKey,
        body: { mail_ids: ids },
      });
    expectError(await act("424242", [mine]), 89);
    expectError(await act("not-an-id", [mine]), 89);
    expectError(await act(b.addressIds[0], [theirs]), 9400);
    expectError(await act(addr1, ["987654"]), 14);
    expectError(await act(addr1, [mine, theirs]), 14); // another account's item is not found
    expectError(await act(addr1, [mine, other]), 469);
    await a.client.open(addr1, mine);
    await h.ops.completeRequest(mine, { scan: new Blob(["%PDF-1.4 x"]) });
    const fresh = await h.receive(addr1);
    expectError(await act(addr1, [fresh, mine]), 471); // mine is opened already
    for (const id of [fresh, other, theirs]) {
      assert.equal((await h.ops.getItem(id)).current_status, "received");
    }
    // single mail_id form
    const r = await h.call("POST", `/addresses/${addr2}/items/actions/shred`, {
      key: a.apiKey,
      body: { mail_id: other, delete_digital_copy: false },
    });
    assert.deepEqual(r.body, { status: 1, message: "Items shred request submitted successfully." });
  } finally {
    await h.close();
  }
});

Deno.test("rate limited 434/429 with Retry-After, per key", async () => {
  const h = await startMail({ rateLimit: { burst: 3, perSecond: 0.5 } });
  try {
    const a = await h.account();
    const b = await h.account();
    for (let i = 0; i < 3; i++) {
      assert.equal((await h.call("GET", "/items", { key: a.apiKey })).status, 200);
    }
    const r = await h.call("GET", "/items", { key: a.apiKey });
    expectError(r, 434);
    assert.equal(r.headers.get("retry-after"), "2");
    assert.equal((await h.call("GET", "/items", { key: b.apiKey })).status, 200);
  } finally {
    await h.close();
  }
});

Deno.test("internal errors answer 18/500 without details", async () => {
  const dir = await Deno.makeTempDir();
  const client = createClient({ url: `file:${dir}/mail.db` });
  const mail = await createMailServer({
    client,
    blobDir: `${dir}/blobs`,
    operatorToken: OPERATOR_TOKEN,
  });
  // every answer, the 500 too, is checked against the OpenAPI document
  const checker = new ResponseChecker();
  const checked = checker.wrap((request, info) => mail.fetch(request, info));
  const server = { fetch: (request: Request) => checked(request, {} as Deno.ServeHandlerInfo) };
  const { account_id } = await (await server.fetch(
    new Request("http://x/api/account-docs/v2/mailroom/accounts", {
      method: "POST",
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
      body: JSON.stringify({ name: "A" }),
    }),
  )).json();
  const { api_key } = await (await server.fetch(
    new Request(`http://x/api/account-docs/v2/mailroom/accounts/${account_id}/api-keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
      body: "{}",
    }),
  )).json();
  await client.execute("DROP TABLE mail_items");
  const errors: unknown[] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => errors.push(args);
  try {
    const res = await server.fetch(
      new Request("http://x/api/account-docs/v2/items", { headers: { "x-api-key": api_key } }),
    );
    assert.equal(res.status, 500);
    assert.deepEqual(await res.json(), { code: 18, message: "Database error" });
    assert.equal(errors.length, 1);
    assert.ok(!JSON.stringify(errors).includes(api_key), "no secret in the log");
    checker.assertClean();
    assert.ok(checker.seen.has("GET /items 500"));
  } finally {
    console.error = original;
    await mail.close();
    client.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("file links: 9403 for a bad or expired signature", async () => {
  let now = Date.now();
  const h = await startMail({ now: () => now, fileLinkTtlSeconds: 60 });
  try {
    const a = await h.account();
    await h.receive(a.addressIds[0]);
    const [item] = (await a.client.listItems()).data;
    const url = new URL(item.cover_image!);
    const ok = await fetch(url);
    assert.equal(ok.status, 200);
    await ok.body?.cancel();
    const tampered = new URL(url);
    const signature = url.searchParams.get("signature")!;
    // A different first character (a fixed "A" would leave 1 signature in 64 unchanged).
    const first = signature[0] === "A" ? "B" : "A";
    tampered.searchParams.set("signature", first + signature.slice(1));
    const r1 = await fetch(tampered);
    expectError({ status: r1.status, body: await r1.json() }, 9403);
    const other = new URL(url.href.replace("/covers/", "/scans/"));
    const r2 = await fetch(other);
    expectError({ status: r2.status, body: await r2.json() }, 9403);
    now += 3600_000;
    const r3 = await fetch(url);
    expectError({ status: r3.status, body: await r3.json() }, 9403);
  } finally {
    await h.close();
  }
});

Deno.test("a Host header that makes no URL is answered 400 code 19, never 500", async () => {
  const h = await startMail();
  try {
    const port = Number(new URL(h.base).port);
    for (const host of ["! !", "a b", "[::1", "x%zz"]) {
      for (const path of ["/api/account-docs/v2/", "/api/account-docs/v2/items"]) {
        const res = await withHost(port, "GET", path, host);
        assert.equal(res.status, 400, `${host} ${path}`);
        assert.equal(JSON.parse(res.body).code, 19);
      }
    }
  } finally {
    await h.close();
  }
});
