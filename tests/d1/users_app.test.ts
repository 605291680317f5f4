/**
 * The multi-user demo site through HTTP requests: signup → code from the outbox → verify →
 * account page, sign-out, login, forgot → link from the outbox → reset → login, name change,
 * account removal. libSQL on a temp file; development mode, so mail goes to the outbox.
 */
import assert from "node:assert/strict";
import { Hono } from "hono";
import { getUserByEmail, listAuthEvents, openLibsql } from "../../d1.ts";
import { loadAppEnv } from "../../app/env.ts";
import { createUsersSite } from "../../app/users.ts";
import { refuseCrossSite } from "../../app/middleware/cross_site.ts";

const ORIGIN = "http://localhost";

Deno.test("users site: signup, verify, login, forgot, reset, name, password, e-mail change, delete; outbox shows the mail", async () => {
  const dir = await Deno.makeTempDir();
  const db = openLibsql(`file:${dir}/app.db`);
  try {
    const env = loadAppEnv({});
    // The app refuses cross-site posts in one middleware for every site (app/main.ts).
    const app = new Hono().use("*", refuseCrossSite(env)).route(
      "/users",
      await createUsersSite({ env, db, iterations: 1000 }),
    );
    const json = (path: string, body: Record<string, string>, cookie = "") =>
      app.request(`${ORIGIN}${path}`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json",
          origin: ORIGIN,
          cookie,
        },
        body: JSON.stringify(body),
      });
    const html = (path: string, body: Record<string, string>, cookie = "") =>
      app.request(`${ORIGIN}${path}`, {
        method: "POST",
        headers: { accept: "text/html", cookie },
        body: new URLSearchParams(body),
      });
    const outboxText = async () => await (await app.request(`${ORIGIN}/users/outbox`)).text();
    const cookieOf = (r: Response, name = "__Host-users-session") =>
      r.headers.getSetCookie().map((c) => c.split(";")[0]).find((c) => c.startsWith(`${name}=`)) ??
        "";

    assert.equal((await app.request(`${ORIGIN}/users/signup`)).status, 200);
    assert.equal((await app.request(`${ORIGIN}/users/`)).status, 302);
    const email = "ada@example.com";
    const s = await json("/users/api/auth/signup", {
      email,
      password: "correct horse battery staple",
    });
    assert.equal(s.status, 200);
    assert.deepEqual(await s.json(), {
      ok: true,
      redirect: `/users/verify?email=${encodeURIComponent(email)}`,
    });
    const signupCookie = cookieOf(s, "__Host-users-signup");
    assert.match(signupCookie, /^__Host-users-signup=[\w-]{43}$/);
    const box = await outboxText();
    assert.ok(box.includes(email));
    const code = box.match(/verification code is (\d{6})/)![1];
    const wrong = await json("/users/api/auth/verify", {
      email,
      code: code === "000000" ? "111111" : "000000",
    }, signupCookie);
    assert.equal(wrong.status, 400);
    assert.deepEqual(await wrong.json(), { error: "invalid_code" });
    // The code alone, from another browser than the one that signed up, verifies nothing.
    const elsewhere = await json("/users/api/auth/verify", { email, code });
    assert.equal(elsewhere.status, 400);
    assert.deepEqual(await elsewhere.json(), { error: "invalid_code" });
    const v = await json("/users/api/auth/verify", { email, code }, signupCookie);
    assert.equal(v.status, 200);
    let cookie = cookieOf(v);
    assert.match(cookie, /^__Host-users-session=/);
    // The account's events: the code's sign-in, after the two refused codes.
    const ada = await getUserByEmail(db, email);
    assert.ok(ada.ok);
    const events = await listAuthEvents(db, { userId: ada.user.id });
    assert.ok(events.ok);
    assert.deepEqual(events.events.map((e) => [e.type, e.detail.method, e.detail.error]), [
      ["sign_in.succeeded", "signup_code", undefined],
      ["sign_in.failed", "signup_code", "invalid_code"],
      ["sign_in.failed", "signup_code", "invalid_code"],
    ]);
    const home = await (await app.request(`${ORIGIN}/users/`, { headers: { cookie } })).text();
    assert.ok(home.includes(email));

    const out = await html("/users/logout", {}, cookie);
    assert.equal(out.status, 303);
    const badLogin = await html("/users/api/auth/login", { email, password: "not my password" });
    assert.equal(badLogin.status, 303);
    assert.match(badLogin.headers.get("location")!, /\/users\/login\?.*error=invalid_credentials/);

    const forgot = await json("/users/api/auth/forgot", { email });
    assert.deepEqual(await forgot.json(), { ok: true, redirect: "/users/forgot?sent=1" });
    const link = (await outboxText()).match(/http:\/\/localhost\/users\/reset\?token=[^"<\s]+/)![0];
    const resetPage = await app.request(
      link.replace(/&#\d+;/g, (m) => String.fromCharCode(Number(m.slice(2, -1)))),
    );
    assert.equal(resetPage.status, 200);
    const token = new URL(link).searchParams.get("token")!;
    const reset = await json("/users/api/auth/reset", {
      token,
      password: "a brand new passphrase",
    });
    assert.deepEqual(await reset.json(), { ok: true, redirect: "/users/login?reset=1" });
    const again = await json("/users/api/auth/reset", {
      token,
      password: "another new passphrase",
    });
    assert.deepEqual(await again.json(), { error: "invalid_token" });
    const l = await json("/users/api/auth/login", { email, password: "a brand new passphrase" });
    assert.equal(l.status, 200);
    cookie = cookieOf(l);

    const named = await html("/users/account/name", { name: "Ada <Lovelace>" }, cookie);
    assert.equal(named.headers.get("location"), "/users/?done=name");
    const page = await (await app.request(`${ORIGIN}/users/`, { headers: { cookie } })).text();
    assert.ok(page.includes("Ada &lt;Lovelace>"));
    assert.ok(!page.includes("<Lovelace>"), "escaped");

    const homeOf = (c: string) => app.request(`${ORIGIN}/users/`, { headers: { cookie: c } });
    const otherDevice = cookieOf(
      await json("/users/api/auth/login", { email, password: "a brand new passphrase" }),
    );
    assert.equal((await homeOf(otherDevice)).status, 200);
    const pw = await html("/users/account/password", {
      currentPassword: "a brand new passphrase",
      newPassword: "the third passphrase",
    }, cookie);
    assert.equal(pw.headers.get("location"), "/users/?done=password");
    // The password change ended the other sessions; this browser got a new cookie.
    assert.equal((await homeOf(otherDevice)).status, 302);
    assert.equal((await homeOf(cookie)).status, 302);
    cookie = cookieOf(pw);
    assert.equal((await homeOf(cookie)).status, 200);
    const weak = await html("/users/account/password", {
      currentPassword: "the third passphrase",
      newPassword: "short",
    }, cookie);
    assert.equal(weak.headers.get("location"), "/users/?error=password_too_short");

    const change = await html("/users/account/email", {
      newEmail: "ada@new.example",
      password: "the third passphrase",
    }, cookie);
    assert.equal(
      change.headers.get("location"),
      "/users/?done=email_sent&to=ada%40new.example",
    );
    const confirm =
      (await outboxText()).match(/http:\/\/localhost\/users\/confirm-email\?token=[^"<\s]+/)![0];
    const confirmed = await app.request(confirm);
    assert.equal(confirmed.status, 200);
    assert.match(await confirmed.text(), /ada@new\.example/);
    assert.match(await outboxText(), /your e-mail address was changed/);
    assert.equal((await app.request(confirm)).status, 400, "the link works once");
    // The e-mail change ended the sessions; signing in with the new address works.
    assert.equal((await homeOf(cookie)).status, 302);
    const relog = await json("/users/api/auth/login", {
      email: "ada@new.example",
      password: "the third passphrase",
    });
    cookie = cookieOf(relog);
    const moved = await (await homeOf(cookie)).text();
    assert.ok(moved.includes("ada@new.example"));
    assert.ok(moved.includes("End all sessions, on every device"));
    // Sign out everywhere: both browsers are out; a new sign-in works.
    const second = cookieOf(
      await json("/users/api/auth/login", {
        email: "ada@new.example",
        password: "the third passphrase",
      }),
    );
    const all = await html("/users/account/sessions", {}, second);
    assert.equal(all.status, 303);
    assert.equal(all.headers.get("location"), "/users/login");
    assert.equal((await homeOf(second)).status, 302);
    assert.equal((await homeOf(cookie)).status, 302);
    cookie = cookieOf(
      await json("/users/api/auth/login", {
        email: "ada@new.example",
        password: "the third passphrase",
      }),
    );
    assert.equal((await homeOf(cookie)).status, 200);

    const forged = await app.request(`${ORIGIN}/users/account/delete`, {
      method: "POST",
      headers: { origin: "https://evil.example", cookie },
      body: new URLSearchParams({}),
    });
    assert.equal(forged.status, 403);
    // Deleting asks first: without the tick nothing happens, even with a fresh session.
    const unconfirmed = await html("/users/account/delete", {}, cookie);
    assert.equal(unconfirmed.status, 400);
    assert.match(await unconfirmed.text(), /Nothing was deleted: tick the box/);
    assert.equal((await homeOf(cookie)).status, 200);
    const wrongPassword = await html(
      "/users/account/delete",
      { confirm: "yes", password: "nope nope" },
      cookie,
    );
    assert.equal(wrongPassword.status, 400);
    assert.match(
      await wrongPassword.text(),
      /Nothing was deleted\. Your current password is not right\./,
    );
    const del = await html("/users/account/delete", {
      confirm: "yes",
      password: "the third passphrase",
    }, cookie);
    assert.equal(del.status, 200);
    assert.match(await del.text(), /Your account was deleted/);
    assert.match(del.headers.get("set-cookie") ?? "", /^__Host-users-session=; /);
    assert.match(await outboxText(), /your account was deleted/);
    const gone = await json("/users/api/auth/login", {
      email: "ada@new.example",
      password: "the third passphrase",
    });
    assert.equal(gone.status, 401);
  } finally {
    db.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("users site: wrong passwords from one client are throttled: 429 with Retry-After", async () => {
  const dir = await Deno.makeTempDir();
  const db = openLibsql(`file:${dir}/app.db`);
  try {
    const app = new Hono().route(
      "/users",
      await createUsersSite({ env: loadAppEnv({}), db, iterations: 1000 }),
    );
    // As Deno.serve calls it: the connection's address comes with the request.
    const login = (password: string, hostname: string) =>
      app.request(`${ORIGIN}/users/api/auth/login`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json", origin: ORIGIN },
        body: JSON.stringify({ email: "eve-target@example.com", password }),
      }, { remoteAddr: { hostname, port: 1, transport: "tcp" } });
    for (let i = 0; i < 5; i++) {
      const r = await login("guess number " + i, "203.0.113.5");
      assert.equal(r.status, 401);
      await r.body?.cancel();
    }
    const slowed = await login("guess number 5", "203.0.113.5");
    assert.equal(slowed.status, 429);
    assert.equal(slowed.headers.get("retry-after"), "1");
    assert.deepEqual(await slowed.json(), { error: "too_many_attempts" });
    const other = await login("guess number 6", "198.51.100.7");
    assert.equal(other.status, 401, "another client is not slowed by it");
    await other.body?.cancel();
  } finally {
    db.close();
    await Deno.remove(dir, { recursive: true });
  }
});
