/**
 * The multi-user site checks a password-reset link when it is opened: a live link shows the
 * form; a used, expired, forged or cut-short one gets a 400 page that says so in words with
 * the next step (ask for a new link), never the form; opening a link changes nothing.
 */
import assert from "node:assert/strict";
import { signToken } from "../../mod.ts";
import {
  DEV_TOKEN_SECRET,
  lastMail,
  makeUser,
  startConsoleApp,
  textOf,
} from "./console/_harness.ts";
import { Browser } from "./_relay_harness.ts";

const html = { accept: "text/html", "sec-fetch-site": "same-origin" };

async function askForLink(b: Browser, db: Parameters<typeof lastMail>[0], email: string) {
  const sent = await b.send("/users/api/auth/forgot", {
    method: "POST",
    headers: html,
    body: new URLSearchParams({ email }),
  });
  assert.equal(sent.status, 303);
  // The mail is sent after the answer; the outbox page waits for it.
  await b.get("/users/outbox");
  const mail = await lastMail(db, email);
  return mail!.text.match(/(https?:\/\/\S+\/users\/reset\?token=\S+)/)![1];
}

function assertDeadLinkPage(res: { status: number; body: string }, why: RegExp): void {
  assert.equal(res.status, 400);
  const text = textOf(res.body);
  assert.match(text, /This reset link no longer works/);
  assert.match(text, why);
  assert.match(text, /Your password is unchanged/);
  assert.match(res.body, /<a class="button" href="\/users\/forgot">Send me a new link<\/a>/);
  assert.match(res.body, /href="\/users\/login">Sign in<\/a>/);
  assert.doesNotMatch(res.body, /<form|type="password"/, "no form on a dead link");
}

Deno.test("reset link: checked when opened; used, expired, forged and cut-short links say so with the next step", async () => {
  const app = await startConsoleApp();
  try {
    const email = "rita@example.com";
    const userId = await makeUser(app.db, email);
    const b = new Browser(app.origin);
    const link = await askForLink(b, app.db, email);
    const token = new URL(link).searchParams.get("token")!;

    // Live: the form, with the token; opening it twice uses nothing.
    for (let i = 0; i < 2; i++) {
      const open = await b.get(link);
      assert.equal(open.status, 200);
      assert.match(open.body, /type="password"/);
      assert.ok(open.body.includes(`value="${token}"`), "the token is in the form");
      assert.doesNotMatch(textOf(open.body), /no longer works/);
    }

    // Expired: a token for this very account and stamp, issued two hours ago (links live one).
    const { stamp } = (await app.db.prepare("SELECT stamp FROM users WHERE id = ?").bind(userId)
      .first<{ stamp: string }>())!;
    const old = await signToken(DEV_TOKEN_SECRET, {
      purpose: "gatehouse.password-reset",
      payload: { u: userId, s: stamp },
      ttlSeconds: 3600,
      now: Date.now() - 2 * 3600_000,
    });
    assertDeadLinkPage(
      await b.get(`/users/reset?token=${encodeURIComponent(old)}`),
      /already used or has expired \(a link works for 1 hour\)/,
    );
    // Forged, and cut short.
    assertDeadLinkPage(await b.get("/users/reset?token=x.y"), /already used or has expired/);
    assertDeadLinkPage(await b.get("/users/reset"), /This link is incomplete/);
    assertDeadLinkPage(await b.get("/users/reset?token="), /This link is incomplete/);

    // None of that touched the live link: it sets the password.
    const used = await b.send("/users/api/auth/reset", {
      method: "POST",
      headers: html,
      body: new URLSearchParams({ token, password: "rita's brand new passphrase" }),
    });
    assert.equal(used.status, 303);
    assert.equal(used.location, `${app.origin}/users/login?reset=1`);

    // Used: opening it again says so at once, with the way to a new link.
    assertDeadLinkPage(await b.get(link), /already used or has expired/);
    // A form sent from a page opened before the link was used lands on the same page.
    const late = await b.send("/users/api/auth/reset", {
      method: "POST",
      headers: html,
      body: new URLSearchParams({ token, password: "yet another passphrase" }),
    });
    assert.equal(late.status, 303);
    assertDeadLinkPage(await b.get(late.location!), /already used or has expired/);
    // A script still gets the spec's JSON error.
    const json = await b.send("/users/api/auth/reset", {
      method: "POST",
      headers: { accept: "application/json", "sec-fetch-site": "same-origin" },
      body: new URLSearchParams({ token, password: "yet another passphrase" }),
    });
    assert.equal(json.status, 400);
    assert.deepEqual(JSON.parse(json.body), { error: "invalid_token" });

    // The next step works: a new link is live.
    const fresh = await askForLink(b, app.db, email);
    assert.notEqual(fresh, link);
    assert.equal((await b.get(fresh)).status, 200);
  } finally {
    await app.close();
  }
});
