/**
 * The users screen over HTTP, as a browser without JavaScript uses it: find one account among
 * 10,000, promote and demote it (never the last administrator), sign it out everywhere (its
 * next request is signed out), resend a signup code, delete it after a confirmation page;
 * every change in the audit log.
 */
import assert from "node:assert/strict";
import { listAudit } from "../../../d1.ts";
import {
  Browser,
  lastMail,
  makeUser,
  OWNER,
  post,
  seedUsers,
  signIn,
  startConsoleApp,
  textOf,
} from "./_harness.ts";

Deno.test("console users: search among 10,000, pages, promote, demote, the last administrator stays", async () => {
  const app = await startConsoleApp();
  try {
    await seedUsers(app.db, 10_000);
    const ada = await makeUser(app.db, "ada.lovelace@example.com");
    const b = await signIn(app.origin, OWNER.email, OWNER.password);

    const all = await b.get("/admin/users");
    assert.equal(all.status, 200);
    assert.match(textOf(all.body), /10002 accounts\./);
    const next = all.body.match(/href="(\/admin\/users\?after=[^"]+)"/)![1].replace(/&amp;/g, "&");
    const second = await b.get(next);
    assert.match(textOf(second.body), /Previous page/);
    assert.match(textOf(second.body), /user-00049@seed\.example/);

    const found = await b.get("/admin/users?search=ADA.LOVE");
    assert.match(textOf(found.body), /1 account matches “ADA\.LOVE”/);
    assert.ok(found.body.includes(`/admin/users/${ada}`));
    const byName = await b.get("/admin/users?search=seeded%20person%2007");
    assert.match(textOf(byName.body), /accounts match “seeded person 07”/);
    assert.doesNotMatch(textOf(byName.body), /user-00001@/);

    const detail = await b.get(`/admin/users/${ada}`);
    assert.match(textOf(detail.body), /Make administrator/);
    const up = await post(b, `/admin/users/${ada}/admin`, detail.body, { admin: "1" });
    assert.equal(up.status, 303);
    const promoted = await b.get(up.location!);
    assert.match(textOf(promoted.body), /They are now an administrator\./);
    const admins = await b.get("/admin/users?admins=1");
    assert.match(textOf(admins.body), /2 accounts with administration/);

    const down = await post(b, `/admin/users/${ada}/admin`, promoted.body, { admin: "0" });
    assert.match(textOf((await b.get(down.location!)).body), /They are no longer an administrator/);

    // The owner is now the only administrator: it cannot withdraw its own right.
    const me = await b.get("/admin/users?search=owner%40");
    const ownerId = me.body.match(/\/admin\/users\/([0-9a-f-]{36})/)![1];
    const myPage = await b.get(`/admin/users/${ownerId}`);
    assert.match(textOf(myPage.body), /Stop being an administrator/);
    const refused = await post(b, `/admin/users/${ownerId}/admin`, myPage.body, { admin: "0" });
    const after = await b.get(refused.location!);
    assert.match(
      textOf(after.body),
      /This is the last administrator: make someone else an administrator first\./,
    );
    assert.match(textOf(after.body), /Stop being an administrator/, "still an administrator");

    const audit = await listAudit(app.db, { action: "user." });
    assert.ok(audit.ok);
    assert.deepEqual(audit.entries.map((e) => [e.action, e.target, e.actorEmail]), [
      ["user.demote", `user:${ada}`, OWNER.email],
      ["user.promote", `user:${ada}`, OWNER.email],
    ]);
    assert.deepEqual(audit.entries[1].before, {
      email: "ada.lovelace@example.com",
      name: null,
      isAdmin: false,
    });
    assert.deepEqual(audit.entries[1].after, {
      email: "ada.lovelace@example.com",
      name: null,
      isAdmin: true,
    });
  } finally {
    await app.close();
  }
});

Deno.test("console users: sign out everywhere, resend a signup code, delete after confirming", async () => {
  const app = await startConsoleApp();
  try {
    const grace = await makeUser(app.db, "grace@example.com");
    // Grace signs in to the multi-user site.
    const her = new Browser(app.origin);
    const login = await her.send("/users/api/auth/login", {
      method: "POST",
      headers: { accept: "text/html" },
      body: new URLSearchParams({
        email: "grace@example.com",
        password: "correct horse battery staple",
      }),
    });
    assert.equal(login.status, 303);
    assert.equal((await her.get("/users/")).status, 200);

    const b = await signIn(app.origin, OWNER.email, OWNER.password);
    const page = await b.get(`/admin/users/${grace}`);
    const out = await post(b, `/admin/users/${grace}/sign-out`, page.body);
    assert.match(
      textOf((await b.get(out.location!)).body),
      /Every session of this account has ended/,
    );
    const next = await her.get("/users/");
    assert.equal(next.status, 302, "her next request is signed out");
    assert.match(next.location ?? "", /\/users\/api\/auth\/login$/);

    // An unverified signup whose code got lost: a fresh code, usable with her own signup.
    const pending = new Browser(app.origin);
    const signup = await pending.send("/users/api/auth/signup", {
      method: "POST",
      headers: { accept: "text/html" },
      body: new URLSearchParams({
        email: "linus@example.com",
        password: "another fine passphrase",
      }),
    });
    assert.equal(signup.status, 303);
    const list = await b.get("/admin/users?search=linus");
    const linus = list.body.match(/\/admin\/users\/([0-9a-f-]{36})/)![1];
    const linusPage = await b.get(`/admin/users/${linus}`);
    assert.match(textOf(linusPage.body), /Not verified/);
    const early = await post(b, `/admin/users/${linus}/resend`, linusPage.body);
    assert.match(
      textOf((await b.get(early.location!)).body),
      /A code was sent less than a minute ago/,
    );
    // A minute later (the code's send time moved back by a minute):
    await app.db.prepare("UPDATE otp_codes SET sent_at = sent_at - 61000 WHERE email = ?")
      .bind("linus@example.com").run();
    const resent = await post(b, `/admin/users/${linus}/resend`, linusPage.body);
    assert.match(textOf((await b.get(resent.location!)).body), /A new signup code is on its way/);
    const code = (await lastMail(app.db, "linus@example.com"))!.text.match(/\b(\d{6})\b/)![1];
    const verified = await pending.send("/users/api/auth/verify", {
      method: "POST",
      headers: { accept: "text/html" },
      body: new URLSearchParams({ email: "linus@example.com", code }),
    });
    assert.equal(verified.status, 303);
    assert.match(verified.location ?? "", /\/users\/$/);

    // Delete: a confirmation page first; then the account, its sessions and a notice.
    const again = await her.send("/users/api/auth/login", {
      method: "POST",
      headers: { accept: "text/html" },
      body: new URLSearchParams({
        email: "grace@example.com",
        password: "correct horse battery staple",
      }),
    });
    assert.equal(again.status, 303);
    const confirm = await b.get(`/admin/users/${grace}/delete`);
    assert.match(textOf(confirm.body), /Delete grace@example\.com\? .*This cannot be undone/);
    const gone = await post(b, `/admin/users/${grace}/delete`, confirm.body);
    assert.equal(gone.status, 200);
    assert.match(
      textOf(gone.body),
      /The account of grace@example\.com was deleted\. They were sent an e-mail saying so\./,
    );
    assert.match((await lastMail(app.db, "grace@example.com"))!.subject, /deleted/i);
    assert.equal((await her.get("/users/")).status, 302);
    assert.equal((await b.get(`/admin/users/${grace}`)).status, 404);
    // Your own account cannot be deleted here.
    const own = await b.get("/admin/users?search=owner%40");
    const ownerId = own.body.match(/\/admin\/users\/([0-9a-f-]{36})/)![1];
    const self = await b.get(`/admin/users/${ownerId}/delete`);
    assert.equal(self.status, 303);
    assert.match(
      textOf((await b.get(self.location!)).body),
      /You cannot delete your own account here/,
    );
  } finally {
    await app.close();
  }
});
