/**
 * `TRUSTED_PROXIES` of the reference app, as a real process: a CIDR range (which
 * `.env.example` offers) is honoured, so clients behind a proxy of that range are counted
 * apart by the throttles; before, a range was accepted and ignored, every client shared the
 * proxy's address, and one guesser locked out everyone behind it. An entry that is not an
 * address or range stops the app at start, naming the variable.
 */
import assert from "node:assert/strict";
import { START, startAppProcess } from "../e2e/_process.ts";
import { ResponseChecker } from "../mail/_openapi.ts";

const TOKEN = "trusted-proxies-operator-token-0123456789";

async function mailKey(base: string, fetch: typeof globalThis.fetch): Promise<string> {
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
  return key.api_key;
}

async function items(
  base: string,
  key: string,
  client: string,
  fetch: typeof globalThis.fetch,
): Promise<number> {
  const r = await fetch(`${base}/items`, {
    headers: { "x-api-key": key, "x-forwarded-for": client },
  });
  await r.body?.cancel();
  return r.status;
}

for (const list of ["127.0.0.0/8", "10.1.0.0/16, 127.0.0.1/32", "::ffff:127.0.0.1"]) {
  Deno.test(`TRUSTED_PROXIES=${list}: clients behind the proxy are counted apart`, async () => {
    const app = await startAppProcess({ TRUSTED_PROXIES: list, MAIL_OPERATOR_TOKEN: TOKEN });
    // every answer of the mail API is checked against its OpenAPI document
    const mail = new ResponseChecker();
    const f = mail.fetch();
    try {
      const base = `http://127.0.0.1:${app.port}/api/account-docs/v2`;
      const key = await mailKey(base, f);
      for (let i = 0; i < 10; i++) {
        assert.equal(await items(base, `gh_live_x${i}`, "203.0.113.1", f), 401);
      }
      assert.equal(await items(base, "gh_live_x10", "203.0.113.1", f), 429, "the guesser waits");
      assert.equal(
        await items(base, key, "203.0.113.2", f),
        200,
        "another client behind the proxy",
      );
      mail.assertClean();
      assert.equal(mail.seen.size, 5, [...mail.seen].join(", "));
    } finally {
      await app.close();
    }
  });
}

Deno.test("TRUSTED_PROXIES with an entry that is no address or range: the app does not start", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-proxies-" });
  try {
    for (const bad of ["proxy.internal", "10.0.0.0/33", "127.0.0.1, 300.1.1.1"]) {
      const child = new Deno.Command(Deno.execPath(), {
        args: START,
        cwd: new URL("../../", import.meta.url).pathname,
        env: {
          PORT: "0",
          DATABASE_URL: `file:${dir}/app.db`,
          MAIL_BLOB_DIR: `${dir}/blobs`,
          TRUSTED_PROXIES: bad,
          NO_COLOR: "1",
        },
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      // A process that starts (and keeps running) is stopped: the assertion below then fails.
      const watchdog = setTimeout(() => child.kill("SIGKILL"), 30000);
      const out = await child.output();
      clearTimeout(watchdog);
      const text = new TextDecoder().decode(out.stderr) + new TextDecoder().decode(out.stdout);
      assert.equal(out.code, 1, `TRUSTED_PROXIES=${bad} was accepted: ${text}`);
      assert.match(text, /TRUSTED_PROXIES/);
      assert.ok(text.includes(bad.split(", ").at(-1)!), text);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
