/**
 * Passkeys (WebAuthn) over `@simplewebauthn/server`: adding one to a signed-in account
 * (options, then the browser's answer), signing in with one — usernameless with a
 * discoverable credential, in the autofill list (conditional UI) or by a button — and the
 * account's list of passkeys (names, last use, removal that never leaves an account without a
 * way in).
 *
 * What is checked: the challenge (single-use, of this browser's ceremony and, to add a
 * passkey, of the session that asked, see `passkey_ceremony.ts`), the origin and the RP ID,
 * user presence and **user verification** (a passkey counts as two factors: something held
 * and a PIN or biometric), the algorithm (EdDSA, ES256 or RS256), the attestation (`none` by
 * default; `packed`, verified, when a site asks for it) and the signature counter: a counter
 * that does not grow when either value is non-zero marks a cloned authenticator and is
 * refused (passkeys synced between devices always report 0).
 *
 * @module
 */
import { b64urlDecode, b64urlEncode, utf8 } from "../auth/_encoding.ts";
import type { ClockOptions, HashingOptions } from "./input.ts";
import { nowOf, params, stringOf } from "./input.ts";
import type { CommonError, FlowResult } from "./errors.ts";
import { fail, guard } from "./errors.ts";
import { type EventOptions, report, type Seen, sinkOf } from "./events.ts";
import type { D1Database } from "./types.ts";
import { newStamp, reauthError, type ReauthOptions, userById } from "./users.ts";
import { all, first, run } from "./query.ts";
import { openCeremony, takeCeremony } from "./passkey_ceremony.ts";

/**
 * `@simplewebauthn/server`, loaded by the first passkey ceremony (the npm mirror's packages
 * are optional peers: the other flows run without it). Loaded outside a flow's `guard`, so a
 * missing package is thrown with its name rather than returned as `internal_error`.
 */
let webauthn: Promise<typeof import("@simplewebauthn/server")> | undefined;
const simpleWebAuthn = () => webauthn ??= import("@simplewebauthn/server");

/** COSE algorithms accepted: EdDSA (-8), ES256 (-7), RS256 (-257), in order of preference. */
export const PASSKEY_ALGORITHMS: readonly number[] = Object.freeze([-8, -7, -257]);
/** Most passkeys one account may hold. */
export const MAX_PASSKEYS = 20;
/** Longest passkey name, in characters. */
export const MAX_PASSKEY_NAME = 100;

/** The relying party: the site as passkeys know it. */
export interface RelyingParty {
  /** The RP ID: the site's domain (`example.com`), or a registrable suffix of it. */
  id: string;
  /** The site's name, shown by the browser. */
  name: string;
  /** The origin(s) the ceremony may come from, e.g. `https://example.com`. */
  origin: string | string[];
}

/** Options of a ceremony as JSON, for `navigator.credentials` (see the pages' passkey script). */
export interface PasskeyOptionsJSON {
  /** The challenge, base64url. */
  challenge: string;
  /** The rest of `PublicKeyCredentialCreationOptionsJSON` / `...RequestOptionsJSON`. */
  [field: string]: unknown;
}

/** A passkey of an account, as its page shows it. */
export interface Passkey {
  /** The credential id (base64url). */
  id: string;
  /** The name the user gave it (default: "Passkey" and the date). */
  name: string;
  /** When it was added, ms since the epoch. */
  createdAt: number;
  /** Its last sign-in, ms since the epoch, or null. */
  lastUsedAt: number | null;
  /** `multiDevice` when it is synced between devices (backed up), else `singleDevice`. */
  deviceType: "singleDevice" | "multiDevice";
  /** Whether it is backed up (synced). */
  backedUp: boolean;
  /** The attestation it came with (`none` or `packed`). */
  attestation: string;
}

function rpOf(v: unknown): { id: string; name: string; origins: string[] } {
  const rp = v as Partial<RelyingParty> | null;
  if (typeof rp !== "object" || rp === null) fail("invalid_input");
  const id = stringOf(rp.id, 253);
  const name = stringOf(rp.name, 200);
  const origins = typeof rp.origin === "string" ? [rp.origin] : rp.origin;
  if (!id || !name || !Array.isArray(origins) || origins.length === 0 || origins.length > 16) {
    fail("invalid_input");
  }
  for (const o of origins) {
    if (typeof o !== "string" || !/^https?:\/\/[^/]+$/.test(o)) fail("invalid_input");
  }
  return { id, name, origins: origins as string[] };
}

/** The browser's answer: an object, or its JSON text (a form post), at most 64 KiB. */
function answerOf(v: unknown): Record<string, unknown> {
  let value = v;
  if (typeof v === "string") {
    if (v.length > 65_536) fail("invalid_input");
    try {
      value = JSON.parse(v);
    } catch {
      return fail("invalid_passkey");
    }
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) fail("invalid_passkey");
  return value as Record<string, unknown>;
}

/** The WebAuthn user handle of an account: its id's bytes (random, no personal data). */
const userHandle = (userId: string) => utf8(userId);

/** Parameters of {@linkcode passkeyRegistrationOptions}. */
export interface PasskeyRegistrationOptionsParams
  extends ReauthOptions, HashingOptions, ClockOptions {
  /** The signed-in user's id. */
  userId: string;
  /**
   * The session that asks (`readUserSession`'s `session`): the challenge is bound to its id,
   * and stands for the re-authentication when fresh (or pass `password`).
   */
  session: { id: string; issuedAt: number };
  /** The site. */
  rp: RelyingParty;
  /** `packed` to ask for the authenticator's attestation (verified); default `none`. */
  attestation?: "none" | "packed";
}

/** Result of {@linkcode passkeyRegistrationOptions}. */
export type PasskeyRegistrationOptionsResult = FlowResult<
  { options: PasskeyOptionsJSON; ceremony: string },
  CommonError | "not_found" | "wrong_password" | "reauth_required" | "too_many_attempts"
>;

/**
 * Options to add a passkey to a signed-in account: pass `options` to the browser
 * (`navigator.credentials.create`) and keep `ceremony` in an HttpOnly cookie for
 * {@linkcode verifyPasskeyRegistration}. A discoverable credential with user verification is
 * asked for; the account's passkeys are excluded. Never throws.
 *
 * @example
 * ```ts
 * import { openLibsql, passkeyRegistrationOptions } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * const r = await passkeyRegistrationOptions(db, {
 *   userId: "5d0c...",
 *   session: { id: "session id", issuedAt: Math.floor(Date.now() / 1000) },
 *   rp: { id: "example.com", name: "Example", origin: "https://example.com" },
 * });
 * if (r.ok) console.log(JSON.stringify(r.options));
 * ```
 */
export async function passkeyRegistrationOptions(
  db: D1Database,
  p: PasskeyRegistrationOptionsParams,
): Promise<PasskeyRegistrationOptionsResult> {
  const { generateRegistrationOptions } = await simpleWebAuthn();
  return guard(async () => {
    const o = params(p);
    const userId = stringOf(o.userId, 200);
    const rp = rpOf(o.rp);
    const session = o.session as { id?: unknown } | undefined;
    if (typeof session !== "object" || session === null || typeof session.id !== "string") {
      fail("invalid_input");
    }
    const attestation = o.attestation ?? "none";
    if (attestation !== "none" && attestation !== "packed") fail("invalid_input");
    const now = nowOf(o.now);
    const user = await userById(db, userId);
    if (!user) fail("not_found");
    const denied = await reauthError(db, user, o, now);
    if (denied) fail(denied);
    const existing = await all<{ id: string; transports: string | null }>(
      db,
      "SELECT id, transports FROM passkeys WHERE user_id = ?",
      user.id,
    );
    const options = await generateRegistrationOptions({
      rpName: rp.name,
      rpID: rp.id,
      userName: user.email,
      userDisplayName: user.name ?? user.email,
      userID: userHandle(user.id),
      attestationType: attestation === "packed" ? "direct" : "none",
      excludeCredentials: existing.map((c) => ({
        id: String(c.id),
        transports: transportsOf(c.transports),
      })),
      authenticatorSelection: { residentKey: "required", userVerification: "required" },
      supportedAlgorithmIDs: [...PASSKEY_ALGORITHMS],
      timeout: 300_000,
    });
    const ceremony = await openCeremony(db, {
      purpose: "register",
      challenge: `${attestation}:${options.challenge}`,
      userId: user.id,
      sessionId: session.id as string,
      now,
    });
    return { ok: true as const, options: options as unknown as PasskeyOptionsJSON, ceremony };
  });
}

function transportsOf(text: string | null): string[] | undefined {
  if (!text) return undefined;
  try {
    const list = JSON.parse(text);
    return Array.isArray(list) ? list.filter((t) => typeof t === "string") : undefined;
  } catch {
    return undefined;
  }
}

/** Parameters of {@linkcode verifyPasskeyRegistration}. */
export interface VerifyPasskeyRegistrationParams extends EventOptions, ClockOptions {
  /** The signed-in user's id. */
  userId: string;
  /** The same session as for the options (its id). */
  session: { id: string };
  /** The ceremony token from {@linkcode passkeyRegistrationOptions} (the site's cookie). */
  ceremony: string;
  /** The browser's answer (`PublicKeyCredential` as JSON), or its JSON text. */
  response: unknown;
  /** The site (the same as for the options). */
  rp: RelyingParty;
  /** A name for the passkey (1–100 characters); default "Passkey" and the date. */
  name?: string;
}

/** Result of {@linkcode verifyPasskeyRegistration}: the new passkey. */
export type VerifyPasskeyRegistrationResult = FlowResult<
  { passkey: Passkey },
  CommonError | "not_found" | "invalid_challenge" | "invalid_passkey" | "invalid_name"
>;

/**
 * Checks the browser's answer to {@linkcode passkeyRegistrationOptions} and stores the
 * passkey. `invalid_challenge` for a ceremony that is unknown, used, expired, of another
 * user or session; `invalid_passkey` when the answer does not verify (origin, RP ID, user
 * verification, algorithm, attestation, a credential already stored). Never throws.
 *
 * @example
 * ```ts
 * import { openLibsql, verifyPasskeyRegistration } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * const r = await verifyPasskeyRegistration(db, {
 *   userId: "5d0c...",
 *   session: { id: "session id" },
 *   ceremony: "from the cookie",
 *   response: "{...the browser's JSON...}",
 *   rp: { id: "example.com", name: "Example", origin: "https://example.com" },
 *   name: "Laptop",
 * });
 * if (!r.ok) console.log(r.error);
 * ```
 */
export async function verifyPasskeyRegistration(
  db: D1Database,
  p: VerifyPasskeyRegistrationParams,
): Promise<VerifyPasskeyRegistrationResult> {
  const { verifyRegistrationResponse } = await simpleWebAuthn();
  const seen: Seen = { detail: { factor: "passkey" } };
  const result = await guard(async () => {
    const o = params(p);
    sinkOf(o.onEvent);
    const userId = stringOf(o.userId, 200);
    seen.userId = userId;
    const rp = rpOf(o.rp);
    const ceremony = stringOf(o.ceremony, 200);
    const session = o.session as { id?: unknown } | undefined;
    if (typeof session !== "object" || session === null || typeof session.id !== "string") {
      fail("invalid_input");
    }
    const now = nowOf(o.now);
    const name = o.name === undefined || o.name === ""
      ? `Passkey ${new Date(now).toISOString().slice(0, 10)}`
      : passkeyName(o.name);
    const answer = answerOf(o.response);
    const stored = await takeCeremony(db, {
      ceremony,
      purpose: "register",
      userId,
      sessionId: session.id as string,
      now,
    });
    const [attestation, challenge] = [
      stored.slice(0, stored.indexOf(":")),
      stored.slice(stored.indexOf(":") + 1),
    ];
    const user = await userById(db, userId);
    if (!user) fail("not_found");
    let info;
    try {
      const verified = await verifyRegistrationResponse({
        response: answer as never,
        expectedChallenge: challenge,
        expectedOrigin: rp.origins,
        expectedRPID: rp.id,
        requireUserVerification: true,
        supportedAlgorithmIDs: [...PASSKEY_ALGORITHMS],
      });
      info = verified.verified ? verified.registrationInfo : null;
    } catch {
      info = null;
    }
    if (!info) fail("invalid_passkey");
    const fmt = info.fmt;
    if (attestation === "packed" ? fmt !== "packed" : fmt !== "none" && fmt !== "packed") {
      fail("invalid_passkey");
    }
    const count = await first<{ n: number }>(
      db,
      "SELECT count(*) AS n FROM passkeys WHERE user_id = ?",
      user.id,
    );
    if (Number(count?.n ?? 0) >= MAX_PASSKEYS) fail("invalid_passkey");
    const cred = info.credential;
    const inserted = await run(
      db,
      `INSERT INTO passkeys (id, user_id, public_key, counter, transports, device_type, backed_up,
         aaguid, attestation, name, created_at, last_used_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL) ON CONFLICT (id) DO NOTHING`,
      [
        cred.id,
        user.id,
        b64urlEncode(cred.publicKey),
        cred.counter,
        cred.transports ? JSON.stringify(cred.transports) : null,
        info.credentialDeviceType,
        info.credentialBackedUp ? 1 : 0,
        info.aaguid,
        fmt,
        name,
        now,
      ],
    );
    if (inserted !== 1) fail("invalid_passkey");
    seen.detail = { ...seen.detail, passkeyId: cred.id };
    return {
      ok: true as const,
      passkey: {
        id: cred.id,
        name,
        createdAt: now,
        lastUsedAt: null,
        deviceType: info.credentialDeviceType,
        backedUp: info.credentialBackedUp,
        attestation: fmt,
      },
    };
  });
  return await report(p, result, seen, (r) => (r.ok ? "factor.added" : null));
}

function passkeyName(v: unknown): string {
  if (typeof v !== "string") return fail("invalid_input");
  const name = v.trim();
  // deno-lint-ignore no-control-regex
  if (!name || name.length > MAX_PASSKEY_NAME || /[\u0000-\u001f\u007f]/.test(name)) {
    fail("invalid_name");
  }
  return name;
}

/** Parameters of {@linkcode passkeySignInOptions}. */
export interface PasskeySignInOptionsParams extends ClockOptions {
  /** The site. */
  rp: RelyingParty;
}

/** Result of {@linkcode passkeySignInOptions}. */
export type PasskeySignInOptionsResult = FlowResult<
  { options: PasskeyOptionsJSON; ceremony: string },
  CommonError
>;

/**
 * Options to sign in with a passkey, usernameless: no account is named, the browser offers
 * the site's discoverable passkeys (in the autofill list with `mediation: "conditional"` on a
 * field with `autocomplete="username webauthn"`, or after a button). Keep `ceremony` in an
 * HttpOnly cookie for {@linkcode verifyPasskeySignIn}. Never throws.
 *
 * @example
 * ```ts
 * import { openLibsql, passkeySignInOptions } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * const r = await passkeySignInOptions(db, {
 *   rp: { id: "example.com", name: "Example", origin: "https://example.com" },
 * });
 * if (r.ok) console.log(r.options.challenge);
 * ```
 */
export async function passkeySignInOptions(
  db: D1Database,
  p: PasskeySignInOptionsParams,
): Promise<PasskeySignInOptionsResult> {
  const { generateAuthenticationOptions } = await simpleWebAuthn();
  return guard(async () => {
    const o = params(p);
    const rp = rpOf(o.rp);
    const now = nowOf(o.now);
    const options = await generateAuthenticationOptions({
      rpID: rp.id,
      userVerification: "required",
      timeout: 300_000,
    });
    const ceremony = await openCeremony(db, {
      purpose: "sign-in",
      challenge: options.challenge,
      userId: null,
      sessionId: null,
      now,
    });
    return { ok: true as const, options: options as unknown as PasskeyOptionsJSON, ceremony };
  });
}

/** Parameters of {@linkcode verifyPasskeySignIn}. */
export interface VerifyPasskeySignInParams extends EventOptions, ClockOptions {
  /** The ceremony token from {@linkcode passkeySignInOptions} (the site's cookie). */
  ceremony: string;
  /** The browser's answer (`PublicKeyCredential` as JSON), or its JSON text. */
  response: unknown;
  /** The site (the same as for the options). */
  rp: RelyingParty;
}

/** Result of {@linkcode verifyPasskeySignIn}: the user to sign in and the passkey used. */
export type VerifyPasskeySignInResult = FlowResult<
  { userId: string; passkeyId: string },
  CommonError | "invalid_challenge" | "invalid_passkey" | "email_not_verified"
>;

/**
 * Checks a passkey sign-in. The passkey is both factors: no second step follows, whatever the
 * account's TOTP. Updates the counter and the last use. Never throws.
 *
 * @example
 * ```ts
 * import { openLibsql, verifyPasskeySignIn } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * const r = await verifyPasskeySignIn(db, {
 *   ceremony: "from the cookie",
 *   response: "{...the browser's JSON...}",
 *   rp: { id: "example.com", name: "Example", origin: "https://example.com" },
 * });
 * if (r.ok) console.log("sign in", r.userId);
 * ```
 */
export async function verifyPasskeySignIn(
  db: D1Database,
  p: VerifyPasskeySignInParams,
): Promise<VerifyPasskeySignInResult> {
  const { verifyAuthenticationResponse } = await simpleWebAuthn();
  const seen: Seen = { detail: { method: "passkey" } };
  const result = await guard(async () => {
    const o = params(p);
    sinkOf(o.onEvent);
    const rp = rpOf(o.rp);
    const ceremony = stringOf(o.ceremony, 200);
    const now = nowOf(o.now);
    const answer = answerOf(o.response);
    const challenge = await takeCeremony(db, { ceremony, purpose: "sign-in", now });
    const id = typeof answer.id === "string" && answer.id.length <= 1024 ? answer.id : "";
    const row = id
      ? await first<{
        id: string;
        user_id: string;
        public_key: string;
        counter: number;
        transports: string | null;
      }>(db, "SELECT id, user_id, public_key, counter, transports FROM passkeys WHERE id = ?", id)
      : null;
    if (!row) fail("invalid_passkey");
    seen.userId = row.user_id;
    seen.detail = { ...seen.detail, passkeyId: row.id };
    // A discoverable credential names its account: it must be the passkey's.
    const handle = (answer.response as { userHandle?: unknown } | undefined)?.userHandle;
    if (handle !== undefined && handle !== null) {
      const bytes = typeof handle === "string" ? b64urlDecode(handle) : null;
      if (!bytes || b64urlEncode(bytes) !== b64urlEncode(userHandle(row.user_id))) {
        fail("invalid_passkey");
      }
    }
    const publicKey = b64urlDecode(String(row.public_key));
    if (!publicKey) fail("invalid_passkey");
    let info;
    try {
      const verified = await verifyAuthenticationResponse({
        response: answer as never,
        expectedChallenge: challenge,
        expectedOrigin: rp.origins,
        expectedRPID: rp.id,
        requireUserVerification: true,
        credential: {
          id: row.id,
          publicKey,
          counter: Number(row.counter),
          transports: transportsOf(row.transports),
        },
      });
      info = verified.verified ? verified.authenticationInfo : null;
    } catch {
      info = null;
    }
    if (!info) fail("invalid_passkey");
    // The counter only grows (or stays 0): the UPDATE re-checks it against concurrent uses.
    const updated = await run(
      db,
      `UPDATE passkeys SET counter = ?, last_used_at = ?, backed_up = ?
       WHERE id = ? AND (counter < ? OR (counter = 0 AND ? = 0))`,
      [
        info.newCounter,
        now,
        info.credentialBackedUp ? 1 : 0,
        row.id,
        info.newCounter,
        info.newCounter,
      ],
    );
    if (updated !== 1) fail("invalid_passkey");
    const user = await userById(db, row.user_id);
    if (!user) fail("invalid_passkey");
    if (Number(user.email_verified) !== 1) fail("email_not_verified");
    return { ok: true as const, userId: user.id, passkeyId: row.id };
  });
  return await report(
    p,
    result,
    seen,
    (r) => r.ok ? "passkey.used" : r.error === "invalid_input" ? null : "sign_in.failed",
  );
}

/** Result of {@linkcode listPasskeys}. */
export type ListPasskeysResult = FlowResult<{ passkeys: Passkey[] }, CommonError>;

/**
 * The passkeys of an account, oldest first. Never throws.
 *
 * @example
 * ```ts
 * import { listPasskeys, openLibsql } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * const r = await listPasskeys(db, "5d0c...");
 * if (r.ok) for (const k of r.passkeys) console.log(k.name, k.lastUsedAt);
 * ```
 */
export function listPasskeys(db: D1Database, userId: string): Promise<ListPasskeysResult> {
  return guard(async () => {
    const id = stringOf(userId, 200);
    const rows = await all<Record<string, unknown>>(
      db,
      `SELECT id, name, created_at, last_used_at, device_type, backed_up, attestation
       FROM passkeys WHERE user_id = ? ORDER BY created_at, id`,
      id,
    );
    return {
      ok: true as const,
      passkeys: rows.map((r) => ({
        id: String(r.id),
        name: String(r.name),
        createdAt: Number(r.created_at),
        lastUsedAt: r.last_used_at === null ? null : Number(r.last_used_at),
        deviceType: r.device_type === "multiDevice"
          ? "multiDevice" as const
          : "singleDevice" as const,
        backedUp: Number(r.backed_up) === 1,
        attestation: String(r.attestation),
      })),
    };
  });
}

/** Parameters of {@linkcode renamePasskey}. */
export interface RenamePasskeyParams {
  /** The signed-in user's id. */
  userId: string;
  /** The passkey's id. */
  passkeyId: string;
  /** The new name (1–100 characters, no control characters). */
  name: string;
}

/** Result of {@linkcode renamePasskey}. */
export type RenamePasskeyResult = FlowResult<
  { name: string },
  CommonError | "not_found" | "invalid_name"
>;

/**
 * Renames one of the user's passkeys. Never throws.
 *
 * @example
 * ```ts
 * import { openLibsql, renamePasskey } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * await renamePasskey(db, { userId: "5d0c...", passkeyId: "AbC...", name: "Phone" });
 * ```
 */
export function renamePasskey(
  db: D1Database,
  p: RenamePasskeyParams,
): Promise<RenamePasskeyResult> {
  return guard(async () => {
    const o = params(p);
    const userId = stringOf(o.userId, 200);
    const passkeyId = stringOf(o.passkeyId, 1024);
    const name = passkeyName(o.name);
    const changed = await run(db, "UPDATE passkeys SET name = ? WHERE id = ? AND user_id = ?", [
      name,
      passkeyId,
      userId,
    ]);
    if (changed !== 1) fail("not_found");
    return { ok: true as const, name };
  });
}

/** Parameters of {@linkcode removePasskey}. */
export interface RemovePasskeyParams
  extends EventOptions, ReauthOptions, HashingOptions, ClockOptions {
  /** The signed-in user's id. */
  userId: string;
  /** The passkey's id. */
  passkeyId: string;
}

/** Result of {@linkcode removePasskey}. */
export type RemovePasskeyResult = FlowResult<
  Record<never, never>,
  | CommonError
  | "not_found"
  | "wrong_password"
  | "reauth_required"
  | "too_many_attempts"
  | "last_method"
>;

/**
 * Removes one of the user's passkeys after the re-authentication, unless it is the account's
 * last way in (no password, no other passkey, no linked provider): `last_method`. The check
 * and the deletion are one statement. Never throws.
 *
 * @example
 * ```ts
 * import { openLibsql, removePasskey } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * const r = await removePasskey(db, {
 *   userId: "5d0c...",
 *   passkeyId: "AbC...",
 *   session: { issuedAt: Math.floor(Date.now() / 1000) },
 * });
 * if (!r.ok && r.error === "last_method") console.log("add another way to sign in first");
 * ```
 */
export async function removePasskey(
  db: D1Database,
  p: RemovePasskeyParams,
): Promise<RemovePasskeyResult> {
  const seen: Seen = { detail: { factor: "passkey" } };
  const result = await guard(async () => {
    const o = params(p);
    sinkOf(o.onEvent);
    const userId = stringOf(o.userId, 200);
    seen.userId = userId;
    const passkeyId = stringOf(o.passkeyId, 1024);
    seen.detail = { ...seen.detail, passkeyId };
    const now = nowOf(o.now);
    const user = await userById(db, userId);
    if (!user) fail("not_found");
    const denied = await reauthError(db, user, o, now);
    if (denied) fail(denied);
    const removed = await run(
      db,
      `DELETE FROM passkeys WHERE id = ? AND user_id = ? AND (${OTHER_WAY_IN})`,
      [passkeyId, userId, userId, userId, userId, passkeyId],
    );
    if (removed === 1) return { ok: true as const };
    const exists = await first(
      db,
      "SELECT 1 AS x FROM passkeys WHERE id = ? AND user_id = ?",
      passkeyId,
      userId,
    );
    return fail(exists ? "last_method" : "not_found");
  });
  return await report(p, result, seen, (r) => (r.ok ? "factor.removed" : null));
}

/**
 * SQL: the account (`?` user id, thrice, then the passkey id) has a way in besides that
 * passkey: a password, a linked provider, another passkey. @internal
 */
const OTHER_WAY_IN = `EXISTS (SELECT 1 FROM users WHERE id = ? AND password_hash IS NOT NULL
    AND password_hash <> '')
  OR EXISTS (SELECT 1 FROM oauth_identities WHERE user_id = ?)
  OR EXISTS (SELECT 1 FROM passkeys WHERE user_id = ? AND id <> ?)`;

/** Parameters of {@linkcode removePassword}. */
export interface RemovePasswordParams
  extends EventOptions, ReauthOptions, HashingOptions, ClockOptions {
  /** The signed-in user's id. */
  userId: string;
}

/** Result of {@linkcode removePassword}. */
export type RemovePasswordResult = FlowResult<
  Record<never, never>,
  | CommonError
  | "not_found"
  | "wrong_password"
  | "reauth_required"
  | "too_many_attempts"
  | "last_method"
>;

/**
 * Makes an account passkey-only (or provider-only): removes its password after the
 * re-authentication, when it has a passkey or a linked provider (`last_method` otherwise).
 * Like any credential change, it ends every session (the stamp changes): sign the browser in
 * again. Never throws.
 *
 * @example
 * ```ts
 * import { openLibsql, removePassword } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * const r = await removePassword(db, { userId: "5d0c...", password: "the current one" });
 * ```
 */
export async function removePassword(
  db: D1Database,
  p: RemovePasswordParams,
): Promise<RemovePasswordResult> {
  const seen: Seen = { detail: { factor: "password" } };
  const result = await guard(async () => {
    const o = params(p);
    sinkOf(o.onEvent);
    const userId = stringOf(o.userId, 200);
    seen.userId = userId;
    const now = nowOf(o.now);
    const user = await userById(db, userId);
    if (!user) fail("not_found");
    const denied = await reauthError(db, user, o, now);
    if (denied) fail(denied);
    const changed = await run(
      db,
      `UPDATE users SET password_hash = NULL, stamp = ?, updated_at = ? WHERE id = ?
       AND (EXISTS (SELECT 1 FROM passkeys WHERE user_id = ?)
         OR EXISTS (SELECT 1 FROM oauth_identities WHERE user_id = ?))`,
      [newStamp(), now, userId, userId, userId],
    );
    if (changed !== 1) fail("last_method");
    return { ok: true as const };
  });
  return await report(p, result, seen, (r) => (r.ok ? "factor.removed" : null));
}
