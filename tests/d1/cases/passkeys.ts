import assert from "node:assert/strict";
import {
  applySchema,
  confirmTotpEnrolment,
  type D1Database,
  findOrCreateOAuthUser,
  listPasskeys,
  login,
  passkeyRegistrationOptions,
  passkeySignInOptions,
  removePasskey,
  removePassword,
  removeUser,
  renamePasskey,
  startTotpEnrolment,
  verifyPasskeyRegistration,
  verifyPasskeySignIn,
} from "../../../d1.ts";
import type { Case } from "../_backend.ts";
import { ITER, newEmail, PASSWORD, SECRET } from "../_helpers.ts";
import {
  type Alg,
  create,
  type CreateOptions,
  type Credential,
  get,
  handleOf,
} from "../_authenticator.ts";
import { appCode } from "../_totp.ts";
import { assertNoneInClear } from "../_at_rest.ts";
import { verifiedUser } from "./_user.ts";

const ORIGIN = "https://app.example.com";
const rp = { id: "example.com", name: "Example", origin: ORIGIN };
const T = Date.UTC(2026, 5, 1, 12, 0, 15);

/** A fresh session of the user (what `readUserSession` answers, as far as the flows read it). */
const sessionOf = (now = T) => ({ id: crypto.randomUUID(), issuedAt: Math.floor(now / 1000) });

/** Adds a passkey to `userId`; resolves to the authenticator's credential and the stored passkey. */
async function addPasskey(
  db: D1Database,
  userId: string,
  o: Partial<CreateOptions> & { packed?: boolean; name?: string } = {},
) {
  const session = sessionOf();
  const opts = await passkeyRegistrationOptions(db, {
    userId,
    session,
    rp,
    attestation: o.packed ? "packed" : undefined,
    now: T,
  });
  assert.ok(opts.ok, JSON.stringify(opts));
  const { credential, json } = await create(opts.options, { origin: ORIGIN, ...o });
  const r = await verifyPasskeyRegistration(db, {
    userId,
    session,
    ceremony: opts.ceremony,
    response: json,
    rp,
    name: o.name,
    now: T,
  });
  return { credential, r, opts, session, json };
}

/** A usernameless sign-in with `c`. */
async function signInWith(
  db: D1Database,
  c: Credential,
  o: Parameters<typeof get>[2] = { origin: ORIGIN },
  now = T,
) {
  const opts = await passkeySignInOptions(db, { rp, now });
  assert.ok(opts.ok);
  assert.equal(opts.options.allowCredentials, undefined);
  assert.equal(opts.options.userVerification, "required");
  const response = await get(opts.options, c, o);
  return await verifyPasskeySignIn(db, { ceremony: opts.ceremony, response, rp, now });
}

export const passkeyCases: Case[] = [
  {
    name: "passkeys: add (ES256, RS256, EdDSA), usernameless sign-in, names and last use",
    async fn({ db }) {
      const u = await verifiedUser(db);
      const added: Credential[] = [];
      for (const alg of ["ES256", "RS256", "EdDSA"] as Alg[]) {
        const { credential, r, opts } = await addPasskey(db, u.id, { alg, name: `Key ${alg}` });
        assert.ok(r.ok, `${alg}: ${JSON.stringify(r)}`);
        assert.equal(r.passkey.name, `Key ${alg}`);
        assert.equal(r.passkey.attestation, "none");
        const sel = opts.options.authenticatorSelection as Record<string, string>;
        assert.equal(sel.residentKey, "required");
        assert.equal(sel.userVerification, "required");
        assert.deepEqual((opts.options.pubKeyCredParams as { alg: number }[]).map((p) => p.alg), [
          -8,
          -7,
          -257,
        ]);
        assert.equal(opts.options.attestation, "none");
        added.push(credential);
      }
      // The options exclude the account's passkeys.
      const again = await passkeyRegistrationOptions(db, {
        userId: u.id,
        session: sessionOf(),
        rp,
        now: T,
      });
      assert.ok(again.ok);
      assert.equal((again.options.excludeCredentials as unknown[]).length, 3);
      for (const c of added) {
        const s = await signInWith(db, c);
        assert.ok(s.ok, `${c.alg}: ${JSON.stringify(s)}`);
        assert.equal(s.userId, u.id);
      }
      const list = await listPasskeys(db, u.id);
      assert.ok(list.ok);
      assert.deepEqual(list.passkeys.map((k) => k.name).sort(), [
        "Key ES256",
        "Key EdDSA",
        "Key RS256",
      ]);
      for (const k of list.passkeys) assert.equal(k.lastUsedAt, T);
      const renamed = await renamePasskey(db, {
        userId: u.id,
        passkeyId: list.passkeys[0].id,
        name: " Laptop ",
      });
      assert.deepEqual(renamed, { ok: true, name: "Laptop" });
      assert.deepEqual(
        await renamePasskey(db, { userId: u.id, passkeyId: list.passkeys[0].id, name: "a\nb" }),
        {
          ok: false,
          error: "invalid_name",
        },
      );
      const other = await verifiedUser(db);
      assert.deepEqual(
        await renamePasskey(db, { userId: other.id, passkeyId: list.passkeys[0].id, name: "Mine" }),
        {
          ok: false,
          error: "not_found",
        },
      );
    },
  },
  {
    name: "passkeys: attestation none by default, packed (verified) when asked",
    async fn({ db }) {
      const u = await verifiedUser(db);
      const packed = await addPasskey(db, u.id, { packed: true, attestation: "packed" });
      assert.ok(packed.r.ok, JSON.stringify(packed.r));
      assert.equal(packed.r.passkey.attestation, "packed");
      assert.equal(packed.opts.options.attestation, "direct");
      // Asked for packed, answered none: refused.
      const none = await addPasskey(db, u.id, { packed: true, attestation: "none" });
      assert.deepEqual(none.r, { ok: false, error: "invalid_passkey" });
      // A packed statement whose signature does not match: refused.
      const opts = await passkeyRegistrationOptions(db, {
        userId: u.id,
        session: sessionOf(),
        rp,
        attestation: "packed",
        now: T,
      });
      assert.ok(opts.ok);
      const { json } = await create(opts.options, { origin: ORIGIN, attestation: "packed" });
      const other = await create(opts.options, { origin: ORIGIN, attestation: "packed" });
      const forged = {
        ...json,
        response: {
          ...(json.response as object),
          attestationObject:
            (other.json.response as { attestationObject: string }).attestationObject,
        },
      };
      const session = sessionOf();
      const opts2 = await passkeyRegistrationOptions(db, {
        userId: u.id,
        session,
        rp,
        attestation: "packed",
        now: T,
      });
      assert.ok(opts2.ok);
      const r = await verifyPasskeyRegistration(db, {
        userId: u.id,
        session,
        ceremony: opts2.ceremony,
        response: forged,
        rp,
        now: T,
      });
      assert.deepEqual(r, { ok: false, error: "invalid_passkey" });
    },
  },
  {
    name:
      "passkeys: the challenge is single-use, of this ceremony, user and session, for 5 minutes",
    async fn({ db }) {
      const u = await verifiedUser(db);
      const session = sessionOf();
      const opts = await passkeyRegistrationOptions(db, { userId: u.id, session, rp, now: T });
      assert.ok(opts.ok);
      const { json } = await create(opts.options, { origin: ORIGIN });
      const base = { userId: u.id, session, ceremony: opts.ceremony, response: json, rp, now: T };
      assert.deepEqual(
        await verifyPasskeyRegistration(db, { ...base, session: { id: "another session" } }),
        {
          ok: false,
          error: "invalid_challenge",
        },
      );
      // That try used the ceremony up: the right session cannot answer it any more.
      assert.deepEqual(await verifyPasskeyRegistration(db, base), {
        ok: false,
        error: "invalid_challenge",
      });
      const fresh = await passkeyRegistrationOptions(db, { userId: u.id, session, rp, now: T });
      assert.ok(fresh.ok);
      const answer = await create(fresh.options, { origin: ORIGIN });
      const late = await verifyPasskeyRegistration(db, {
        ...base,
        ceremony: fresh.ceremony,
        response: answer.json,
        now: T + 300_000,
      });
      assert.deepEqual(late, { ok: false, error: "invalid_challenge" });
      // An answer to another challenge, with a live ceremony: refused.
      const third = await passkeyRegistrationOptions(db, { userId: u.id, session, rp, now: T });
      assert.ok(third.ok);
      const wrong = await verifyPasskeyRegistration(db, {
        ...base,
        ceremony: third.ceremony,
        response: answer.json,
      });
      assert.deepEqual(wrong, { ok: false, error: "invalid_passkey" });
      assert.deepEqual(await verifyPasskeyRegistration(db, { ...base, ceremony: "x".repeat(43) }), {
        ok: false,
        error: "invalid_challenge",
      });
      // A sign-in ceremony does not register, and the other way round.
      const signIn = await passkeySignInOptions(db, { rp, now: T });
      assert.ok(signIn.ok);
      assert.deepEqual(
        await verifyPasskeyRegistration(db, { ...base, ceremony: signIn.ceremony }),
        {
          ok: false,
          error: "invalid_challenge",
        },
      );
      // Registration needs the re-authentication: an old session is not enough.
      const stale = await passkeyRegistrationOptions(db, {
        userId: u.id,
        session: { id: "s", issuedAt: T / 1000 - 3600 },
        rp,
        now: T,
      });
      assert.deepEqual(stale, { ok: false, error: "reauth_required" });
      const withPassword = await passkeyRegistrationOptions(db, {
        userId: u.id,
        session: { id: "s", issuedAt: T / 1000 - 3600 },
        password: PASSWORD,
        iterations: ITER,
        rp,
        now: T,
      });
      assert.equal(withPassword.ok, true);
    },
  },
  {
    name: "passkeys: origin, RP ID, ceremony type and user verification are checked",
    async fn({ db }) {
      const u = await verifiedUser(db);
      for (
        const [what, o] of [
          ["origin", { origin: "https://evil.example.net" }],
          ["rp id", { rpId: "evil.example.net" }],
          ["type", { type: "webauthn.get" }],
          ["user verification", { uv: false }],
        ] as const
      ) {
        const { r } = await addPasskey(db, u.id, o);
        assert.deepEqual(r, { ok: false, error: "invalid_passkey" }, what);
      }
      const { credential, r } = await addPasskey(db, u.id);
      assert.ok(r.ok);
      for (
        const [what, o] of [
          ["origin", { origin: "https://evil.example.net" }],
          ["rp id", { origin: ORIGIN, rpId: "evil.example.net" }],
          ["user verification", { origin: ORIGIN, uv: false }],
          ["user handle", { origin: ORIGIN, userHandle: handleOf(crypto.randomUUID()) }],
        ] as const
      ) {
        assert.deepEqual(await signInWith(db, credential, o), {
          ok: false,
          error: "invalid_passkey",
        }, what);
      }
      // Without a user handle (a non-discoverable answer) the credential decides.
      assert.equal(
        (await signInWith(db, credential, { origin: ORIGIN, userHandle: null })).ok,
        true,
      );
      // A passkey the site does not know.
      const stranger = await create({
        rp: { id: rp.id },
        user: { id: handleOf("x") },
        challenge: "AA",
      }, { origin: ORIGIN });
      assert.deepEqual(await signInWith(db, stranger.credential), {
        ok: false,
        error: "invalid_passkey",
      });
      // The same credential cannot be added twice (to this account or another).
      const other = await verifiedUser(db);
      const session = sessionOf();
      const opts = await passkeyRegistrationOptions(db, { userId: other.id, session, rp, now: T });
      assert.ok(opts.ok);
      const copy = await addPasskey(db, u.id);
      assert.ok(copy.r.ok);
      const dup = await verifyPasskeyRegistration(db, {
        userId: other.id,
        session,
        ceremony: opts.ceremony,
        response: copy.json,
        rp,
        now: T,
      });
      assert.deepEqual(dup, { ok: false, error: "invalid_passkey" });
    },
  },
  {
    name: "passkeys: the signature counter must grow; a synced passkey's 0 stays accepted",
    async fn({ db }) {
      const u = await verifiedUser(db);
      const { credential } = await addPasskey(db, u.id);
      assert.equal((await signInWith(db, credential, { origin: ORIGIN, counter: 5 })).ok, true);
      assert.equal((await signInWith(db, credential, { origin: ORIGIN, counter: 9 })).ok, true);
      // A cloned authenticator reports an older counter: refused, and the stored one stays.
      assert.deepEqual(await signInWith(db, credential, { origin: ORIGIN, counter: 9 }), {
        ok: false,
        error: "invalid_passkey",
      });
      assert.deepEqual(await signInWith(db, credential, { origin: ORIGIN, counter: 3 }), {
        ok: false,
        error: "invalid_passkey",
      });
      assert.equal((await signInWith(db, credential, { origin: ORIGIN, counter: 10 })).ok, true);
      const synced = await addPasskey(db, u.id, { backup: true });
      assert.ok(synced.r.ok);
      assert.equal(synced.r.passkey.deviceType, "multiDevice");
      assert.equal(synced.r.passkey.backedUp, true);
      for (let i = 0; i < 3; i++) {
        assert.equal(
          (await signInWith(db, synced.credential, { origin: ORIGIN, counter: 0 })).ok,
          true,
        );
      }
    },
  },
  {
    name: "passkeys: a replayed sign-in answer is refused (its challenge was used)",
    async fn({ db }) {
      const u = await verifiedUser(db);
      const { credential } = await addPasskey(db, u.id);
      const opts = await passkeySignInOptions(db, { rp, now: T });
      assert.ok(opts.ok);
      const response = await get(opts.options, credential, { origin: ORIGIN, counter: 0 });
      const once = await verifyPasskeySignIn(db, { ceremony: opts.ceremony, response, rp, now: T });
      assert.equal(once.ok, true);
      const twice = await verifyPasskeySignIn(db, {
        ceremony: opts.ceremony,
        response,
        rp,
        now: T,
      });
      assert.deepEqual(twice, { ok: false, error: "invalid_challenge" });
      const other = await passkeySignInOptions(db, { rp, now: T });
      assert.ok(other.ok);
      const replay = await verifyPasskeySignIn(db, {
        ceremony: other.ceremony,
        response,
        rp,
        now: T,
      });
      assert.deepEqual(replay, { ok: false, error: "invalid_passkey" });
    },
  },
  {
    name: "passkeys: a passkey is both factors: no TOTP step after it",
    async fn({ db }) {
      const u = await verifiedUser(db);
      const s = await startTotpEnrolment(db, {
        userId: u.id,
        password: PASSWORD,
        iterations: ITER,
        secret: SECRET,
        issuer: "X",
        now: T,
      });
      assert.ok(s.ok);
      assert.ok(
        (await confirmTotpEnrolment(db, {
          userId: u.id,
          code: appCode(s.secret, T),
          secret: SECRET,
          now: T,
        })).ok,
      );
      const l = await login(db, {
        email: u.email,
        password: PASSWORD,
        iterations: ITER,
        secret: SECRET,
        now: T,
      });
      assert.equal(!l.ok && l.error, "second_factor_required");
      const { credential } = await addPasskey(db, u.id);
      assert.deepEqual(await signInWith(db, credential), {
        ok: true,
        userId: u.id,
        passkeyId: (await listPasskeys(db, u.id) as { passkeys: { id: string }[] }).passkeys[0].id,
      });
    },
  },
  {
    name: "passkeys: removal never of the last way in; passkey-only accounts",
    async fn({ db }) {
      const u = await verifiedUser(db);
      const a = await addPasskey(db, u.id, { name: "A" });
      const b = await addPasskey(db, u.id, { name: "B" });
      assert.ok(a.r.ok && b.r.ok);
      const fresh = { session: sessionOf() };
      // Passkey-only: the password goes (every session ends), then only passkeys sign in.
      assert.deepEqual(
        await removePassword(db, { userId: u.id, password: PASSWORD, iterations: ITER, now: T }),
        { ok: true },
      );
      assert.deepEqual(
        await login(db, { email: u.email, password: PASSWORD, iterations: ITER, now: T }),
        {
          ok: false,
          error: "invalid_credentials",
        },
      );
      assert.equal((await signInWith(db, a.credential)).ok, true);
      assert.deepEqual(
        await removePasskey(db, { userId: u.id, passkeyId: a.r.passkey.id, ...fresh, now: T }),
        { ok: true },
      );
      assert.deepEqual(await signInWith(db, a.credential), { ok: false, error: "invalid_passkey" });
      assert.deepEqual(
        await removePasskey(db, { userId: u.id, passkeyId: b.r.passkey.id, ...fresh, now: T }),
        {
          ok: false,
          error: "last_method",
        },
      );
      assert.deepEqual(await removePassword(db, { userId: u.id, ...fresh, now: T }), { ok: true });
      assert.deepEqual(
        await removePasskey(db, { userId: u.id, passkeyId: "nope", ...fresh, now: T }),
        {
          ok: false,
          error: "not_found",
        },
      );
      assert.deepEqual(
        await removePasskey(db, { userId: u.id, passkeyId: b.r.passkey.id, now: T }),
        {
          ok: false,
          error: "reauth_required",
        },
      );
      // A password-only account keeps its password; a provider counts as a way in.
      const w = await verifiedUser(db);
      assert.deepEqual(
        await removePassword(db, { userId: w.id, password: PASSWORD, iterations: ITER, now: T }),
        {
          ok: false,
          error: "last_method",
        },
      );
      const email = newEmail("oauth-pk");
      const o = await findOrCreateOAuthUser(db, {
        provider: "github",
        providerUserId: email,
        email,
        emailVerified: true,
      });
      assert.ok(o.ok);
      const k = await addPasskey(db, o.userId);
      assert.ok(k.r.ok);
      assert.deepEqual(
        await removePasskey(db, { userId: o.userId, passkeyId: k.r.passkey.id, ...fresh, now: T }),
        { ok: true },
      );
      // Removing the account removes its passkeys.
      const gone = await addPasskey(db, w.id);
      assert.ok(gone.r.ok);
      assert.ok(
        (await removeUser(db, {
          userId: w.id,
          password: PASSWORD,
          iterations: ITER,
          sendEmail: () => {},
        })).ok,
      );
      const left = await db.prepare("SELECT count(*) AS n FROM passkeys WHERE user_id = ?").bind(
        w.id,
      ).first<{ n: number }>();
      assert.equal(Number(left?.n), 0);
    },
  },
  {
    name: "at rest: passkey ceremonies keep only the SHA-256 of their token",
    async fn({ fresh }) {
      const db = await fresh();
      await applySchema(db);
      const u = await verifiedUser(db);
      const session = sessionOf();
      const reg = await passkeyRegistrationOptions(db, { userId: u.id, session, rp, now: T });
      const sign = await passkeySignInOptions(db, { rp, now: T });
      assert.ok(reg.ok && sign.ok);
      await assertNoneInClear(db, [reg.ceremony, sign.ceremony]);
    },
  },
];
