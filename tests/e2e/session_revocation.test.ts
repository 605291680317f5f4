/**
 * `/d1` session revocation on the real app process: a password change, a reset and "sign out
 * everywhere" on the users site end every session issued before, on every device and in every
 * copy of the cookie; the browser that changed the password stays signed in.
 */
import assert from "node:assert/strict";
import { startAppProcess } from "./_process.ts";
import {
  Browser,
  copyOf,
  newestResetToken,
  newUser,
  postJson,
  signedIn,
  signIn,
} from "./_users_site.ts";

Deno.test("d1 sessions on the real app end with a password change, a reset and sign-out-everywhere", async () => {
  const app = await startAppProcess();
  const origin = `http://127.0.0.1:${app.port}`;
  try {
    const email = "revoked@example.com";
    const first = "the first passphrase here";
    const second = "the second passphrase here";
    const third = "the third passphrase here";
    const laptop = new Browser(origin);
    await newUser(laptop, email, first);
    const phone = new Browser(origin);
    assert.equal((await signIn(phone, email, first)).status, 200);
    let stolen = copyOf(laptop);
    for (const b of [laptop, phone, stolen]) assert.equal(await signedIn(b), true);

    // A password change: every other session ends; this browser is signed in again.
    const changed = await laptop.post("/users/account/password", {
      currentPassword: first,
      newPassword: second,
    });
    assert.equal(changed.status, 303);
    assert.equal(changed.location, `${origin}/users/?done=password`);
    assert.equal(await signedIn(laptop), true, "the browser that changed it");
    assert.equal(await signedIn(phone), false, "the other device");
    assert.equal(await signedIn(stolen), false, "the copied cookie");
    assert.equal((await signIn(phone, email, first)).status, 401);
    assert.equal((await signIn(phone, email, second)).status, 200);

    // A reset: every session ends, the resetting browser's too.
    stolen = copyOf(laptop);
    const stranger = new Browser(origin);
    assert.equal((await postJson(stranger, "/users/api/auth/forgot", { email })).status, 200);
    const token = await newestResetToken(origin, email);
    const reset = await postJson(stranger, "/users/api/auth/reset", { token, password: third });
    assert.equal(reset.status, 200, JSON.stringify(reset.body));
    for (const [b, who] of [[laptop, "laptop"], [phone, "phone"], [stolen, "copy"]] as const) {
      assert.equal(await signedIn(b), false, `${who} after the reset`);
    }
    assert.equal((await signIn(laptop, email, second)).status, 401);
    assert.equal((await signIn(laptop, email, third)).status, 200);
    assert.equal((await signIn(phone, email, third)).status, 200);

    // "Sign out everywhere" from one device ends them all.
    stolen = copyOf(phone);
    const out = await laptop.post("/users/account/sessions", {});
    assert.equal(out.status, 303);
    for (const [b, who] of [[laptop, "laptop"], [phone, "phone"], [stolen, "copy"]] as const) {
      assert.equal(await signedIn(b), false, `${who} after sign-out everywhere`);
    }
  } finally {
    await app.close();
  }
});
