/**
 * A provider is one factor: an account with a second factor is asked for it after an OAuth
 * sign-in as after a password, a remembered device skips it, and a site that requires a
 * second factor sets one up first. The real provider flow: `startOAuth`, the fake provider's
 * endpoints over loopback HTTP, `handleOAuthCallback`, then `findOrCreateOAuthUser`.
 */
import assert from "node:assert/strict";
import {
  handleOAuthCallback,
  type OAuthConfig,
  type OAuthProvider,
  startOAuth,
} from "../../../mod.ts";
import {
  applySchema,
  type AuthEvent,
  confirmTotpEnrolment,
  type D1Database,
  findOrCreateOAuthUser,
  type OAuthUserParams,
  signup,
  startTotpEnrolment,
  verifyOtp,
  verifySecondFactor,
} from "../../../d1.ts";
// @ts-types="../../auth/_fake_provider.d.ts"
import { fakeProvider } from "../../auth/_fake_provider.mjs";
import type { Case } from "../_backend.ts";
import { codeIn, ITER, outbox, PASSWORD, SECRET } from "../_helpers.ts";
import { appCode, keyOfUri } from "../_totp.ts";

/** A fixed clock in the middle of a 30-second step. */
const T = Date.UTC(2026, 5, 1, 12, 0, 15);
const ADA = "ada@example.com"; // the fake provider's Google address (verified)

async function withProvider(fn: (url: string) => Promise<void>): Promise<void> {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, fakeProvider);
  try {
    await fn(`http://127.0.0.1:${server.addr.port}`);
  } finally {
    await server.shutdown();
  }
}

function config(url: string): OAuthConfig {
  const client = (p: string) => ({
    clientId: "ok",
    clientSecret: "secret",
    baseUrl: `${url}/${p}`,
  });
  return {
    clients: { google: client("google"), github: client("github"), microsoft: client("microsoft") },
    stateSecret: "state secret of the test",
    redirectUri: (p) => `https://site.example/api/auth/oauth/${p}/callback`,
  };
}

/** start → the provider's authorize → the callback → the account, as a site does. */
async function oauthSignIn(
  db: D1Database,
  url: string,
  provider: OAuthProvider,
  extra: Partial<OAuthUserParams> = {},
) {
  const c = config(url);
  const start = await startOAuth(c, provider);
  const cookie = (start.headers.get("set-cookie") ?? "").split(";")[0];
  const res = await fetch(start.headers.get("location")!, { redirect: "manual" });
  await res.body?.cancel();
  const back = new URL(res.headers.get("location")!);
  const r = await handleOAuthCallback(c, provider, new Request(back, { headers: { cookie } }), {
    allowUnverifiedEmail: true,
  });
  assert.ok(r.ok, JSON.stringify(r));
  return await findOrCreateOAuthUser(db, {
    provider,
    providerUserId: r.user.providerUserId,
    email: r.user.email,
    emailVerified: r.user.emailVerified,
    now: T,
    ...extra,
  });
}

/** A verified password account at `email` with a confirmed TOTP: its id and key. */
async function totpAccount(db: D1Database, email: string) {
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
  const e = await startTotpEnrolment(db, {
    userId: v.userId,
    password: PASSWORD,
    iterations: ITER,
    secret: SECRET,
    issuer: "Gatehouse tests",
    now: T,
  });
  assert.ok(e.ok, JSON.stringify(e));
  const key = keyOfUri(e.uri);
  const c = await confirmTotpEnrolment(db, {
    userId: v.userId,
    code: appCode(key, T),
    secret: SECRET,
    now: T,
  });
  assert.ok(c.ok, JSON.stringify(c));
  return { id: v.userId, key };
}

function ticketOf(r: unknown, error: string): string {
  const x = r as { ok: boolean; error?: string; ticket?: string };
  assert.equal(x.ok, false, JSON.stringify(r));
  assert.equal(x.error, error);
  assert.ok(typeof x.ticket === "string" && x.ticket.length > 20, JSON.stringify(r));
  return x.ticket;
}

export const oauthSecondFactorCases: Case[] = [
  {
    name: "OAuth: an account with a TOTP is asked for its code after the provider too; " +
      "a remembered device skips it",
    async fn({ fresh }) {
      const db = await fresh();
      await applySchema(db);
      const u = await totpAccount(db, ADA);
      await withProvider(async (url) => {
        const events: AuthEvent[] = [];
        const onEvent = (e: AuthEvent) => void events.push(e);
        // Without the secret no ticket can be signed: the account still does not sign in.
        assert.deepEqual(await oauthSignIn(db, url, "google"), {
          ok: false,
          error: "second_factor_required",
        });
        const first = await oauthSignIn(db, url, "google", { secret: SECRET, onEvent });
        const ticket = ticketOf(first, "second_factor_required");
        assert.deepEqual(
          events.map((e) => [e.type, e.userId, e.detail.method, e.detail.provider]),
          [["sign_in.second_factor_required", u.id, "oauth", "google"]],
        );
        const later = T + 30_000;
        const wrong = await verifySecondFactor(db, {
          ticket,
          code: appCode(u.key, later + 300_000),
          secret: SECRET,
          now: later,
        });
        assert.deepEqual(wrong, { ok: false, error: "invalid_code" });
        const v = await verifySecondFactor(db, {
          ticket,
          code: appCode(u.key, later),
          secret: SECRET,
          rememberDevice: true,
          now: later,
        });
        assert.ok(v.ok && v.userId === u.id && v.method === "totp" && v.deviceToken);
        // This browser is remembered: the provider alone signs in, as a password does.
        const again = await oauthSignIn(db, url, "google", {
          secret: SECRET,
          trustedDevice: v.deviceToken,
          now: later,
        });
        assert.deepEqual(again, { ok: true, userId: u.id, created: false });
        // Another browser (no device token, or one of another account) is asked again.
        ticketOf(
          await oauthSignIn(db, url, "google", { secret: SECRET, trustedDevice: "x".repeat(43) }),
          "second_factor_required",
        );
        // Bad options of the second step are refused before anything runs.
        for (
          const bad of [{ secret: 7 }, { requireSecondFactor: "yes" }, { trustedDevice: 1 }]
        ) {
          assert.deepEqual(
            await oauthSignIn(db, url, "google", bad as unknown as Partial<OAuthUserParams>),
            { ok: false, error: "invalid_input" },
          );
        }
      });
    },
  },
  {
    name: "OAuth: a site that requires a second factor sets one up first, for a new account too",
    async fn({ fresh }) {
      const db = await fresh();
      await applySchema(db);
      await withProvider(async (url) => {
        const events: AuthEvent[] = [];
        const onEvent = (e: AuthEvent) => void events.push(e);
        const site = { secret: SECRET, requireSecondFactor: true, onEvent };
        // GitHub's octocat has no account yet: it is made, verified, and not signed in.
        const made = await oauthSignIn(db, url, "github", site);
        const ticket = ticketOf(made, "second_factor_setup_required");
        assert.equal(events.length, 1);
        assert.equal(events[0].type, "sign_in.second_factor_required");
        assert.equal(events[0].detail.created, true);
        const userId = events[0].userId;
        assert.ok(userId);
        const s = await startTotpEnrolment(db, {
          ticket,
          secret: SECRET,
          issuer: "Gatehouse tests",
          now: T,
        });
        assert.ok(s.ok && s.userId === userId, JSON.stringify(s));
        const key = keyOfUri(s.uri);
        const c = await confirmTotpEnrolment(db, {
          ticket,
          code: appCode(key, T),
          secret: SECRET,
          now: T,
        });
        assert.ok(c.ok && c.userId === userId);
        // Now it has one: the next provider sign-in asks for the code (required or not).
        const later = T + 30_000;
        for (const requireSecondFactor of [true, false]) {
          const next = await oauthSignIn(db, url, "github", {
            secret: SECRET,
            requireSecondFactor,
            now: later,
          });
          const t = ticketOf(next, "second_factor_required");
          const v = await verifySecondFactor(db, {
            ticket: t,
            code: c.backupCodes[requireSecondFactor ? 0 : 1],
            secret: SECRET,
            now: later,
          });
          assert.ok(v.ok && v.userId === userId && v.method === "backup");
        }
        // Without the requirement, an account with no second factor signs in at once.
        const google = await oauthSignIn(db, url, "google", { secret: SECRET });
        assert.ok(google.ok && google.created);
        ticketOf(
          await oauthSignIn(db, url, "google", { secret: SECRET, requireSecondFactor: true }),
          "second_factor_setup_required",
        );
      });
    },
  },
];
