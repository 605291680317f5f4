/**
 * The console's webhook form refuses internal targets as the mailroom API does (it goes
 * through it): the page says why and how to allow one, nothing is saved and a recording
 * listener on loopback gets nothing; `MAIL_WEBHOOK_ALLOW` is what lets one through, and a
 * malformed entry in it is refused naming the variable.
 */
import assert from "node:assert/strict";
import { MailroomClient } from "../../../mail.ts";
import { loadAppEnv } from "../../../app/env.ts";
import { webhookAllow } from "../../../app/mail.ts";
import { OWNER, post, signIn, startConsoleApp, textOf } from "./_harness.ts";

const OPERATOR = "development-only-mail_operator_token-do-not-use-in-production";

Deno.test("console mail webhooks: internal targets are refused on the form (400, the reason shown), nothing saved; MAIL_WEBHOOK_ALLOW lets one through", async () => {
  const hits: string[] = [];
  const rx = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    hits.push(req.url);
    return new Response(null, { status: 204 });
  });
  const port = rx.addr.port;
  const app = await startConsoleApp({ MAIL_WEBHOOK_ALLOW: `127.0.0.1:${port}` });
  try {
    const ops = new MailroomClient({
      baseUrl: `${app.origin}/api/account-docs/v2`,
      operatorToken: OPERATOR,
    });
    const { account_id } = await ops.createAccount({ name: "Hooks Co" });
    const b = await signIn(app.origin, OWNER.email, OWNER.password);
    const register = async (url: string) => {
      const page = await b.get(`/admin/mail/webhooks?account=${account_id}`);
      return await post(b, "/admin/mail/webhooks", page.body, {
        account: account_id,
        url,
        "event_rule.changed": "1",
      });
    };
    const cases: [string, RegExp][] = [
      [
        "http://169.254.169.254/latest/meta-data/",
        /169\.254\.169\.254 is a cloud metadata address/,
      ],
      [
        "http://metadata.google.internal/",
        /metadata\.google\.internal is a cloud metadata address/,
      ],
      [`http://localhost:${port}/`, /localhost is a loopback address/],
      ["http://127.0.0.1:2019/stop", /127\.0\.0\.1:2019 is a loopback address/],
      ["http://[::ffff:10.0.0.1]/", /is a private address/],
    ];
    for (const [url, why] of cases) {
      const r = await register(url);
      assert.equal(r.status, 400, url);
      const text = textOf(r.body);
      assert.match(text, why, url);
      assert.match(text, /MAIL_WEBHOOK_ALLOW/);
      assert.match(text, /This account has no webhook yet\./);
    }
    assert.deepEqual((await ops.getAccount(account_id)).webhooks, []);
    // the allowed target (that port only) is saved
    const ok = await register(`http://127.0.0.1:${port}/hook`);
    assert.match(textOf(ok.body), /The webhook's signing secret/);
    assert.deepEqual(
      (await ops.getAccount(account_id)).webhooks.map((w) => w.url),
      [`http://127.0.0.1:${port}/hook`],
    );
    assert.deepEqual(hits, []);
  } finally {
    await app.close();
    await rx.shutdown();
  }
});

Deno.test("MAIL_WEBHOOK_ALLOW: comma-separated entries; a malformed one is refused naming the variable", () => {
  assert.deepEqual(
    webhookAllow(
      loadAppEnv({ MAIL_WEBHOOK_ALLOW: " 127.0.0.1:3000, 10.20.0.0/16 ,hooks.internal," }),
    ),
    ["127.0.0.1:3000", "10.20.0.0/16", "hooks.internal"],
  );
  assert.deepEqual(webhookAllow(loadAppEnv({})), []);
  assert.throws(
    () => webhookAllow(loadAppEnv({ MAIL_WEBHOOK_ALLOW: "10.0.0.0/99" })),
    /^Error: MAIL_WEBHOOK_ALLOW: webhook allowTargets: "10\.0\.0\.0\/99" is not an IP address/,
  );
});
