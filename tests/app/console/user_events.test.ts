/**
 * The users screen's sign-in side of one account: its sign-in events (written by the users
 * site through `authEventStore`), its second factor and passkeys, and the operator's recovery
 * that removes a lost authenticator app (in the audit log too).
 */
import assert from "node:assert/strict";
import {
  authEventStore,
  confirmTotpEnrolment,
  listAudit,
  listAuthEvents,
  login,
  startTotpEnrolment,
} from "../../../d1.ts";
import { Browser } from "./_harness.ts";
import {
  DEV_TOKEN_SECRET,
  makeUser,
  OWNER,
  post,
  signIn,
  startConsoleApp,
  textOf,
} from "./_harness.ts";
import { appCode } from "../../d1/_totp.ts";
import { consent } from "../_relay_harness.ts";

const PASSWORD = "correct horse battery staple";

Deno.test("console users: an account's sign-in events and second factor; the operator removes a lost app", async () => {
  const app = await startConsoleApp();
  try {
    const email = "grace.hopper@example.com";
    const id = await makeUser(app.db, email);
    // Through the users site: a wrong password, then the right one.
    const visitor = new Browser(app.origin);
    for (const password of ["not her password", PASSWORD]) {
      await visitor.send("/users/api/auth/login", {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify({ email, password }),
      });
    }
    const onEvent = authEventStore(app.db);
    const now = Date.now();
    const s = await startTotpEnrolment(app.db, {
      userId: id,
      password: PASSWORD,
      iterations: 1000,
      secret: DEV_TOKEN_SECRET,
      issuer: "Console test",
    });
    assert.ok(s.ok);
    const c = await confirmTotpEnrolment(app.db, {
      userId: id,
      code: appCode(s.secret, now),
      secret: DEV_TOKEN_SECRET,
      onEvent,
    });
    assert.ok(c.ok);

    const b = await signIn(app.origin, OWNER.email, OWNER.password);
    const page = await b.get(`/admin/users/${id}`);
    assert.equal(page.status, 200);
    const text = textOf(page.body);
    assert.match(text, /Sign-in events/);
    assert.match(text, /Sign-in failed.*error: invalid_credentials/s);
    assert.match(text, /Signed in.*method: password/s);
    assert.match(text, /Factor added.*factor: totp/s);
    assert.match(text, /Backup codes left\s*10/);
    assert.ok(text.indexOf("Factor added") < text.indexOf("Sign-in failed"), "newest first");

    const reset = await post(b, `/admin/users/${id}/reset-factor`, page.body);
    assert.equal(reset.status, 303);
    const after = await b.get(reset.location!);
    assert.match(textOf(after.body), /Their authenticator app was removed/);
    assert.match(textOf(after.body), /Authenticator app\s*Not set up/);
    assert.match(textOf(after.body), /Factor removed.*by: operator/s);
    const audit = await listAudit(app.db, { action: "user.reset_second_factor" });
    assert.ok(audit.ok);
    assert.equal(audit.entries.length, 1);
    assert.equal(audit.entries[0].target, `user:${id}`);
    assert.deepEqual(
      await login(app.db, {
        email,
        password: PASSWORD,
        iterations: 1000,
        secret: DEV_TOKEN_SECRET,
      }),
      { ok: true, userId: id },
    );
  } finally {
    await app.close();
  }
});

Deno.test("console sign-in: a provider sign-in to the console is a sign-in event of the account, as on the users site", async () => {
  const app = await startConsoleApp();
  try {
    const admin = "ada.admin@example.com";
    const id = await makeUser(app.db, admin, { admin: true });
    const b = new Browser(app.origin);
    const start = await b.get("/admin/api/auth/oauth/github/start");
    const done = await b.get(await consent(b, start.location!, admin));
    assert.match(done.location ?? "", /\/admin\/$/);
    const listed = await listAuthEvents(app.db, { userId: id });
    assert.ok(listed.ok);
    assert.deepEqual(
      listed.events.map((e) => [e.type, e.detail.method, e.detail.provider, e.client]),
      [["sign_in.succeeded", "oauth", "github", "127.0.0.1"]],
    );
    // The users screen lists it with the account's other sign-ins.
    const owner = await signIn(app.origin, OWNER.email, OWNER.password);
    const page = textOf((await owner.get(`/admin/users/${id}`)).body);
    assert.match(page, /Sign-in events.*Signed in.*method: oauth.*provider: github/s);
  } finally {
    await app.close();
  }
});
