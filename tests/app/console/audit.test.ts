/**
 * No change goes unrecorded: the console writes a change's audit entry before it makes the
 * change and refuses the change (503, nothing changed) when the log cannot be written; when
 * the entry cannot be filled in afterwards, it stays as an unfinished entry naming who, when
 * and which request; a request that changes nothing leaves no entry; a sign-in the log cannot
 * record signs no one in. The log is made to fail with SQLite triggers on `audit_log`.
 */
import assert from "node:assert/strict";
import { getUser, listAudit, UNFINISHED_AUDIT_ACTION } from "../../../d1.ts";
import { MailroomClient } from "../../../mail.ts";
import {
  auditCount,
  Browser,
  csrfIn,
  makeUser,
  OWNER,
  post,
  signIn,
  startConsoleApp,
  textOf,
} from "./_harness.ts";

const OPERATOR = "development-only-mail_operator_token-do-not-use-in-production";
const REFUSE_INSERT = `CREATE TRIGGER audit_full BEFORE INSERT ON audit_log
  BEGIN SELECT RAISE(ABORT, 'the audit log is full'); END`;
const REFUSE_UPDATE = `CREATE TRIGGER audit_frozen BEFORE UPDATE ON audit_log
  BEGIN SELECT RAISE(ABORT, 'the audit log is frozen'); END`;

Deno.test("console audit: a change the log cannot record is refused, and nothing changes", async () => {
  const app = await startConsoleApp();
  try {
    const ada = await makeUser(app.db, "ada@example.com");
    const b = await signIn(app.origin, OWNER.email, OWNER.password);
    const adaPage = await b.get(`/admin/users/${ada}`);
    const relayPage = await b.get("/admin/relay");
    const mailPage = await b.get("/admin/mail");
    const ops = new MailroomClient({
      baseUrl: `${app.origin}/api/account-docs/v2`,
      operatorToken: OPERATOR,
    });
    const accounts = (await ops.listAccounts()).total;
    const entries = await auditCount(app.db);

    await app.db.prepare(REFUSE_INSERT).run();
    try {
      // A user change (the toolkit's tables), a relay site (the broker's registry) and a mail
      // account (the mail API): each refused in words, none made.
      const refusals = [
        await post(b, `/admin/users/${ada}/admin`, adaPage.body, { admin: "1" }),
        await post(b, "/admin/relay", relayPage.body, {
          id: "billing",
          name: "Billing",
          return_urls: "https://billing.example/cb",
        }),
        await post(b, "/admin/mail", mailPage.body, { name: "Acme Corp" }),
      ];
      for (const r of refusals) {
        assert.equal(r.status, 503);
        assert.match(
          textOf(r.body),
          /The audit log cannot be written just now, and the console makes no change it cannot record\. Nothing was changed\./,
        );
      }
      const still = await getUser(app.db, ada);
      assert.ok(still.ok && !still.user.isAdmin, "not promoted");
      assert.doesNotMatch(textOf((await b.get("/admin/relay")).body), /billing\.example/);
      assert.equal((await ops.listAccounts()).total, accounts, "no mail account made");

      // A sign-in the log cannot record gives no session, and says why.
      const someone = new Browser(app.origin);
      const form = await someone.send("/admin/api/auth/login", {
        method: "POST",
        headers: { accept: "text/html", "sec-fetch-site": "same-origin" },
        body: new URLSearchParams({ email: OWNER.email, password: OWNER.password }),
      });
      assert.equal(form.status, 303);
      assert.match(form.location ?? "", /\/admin\/login\?error=unavailable&email=owner/);
      assert.equal(someone.cookies.size, 0, "no session cookie");
      const login = await someone.get(form.location!);
      assert.match(textOf(login.body), /The console cannot record sign-ins just now/);
      assert.equal((await someone.get("/admin/")).status, 302, "still signed out");
      const json = await someone.send("/admin/api/auth/login", {
        method: "POST",
        headers: { accept: "application/json", "sec-fetch-site": "same-origin" },
        body: new URLSearchParams({ email: OWNER.email, password: OWNER.password }),
      });
      assert.equal(json.status, 503);
      assert.deepEqual(JSON.parse(json.body), { error: "unavailable" });
    } finally {
      await app.db.prepare("DROP TRIGGER audit_full").run();
    }
    assert.equal(await auditCount(app.db), entries, "no entry was written");

    // With the log back, the same change goes through and is recorded.
    const up = await post(b, `/admin/users/${ada}/admin`, adaPage.body, { admin: "1" });
    assert.equal(up.status, 303);
    const log = await listAudit(app.db, { limit: 1 });
    assert.ok(log.ok);
    assert.deepEqual([log.entries[0].action, log.entries[0].target], [
      "user.promote",
      `user:${ada}`,
    ]);
  } finally {
    await app.close();
  }
});

Deno.test("console audit: an entry that cannot be filled in stays as unfinished; a request that changes nothing leaves none", async () => {
  const app = await startConsoleApp();
  try {
    const ada = await makeUser(app.db, "ada@example.com");
    const b = await signIn(app.origin, OWNER.email, OWNER.password);
    const page = await b.get(`/admin/users/${ada}`);
    const entries = await auditCount(app.db);

    // Nothing to change (a malformed form, a repeat): no entry, not even a reserved one.
    const malformed = await post(b, `/admin/users/${ada}/admin`, page.body, { admin: "yes" });
    assert.match(malformed.location ?? "", /error=invalid_input/);
    const resend = await post(b, `/admin/users/${ada}/resend`, page.body);
    assert.match(resend.location ?? "", /error=already_verified/);
    assert.equal(await auditCount(app.db), entries);

    await app.db.prepare(REFUSE_UPDATE).run();
    try {
      const up = await post(b, `/admin/users/${ada}/admin`, page.body, { admin: "1" });
      assert.equal(up.status, 303, "the change was made");
    } finally {
      await app.db.prepare("DROP TRIGGER audit_frozen").run();
    }
    const now = await getUser(app.db, ada);
    assert.ok(now.ok && now.user.isAdmin);
    const log = await listAudit(app.db, { limit: 1 });
    assert.ok(log.ok);
    const e = log.entries[0];
    assert.deepEqual(
      [e.action, e.target, e.actorEmail, e.before, e.after],
      [UNFINISHED_AUDIT_ACTION, `POST /admin/users/${ada}/admin`, OWNER.email, null, null],
    );
    const screen = await b.get("/admin/audit?action=audit.");
    const words = textOf(screen.body);
    assert.match(words, new RegExp(`audit\\.unfinished POST /admin/users/${ada}/admin`));
    assert.match(words, /Unfinished: written before the request/);
    csrfIn(screen.body); // the page is a whole console page
  } finally {
    await app.close();
  }
});
