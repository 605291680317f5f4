/**
 * The cost of a second factor's check and of a passkey's verification:
 *
 * - a TOTP check: the core's `verifyTotp` over the ±1 window (three HMAC-SHA-1), and the whole
 *   `verifySecondFactor` flow on a libSQL file (ticket, throttle, the sealed key opened, the
 *   step spent);
 * - a passkey's verification: `@simplewebauthn/server`'s `verifyAuthenticationResponse` for
 *   ES256, RS256 and EdDSA assertions, and the whole `passkeySignInOptions` +
 *   `verifyPasskeySignIn` ceremony on a libSQL file.
 *
 * The assertions come from the flow tests' software authenticator (`tests/d1/_authenticator.ts`).
 * Each iteration is one check (time/iter is per check).
 *
 * ```sh
 * deno bench -A --config tests/deno.json bench/factors_bench.ts
 * ```
 *
 * @module
 */
import { verifyAuthenticationResponse } from "@simplewebauthn/server";
import { totp, verifyTotp } from "../mod.ts";
import {
  applySchema,
  confirmTotpEnrolment,
  login,
  openLibsql,
  passkeyRegistrationOptions,
  passkeySignInOptions,
  startTotpEnrolment,
  verifyPasskeyRegistration,
  verifyPasskeySignIn,
  verifySecondFactor,
} from "../d1.ts";
import { hashPassword } from "../mod.ts";
import { type Alg, create, get } from "../tests/d1/_authenticator.ts";
import { base32Decode } from "../mod.ts";

const SECRET = "bench token secret, long and random enough";
const ORIGIN = "https://example.com";
const rp = { id: "example.com", name: "Bench", origin: ORIGIN };

// TOTP -----------------------------------------------------------------------------------------
const key = crypto.getRandomValues(new Uint8Array(20));
const now = Date.now();
const code = await totp(key, { now });

Deno.bench(
  "TOTP: verifyTotp (±1 step, 3 HMAC-SHA-1)",
  { group: "totp", baseline: true },
  async () => {
    await verifyTotp(key, code, { now });
  },
);

const dir = await Deno.makeTempDir({ prefix: "gatehouse-bench-factors-" });
const db = openLibsql(`file:${dir}/bench.db`);
await applySchema(db);
const userId = crypto.randomUUID();
const email = "bench@example.com";
await db.prepare(
  `INSERT INTO users (id, email, password_hash, email_verified, stamp, created_at, updated_at)
   VALUES (?, ?, ?, 1, 's', 0, 0)`,
).bind(userId, email, await hashPassword("bench passphrase", { iterations: 1000 })).run();
const session = { id: "bench-session", issuedAt: Math.floor(now / 1000) };
const enrol = await startTotpEnrolment(db, { userId, session, secret: SECRET, issuer: "Bench" });
if (!enrol.ok) throw new Error(enrol.error);
const benchKey = base32Decode(enrol.secret)!;
const confirmed = await confirmTotpEnrolment(db, {
  userId,
  code: await totp(benchKey, { now: 0 + now }),
  secret: SECRET,
  now,
});
if (!confirmed.ok) throw new Error(confirmed.error);
// Each check spends its time step, so the bench's clock moves one step per iteration.
let step = 1;
const first = await login(db, {
  email,
  password: "bench passphrase",
  secret: SECRET,
  iterations: 1000,
  now,
});
const ticketOf = async (at: number) => {
  const l = await login(db, {
    email,
    password: "bench passphrase",
    secret: SECRET,
    iterations: 1000,
    now: at,
  });
  return (l as { ticket?: string }).ticket ?? "";
};
let ticket = (first as { ticket?: string }).ticket ?? "";
let ticketAt = now;

Deno.bench("TOTP: verifySecondFactor flow (libSQL file)", { group: "totp" }, async (b) => {
  const at = now + 30_000 * step++;
  if (at - ticketAt > 240_000) {
    ticket = await ticketOf(at);
    ticketAt = at;
  }
  const c = await totp(benchKey, { now: at });
  b.start();
  const r = await verifySecondFactor(db, { ticket, code: c, secret: SECRET, now: at });
  b.end();
  if (!r.ok) throw new Error(r.error);
});

// Passkeys ------------------------------------------------------------------------------------
const challenge = "Y2hhbGxlbmdlLW9mLXRoZS1iZW5jaC0xMjM0NTY3OA";
for (const alg of ["ES256", "RS256", "EdDSA"] as Alg[]) {
  const made = await create(
    { rp: { id: rp.id }, user: { id: "dXNlcg" }, challenge },
    { origin: ORIGIN, alg },
  );
  const reg = await (await import("@simplewebauthn/server")).verifyRegistrationResponse({
    response: made.json as never,
    expectedChallenge: challenge,
    expectedOrigin: ORIGIN,
    expectedRPID: rp.id,
  });
  if (!reg.verified) throw new Error("registration did not verify");
  // Counter 0 (a synced passkey's): the same assertion verifies every time.
  const assertion = await get({ challenge }, made.credential, { origin: ORIGIN, counter: 0 });
  const credential = { ...reg.registrationInfo.credential, counter: 0 };
  Deno.bench(
    `passkey: verifyAuthenticationResponse (${alg})`,
    { group: "passkey", baseline: alg === "ES256" },
    async () => {
      const v = await verifyAuthenticationResponse({
        response: assertion as never,
        expectedChallenge: challenge,
        expectedOrigin: ORIGIN,
        expectedRPID: rp.id,
        credential,
        requireUserVerification: true,
      });
      if (!v.verified) throw new Error("did not verify");
    },
  );
}

const regOptions = await passkeyRegistrationOptions(db, { userId, session, rp, now });
if (!regOptions.ok) throw new Error(regOptions.error);
const made = await create(regOptions.options, { origin: ORIGIN });
const added = await verifyPasskeyRegistration(db, {
  userId,
  session,
  ceremony: regOptions.ceremony,
  response: made.json,
  rp,
  now,
});
if (!added.ok) throw new Error(added.error);

Deno.bench("passkey: options + verifyPasskeySignIn flow (ES256, libSQL file)", {
  group: "passkey",
}, async (b) => {
  const o = await passkeySignInOptions(db, { rp });
  if (!o.ok) throw new Error(o.error);
  const answer = await get(o.options, made.credential, { origin: ORIGIN });
  b.start();
  const r = await verifyPasskeySignIn(db, { ceremony: o.ceremony, response: answer, rp });
  b.end();
  if (!r.ok) throw new Error(r.error);
});

globalThis.addEventListener("unload", () => {
  db.close();
  Deno.removeSync(dir, { recursive: true });
});
