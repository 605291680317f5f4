/**
 * Account takeover before verification, on the real app process: an attacker signs up with
 * the victim's address and their own password; the victim signs up within the minute (the
 * resend throttle sends no new code) and types the only code in their inbox. The code must not
 * confirm the attacker's password; the victim completes the account from the inbox (a reset
 * link) and ends up with their own password while the attacker's fails.
 */
import assert from "node:assert/strict";
import { startAppProcess } from "./_process.ts";
import {
  Browser,
  mailsTo,
  newestCode,
  newestResetToken,
  postJson,
  signedIn,
  signIn,
  signUp,
} from "./_users_site.ts";

const ATTACKER = "the attacker's own passphrase";
const VICTIM = "the victim's own passphrase";

Deno.test("signup takeover on the real app: the inbox code never confirms the attacker's password", async () => {
  const app = await startAppProcess();
  const origin = `http://127.0.0.1:${app.port}`;
  try {
    const email = "victim@example.com";
    const attacker = new Browser(origin);
    const victim = new Browser(origin);
    await signUp(attacker, email, ATTACKER);
    assert.equal(await mailsTo(origin, email), 1, "the attacker's signup e-mailed the victim");
    await signUp(victim, email, VICTIM);
    assert.equal(await mailsTo(origin, email), 1, "inside the minute: no second code");
    const code = await newestCode(origin, email);

    // The victim types the only code in their inbox: it was sent for the attacker's signup.
    const typed = await postJson(victim, "/users/api/auth/verify", { email, code });
    assert.equal(typed.status, 400);
    assert.deepEqual(typed.body, { error: "invalid_code" });
    assert.equal(victim.cookies.has("__Host-users-session"), false, "no session");
    // Nor does it confirm anything from the attacker's browser (the attacker's signup was
    // replaced by the victim's).
    const replayed = await postJson(attacker, "/users/api/auth/verify", { email, code });
    assert.deepEqual(replayed.body, { error: "invalid_code" });
    const early = await signIn(new Browser(origin), email, ATTACKER);
    assert.equal(early.status, 401);
    assert.deepEqual(early.body, { error: "invalid_credentials" });

    // The victim completes the account from the inbox: a reset link sets their password.
    const forgot = await postJson(victim, "/users/api/auth/forgot", { email });
    assert.equal(forgot.status, 200);
    const token = await newestResetToken(origin, email);
    const reset = await postJson(victim, "/users/api/auth/reset", { token, password: VICTIM });
    assert.equal(reset.status, 200, JSON.stringify(reset.body));

    const owner = new Browser(origin);
    assert.equal((await signIn(owner, email, VICTIM)).status, 200);
    assert.equal(await signedIn(owner), true);
    const thief = new Browser(origin);
    const denied = await signIn(thief, email, ATTACKER);
    assert.equal(denied.status, 401);
    assert.deepEqual(denied.body, { error: "invalid_credentials" });
    assert.equal(await signedIn(thief), false);
    // The first code is worthless for good.
    const late = await postJson(attacker, "/users/api/auth/verify", { email, code });
    assert.equal(late.status, 400);
    assert.equal(attacker.cookies.has("__Host-users-session"), false);
  } finally {
    await app.close();
  }
});
