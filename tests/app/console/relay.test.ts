/**
 * The relay sites screen over HTTP: return URLs the broker could never use are refused in
 * words; a registered site's secret is shown once and a relay sign-in through the broker
 * completes with it; rotation makes the old secret useless; removal stops the broker.
 * Also the console's own sign-in through the broker (`CONSOLE_SSO=relay`).
 */
import assert from "node:assert/strict";
import { verifyRelay } from "../../../mod.ts";
import { findRelaySite } from "../../../app/relay_registry.ts";
import { listAudit } from "../../../d1.ts";
import { createClient } from "@libsql/client";
import { consent, throughBroker } from "../_relay_harness.ts";
import { Browser, makeUser, OWNER, post, signIn, startConsoleApp, textOf } from "./_harness.ts";

function secretIn(html: string): string {
  const m = html.match(/<p class="secret" id="relay-secret"[^>]*>([^<]+)<\/p>/);
  if (!m) throw new Error("no secret shown");
  return m[1];
}

Deno.test("console relay: register (secret shown once), sign in through the broker, edit, rotate, remove", async () => {
  const app = await startConsoleApp();
  // The relay site itself: its callback is where the broker sends the browser back.
  const site = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response("site"),
  );
  const callback = `http://127.0.0.1:${site.addr.port}/auth/relay/callback`;
  const client = createClient({ url: `file:${app.dir}/app.db` });
  try {
    const b = await signIn(app.origin, OWNER.email, OWNER.password);
    const list = await b.get("/admin/relay");
    assert.match(textOf(list.body), /relay-demo/);

    const bad = await post(b, "/admin/relay", list.body, {
      id: "Billing App",
      name: "Billing",
      return_urls: `${callback}?next=/\n//evil.example/cb\nftp://x/`,
    });
    assert.equal(bad.status, 400);
    const words = textOf(bad.body);
    assert.match(words, /The id has 1 to 63 lower-case letters/);
    assert.match(words, /a return URL has no query/);
    assert.match(words, /a path starts with one slash/);
    assert.match(words, /give an absolute http\(s\) URL or a path/);
    assert.equal(await findRelaySite(client, "billing-app"), null);

    const made = await post(b, "/admin/relay", list.body, {
      id: "billing-app",
      name: "Billing",
      return_urls: callback,
    });
    assert.equal(made.status, 200);
    assert.match(textOf(made.body), /It is shown only this once/);
    const secret = secretIn(made.body);
    assert.ok(secret.length >= 40);
    assert.ok(
      !(await b.get("/admin/relay/billing-app")).body.includes(secret),
      "never shown again",
    );

    // A relay sign-in with the new site: the browser comes back with a token only its secret opens.
    const browser = new Browser(app.origin);
    const nonce = "n".repeat(24);
    const start = `/broker/start?site=billing-app&return_to=${encodeURIComponent(callback)}` +
      `&nonce=${nonce}&provider=github`;
    const back = new URL(await throughBroker(browser, start, "someone@example.com"));
    assert.equal(back.origin + back.pathname, callback);
    const claims = await verifyRelay(secret, back.searchParams.get("relay")!);
    assert.equal(claims?.email, "someone@example.com");
    assert.equal(claims?.nonce, nonce);

    const page = await b.get("/admin/relay/billing-app");
    const other = `http://127.0.0.1:${site.addr.port}/other/callback`;
    const saved = await post(b, "/admin/relay/billing-app", page.body, {
      name: "Billing (new)",
      return_urls: `${other}\n/billing/callback`,
    });
    assert.equal(saved.status, 303);
    assert.match(
      textOf((await b.get(saved.location!)).body),
      /Saved: the broker uses the new return URLs now/,
    );
    const refusedOld = await new Browser(app.origin).get(start);
    assert.equal(refusedOld.status, 400, "the old return URL is no longer allowed");
    assert.match(textOf(refusedOld.body), /This return address is not registered for the site/);

    const rotated = await post(b, "/admin/relay/billing-app/rotate", page.body);
    const fresh = secretIn(rotated.body);
    assert.notEqual(fresh, secret);
    const again = new URL(
      await throughBroker(
        new Browser(app.origin),
        `/broker/start?site=billing-app&return_to=${
          encodeURIComponent(other)
        }&nonce=${nonce}&provider=github`,
        "someone@example.com",
      ),
    );
    const token = again.searchParams.get("relay")!;
    assert.equal(await verifyRelay(secret, token), null, "the old secret no longer opens tokens");
    assert.equal((await verifyRelay(fresh, token))?.email, "someone@example.com");

    const confirm = await b.get("/admin/relay/billing-app/remove");
    assert.match(textOf(confirm.body), /Remove billing-app\?/);
    const removed = await post(b, "/admin/relay/billing-app/remove", confirm.body);
    assert.match(textOf((await b.get(removed.location!)).body), /The site was removed/);
    const gone = await new Browser(app.origin).get(start);
    assert.match(textOf(gone.body), /This site is not registered with the broker/);

    const audit = await listAudit(app.db, { target: "relay:billing-app" });
    assert.ok(audit.ok);
    assert.deepEqual(audit.entries.map((e) => e.action), [
      "relay.remove",
      "relay.rotate_secret",
      "relay.update",
      "relay.register",
    ]);
    assert.deepEqual(audit.entries[2].before, { name: "Billing", returnUrls: [callback] });
    assert.ok(!JSON.stringify(audit.entries).includes(secret), "no secret in the log");
    assert.ok(!JSON.stringify(audit.entries).includes(fresh), "no secret in the log");
    // The console's own registration cannot be rotated or removed here.
    const own = await b.get("/admin/relay/console");
    assert.match(textOf(own.body), /This is the console's own registration/);
    assert.doesNotMatch(own.body, /\/rotate"/);
  } finally {
    client.close();
    await site.shutdown();
    await app.close();
  }
});

Deno.test("console sign-in: through the relay broker (CONSOLE_SSO=relay) and directly with a provider", async () => {
  const app = await startConsoleApp({ CONSOLE_SSO: "relay" });
  try {
    await makeUser(app.db, "admin@example.com", { admin: true });
    const login = await new Browser(app.origin).get("/admin/login");
    assert.match(login.body, /href="\/admin\/api\/auth\/relay\/start\?provider=github"/);
    const b = new Browser(app.origin);
    const start = await b.get("/admin/api/auth/relay/start?provider=github");
    assert.match(start.location ?? "", /\/broker\/start\?site=console&/);
    const back = await throughBroker(b, start.location!, "admin@example.com");
    const done = await b.get(back);
    assert.equal(done.status, 302);
    assert.match(done.location ?? "", /\/admin\/$/);
    assert.equal((await b.get("/admin/")).status, 200);
    // Someone else gets the refusal page and no session.
    const stranger = new Browser(app.origin);
    const s2 = await stranger.get("/admin/api/auth/relay/start?provider=github");
    const refused = await stranger.get(
      await throughBroker(stranger, s2.location!, "nobody@example.com"),
    );
    assert.equal(refused.status, 403);
    assert.match(textOf(refused.body), /This account may not use the console/);
    assert.equal((await stranger.get("/admin/")).status, 302);
    // A token without the nonce this browser kept is refused.
    const replay = await new Browser(app.origin).get(back);
    assert.match(replay.location ?? "", /oauth_error=relay_invalid/);
  } finally {
    await app.close();
  }
  const direct = await startConsoleApp();
  try {
    const b = new Browser(direct.origin);
    const start = await b.get("/admin/api/auth/oauth/github/start");
    const back = await consent(b, start.location!, OWNER.email);
    const done = await b.get(back);
    assert.match(done.location ?? "", /\/admin\/$/);
    assert.match(
      textOf((await b.get("/admin/")).body),
      /Signed in as owner@example\.com \(owner\)/,
    );
  } finally {
    await direct.close();
  }
});
