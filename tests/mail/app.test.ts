/** The reference app mounts the mail API at /api/account-docs/v2 on its libSQL database. */
import assert from "node:assert/strict";
import { createApp } from "../../app/main.ts";
import { loadAppEnv } from "../../app/env.ts";
import { MailClient, MailroomClient } from "../../mail.ts";
import { ResponseChecker } from "./_openapi.ts";

Deno.test("reference app: mail API mounted at /api/account-docs/v2", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-app-mail-" });
  const env = loadAppEnv({
    DATABASE_URL: `file:${dir}/app.db`,
    MAIL_BLOB_DIR: `${dir}/blobs`,
    MAIL_OPERATOR_TOKEN: "app-operator-token-for-tests",
  });
  const app = await createApp(env);
  // every answer under the API's path is checked against the OpenAPI document
  const checker = new ResponseChecker();
  const fetchApp = checker.fetch((input: RequestInfo | URL, init?: RequestInit) =>
    Promise.resolve(app.fetch(new Request(input, init)))
  );
  try {
    const base = "http://app.test/api/account-docs/v2";
    const index = await fetchApp("http://app.test/");
    assert.match(await index.text(), /Mail-scanning API/);
    const landing = await fetchApp(`${base}/`);
    assert.equal((await landing.json()).openapi, `${base}/openapi.json`);
    const doc = await fetchApp(`${base}/openapi.json`);
    assert.equal((await doc.json()).openapi, "3.1.0");
    const ops = new MailroomClient({
      baseUrl: base,
      operatorToken: "app-operator-token-for-tests",
      fetch: fetchApp,
    });
    const { account_id } = await ops.createAccount({ name: "App", sandbox: true });
    const { user_id } = await ops.createUser(account_id, "Ann");
    await ops.createAddress(account_id, user_id);
    const { api_key } = await ops.createApiKey(account_id);
    const client = new MailClient({ baseUrl: base, apiKey: api_key, fetch: fetchApp });
    await client.createTestItem();
    const page = await client.listItems();
    assert.equal(page.total, 1);
    assert.ok(page.data[0].cover_image?.startsWith(`${base}/files/covers/`));
    const cover = await fetchApp(page.data[0].cover_image!);
    assert.equal(cover.headers.get("content-type"), "image/svg+xml");
    await cover.body?.cancel();
    const wrong = await fetchApp(`${base}/items`, { method: "DELETE" });
    assert.deepEqual([wrong.status, (await wrong.json()).code], [405, 432]);
    assert.equal(wrong.headers.get("allow"), "GET, HEAD");
    const page2 = await fetchApp(`${base}/docs`);
    assert.equal(page2.status, 200);
    await page2.body?.cancel();
    checker.assertClean();
    assert.ok(checker.seen.size >= 9, [...checker.seen].join(", "));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
