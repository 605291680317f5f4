/**
 * An OAuth identity reaches an existing account only on an e-mail its provider proves
 * ("nOAuth"). Before, a Microsoft profile with an `email` and no proof was taken as verified
 * and linked to the password account with that address, while the same profile from Google
 * was refused. Now Microsoft's address counts only with `xms_edov: true` in the ID token of
 * the exchange (this client's, current, same user); without it the identity follows an
 * existing link or gets a new account, never an e-mail match, and whoever later proves the
 * inbox takes the account without such links.
 *
 * The real flow: `startOAuth`, the fake provider's authorize, token and profile endpoints over
 * loopback HTTP, `handleOAuthCallback`, then `findOrCreateOAuthUser` on libSQL.
 */
import assert from "node:assert/strict";
import {
  handleOAuthCallback,
  type OAuthConfig,
  type OAuthProvider,
  startOAuth,
} from "../../mod.ts";
import {
  applySchema,
  type D1Database,
  findOrCreateOAuthUser,
  listLinkedSignIns,
  login,
  openLibsql,
  requestPasswordReset,
  resetPassword,
} from "../../d1.ts";
// @ts-types="../auth/_fake_provider.d.ts"
import { fakeProvider } from "../auth/_fake_provider.mjs";
import { codeIn, ITER, outbox, PASSWORD, SECRET, tokenIn } from "../d1/_helpers.ts";
import { signup, verifyOtp } from "../../d1.ts";

const GRACE = "grace@contoso.example"; // the fake provider's Microsoft address
const ADA = "ada@example.com"; // its Google address
const OCTO = "octo-primary@example.com"; // its GitHub primary address (scenario `unverified`)

async function withProvider(fn: (url: string) => Promise<void>): Promise<void> {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, fakeProvider);
  try {
    await fn(`http://127.0.0.1:${server.addr.port}`);
  } finally {
    await server.shutdown();
  }
}

async function withDb(fn: (db: D1Database) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-oauth-link-" });
  const db = openLibsql(`file:${dir}/site.db`);
  try {
    await applySchema(db);
    await fn(db);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

function config(url: string, scenario: string): OAuthConfig {
  const client = (p: string) => ({
    clientId: scenario,
    clientSecret: "secret",
    baseUrl: `${url}/${p}`,
  });
  return {
    clients: { google: client("google"), github: client("github"), microsoft: client("microsoft") },
    stateSecret: "state secret of the test",
    redirectUri: (p) => `https://site.example/api/auth/oauth/${p}/callback`,
  };
}

/** start → the provider's authorize → the callback, as a browser does. */
async function callback(url: string, scenario: string, provider: OAuthProvider, allow: boolean) {
  const c = config(url, scenario);
  const start = await startOAuth(c, provider);
  const cookie = (start.headers.get("set-cookie") ?? "").split(";")[0];
  const res = await fetch(start.headers.get("location")!, { redirect: "manual" });
  await res.body?.cancel();
  const back = new URL(res.headers.get("location")!);
  return await handleOAuthCallback(c, provider, new Request(back, { headers: { cookie } }), {
    allowUnverifiedEmail: allow,
  });
}

/** What a multi-user site does with a callback: link (or make) the account by the identity. */
async function signIn(db: D1Database, url: string, scenario: string, provider: OAuthProvider) {
  const r = await callback(url, scenario, provider, true);
  if (!r.ok) return r;
  return await findOrCreateOAuthUser(db, {
    provider,
    providerUserId: r.user.providerUserId,
    email: r.user.email,
    emailVerified: r.user.emailVerified,
  });
}

async function passwordAccount(db: D1Database, email: string): Promise<string> {
  const box = outbox();
  const s = await signup(db, {
    email,
    password: PASSWORD,
    secret: SECRET,
    sendEmail: box.send,
    iterations: ITER,
  });
  assert.ok(s.ok);
  const v = await verifyOtp(db, {
    email,
    code: codeIn(box.mails[0]),
    attempt: s.attempt,
    secret: SECRET,
  });
  assert.ok(v.ok);
  return v.userId;
}

async function identities(db: D1Database, userId: string): Promise<string[]> {
  const linked = await listLinkedSignIns(db, userId);
  assert.ok(linked.ok);
  return linked.signIns.map((s) => `${s.provider}:${s.email}`);
}

Deno.test("oauth: an unproven Microsoft e-mail is refused like Google's and never links to the password account", async () => {
  await withProvider(async (url) => {
    // The callback alone: only a proven address succeeds, for every provider alike.
    for (const scenario of ["unproven", "edov-false", "foreign-token", "expired-token"]) {
      assert.deepEqual(await callback(url, scenario, "microsoft", false), {
        ok: false,
        error: "email_unverified",
      }, scenario);
      const allowed = await callback(url, scenario, "microsoft", true);
      assert.ok(
        allowed.ok && allowed.user.email === GRACE && !allowed.user.emailVerified,
        scenario,
      );
    }
    for (const p of ["google", "github"] as const) {
      assert.deepEqual(await callback(url, "unverified", p, false), {
        ok: false,
        error: "email_unverified",
      }, p);
    }
    const proven = await callback(url, "ok", "microsoft", false);
    assert.ok(proven.ok && proven.user.emailVerified && proven.user.email === GRACE);

    await withDb(async (db) => {
      const grace = await passwordAccount(db, GRACE);
      const ada = await passwordAccount(db, ADA);
      const octo = await passwordAccount(db, OCTO);
      for (const scenario of ["unproven", "edov-false", "foreign-token", "expired-token"]) {
        assert.deepEqual(await signIn(db, url, scenario, "microsoft"), {
          ok: false,
          error: "email_unverified",
        }, scenario);
      }
      assert.deepEqual(await signIn(db, url, "unverified", "google"), {
        ok: false,
        error: "email_unverified",
      });
      assert.deepEqual(await signIn(db, url, "unverified", "github"), {
        ok: false,
        error: "email_unverified",
      });
      for (const id of [grace, ada, octo]) assert.deepEqual(await identities(db, id), []);
      assert.ok((await login(db, { email: GRACE, password: PASSWORD, iterations: ITER })).ok);
      // With xms_edov true in this client's ID token the address is proven: it links.
      assert.deepEqual(await signIn(db, url, "ok", "microsoft"), {
        ok: true,
        userId: grace,
        created: false,
      });
      assert.deepEqual(await identities(db, grace), [`microsoft:${GRACE}`]);
    });
  });
});

Deno.test("oauth: an unproven e-mail makes a new account keyed on the identity; proving the inbox takes it back", async () => {
  await withProvider(async (url) => {
    await withDb(async (db) => {
      // No account has the address: a new one, linked by the provider's user id only.
      const first = await signIn(db, url, "unproven", "microsoft");
      assert.ok(first.ok && first.created);
      assert.deepEqual(await identities(db, first.userId), ["microsoft:null"]);
      assert.deepEqual(await signIn(db, url, "unproven", "microsoft"), {
        ok: true,
        userId: first.userId,
        created: false,
      });
      // The inbox's owner resets the password: the link made without proof goes.
      const box = outbox();
      await requestPasswordReset(db, {
        email: GRACE,
        secret: SECRET,
        sendEmail: box.send,
        appUrl: "https://site.example",
      });
      const reset = await resetPassword(db, {
        token: tokenIn(box.mails[0]),
        newPassword: "the owner's own passphrase",
        secret: SECRET,
        iterations: ITER,
      });
      assert.deepEqual(reset, { ok: true, userId: first.userId });
      assert.deepEqual(await identities(db, first.userId), []);
      assert.deepEqual(await signIn(db, url, "unproven", "microsoft"), {
        ok: false,
        error: "email_unverified",
      });

      // The same identity proving the address later: its link is no longer one without proof.
      const ada = await signIn(db, url, "unverified", "google");
      assert.ok(ada.ok && ada.created);
      assert.deepEqual(await identities(db, ada.userId), ["google:null"]);
      assert.deepEqual(await signIn(db, url, "ok", "google"), {
        ok: true,
        userId: ada.userId,
        created: false,
      });
      assert.deepEqual(await identities(db, ada.userId), [`google:${ADA}`]);

      // Another identity that proves the address links, and removes the links made without proof.
      const octo = await signIn(db, url, "unverified", "github");
      assert.ok(octo.ok && octo.created);
      assert.deepEqual(await identities(db, octo.userId), ["github:null"]);
      const proven = await findOrCreateOAuthUser(db, {
        provider: "google",
        providerUserId: "g-octo",
        email: OCTO,
        emailVerified: true,
      });
      assert.deepEqual(proven, { ok: true, userId: octo.userId, created: false });
      assert.deepEqual(await identities(db, octo.userId), [`google:${OCTO}`]);
    });
  });
});
