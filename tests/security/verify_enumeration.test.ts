/**
 * Signup verification tells nobody but the signer whether an address has a pending signup.
 * Before, wrong codes for an address with a pending code were counted against that code and
 * answered `too_many_attempts` after 5 (`expired_code` once it expired), while an address with
 * none answered `invalid_code` up to the address throttle (10): anyone could learn that an
 * address was signing up, and burn the signer's code, without holding the signup's `attempt`.
 * Now a try without the signup's attempt is `invalid_code` exactly as for an unknown address
 * (counted by the per-address throttle only); the code's own tries, expiry and limit are for
 * the browser that signed up.
 */
import assert from "node:assert/strict";
import { applySchema, openLibsql, signup, verifyOtp } from "../../d1.ts";
import { startAppProcess } from "../e2e/_process.ts";

function post(port: number, path: string, form: Record<string, string>, cookie = "") {
  return fetch(`http://127.0.0.1:${port}/users/api/auth/${path}`, {
    method: "POST",
    redirect: "manual",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      accept: "application/json",
      ...(cookie ? { cookie } : {}),
    },
    body: new URLSearchParams(form).toString(),
  });
}

async function answer(r: Response): Promise<string> {
  return `${r.status} ${await r.text()}`;
}

Deno.test("users site: verify answers the same for an address with a pending signup as for none", async () => {
  const app = await startAppProcess();
  try {
    const pending = "signing-up@example.com";
    const s = await post(app.port, "signup", { email: pending, password: "a fine password 1" });
    assert.equal(s.status, 200, await s.clone().text());
    const cookie = (s.headers.get("set-cookie") ?? "").split(";")[0];
    await s.body?.cancel();
    const outbox = await (await fetch(`http://127.0.0.1:${app.port}/users/outbox`)).text();
    const code = /verification code is (\d{6})/.exec(outbox)?.[1];
    assert.ok(code, "the signup code is in the development outbox");
    const wrong = code === "000000" ? "111111" : "000000";

    // Another client, without the signup's cookie, tries wrong codes for both addresses.
    const seen: Record<string, string[]> = { pending: [], none: [] };
    for (let i = 0; i < 7; i++) {
      seen.pending.push(
        await answer(await post(app.port, "verify", { email: pending, code: wrong })),
      );
      seen.none.push(
        await answer(await post(app.port, "verify", { email: "nobody@example.com", code: wrong })),
      );
    }
    assert.deepEqual(seen.pending, seen.none, "same answers, so nothing tells the two apart");

    // The signer's code was not used up by those tries: it still verifies.
    const ok = await post(app.port, "verify", { email: pending, code }, cookie);
    assert.equal(ok.status, 200, await ok.clone().text());
    await ok.body?.cancel();
  } finally {
    await app.close();
  }
});

Deno.test("verifyOtp: an expired or used-up code shows only to the signup's attempt", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-verify-" });
  const db = openLibsql(`file:${dir}/site.db`);
  try {
    await applySchema(db);
    const secret = "a token secret for the test";
    const mails: string[] = [];
    const now = Date.now();
    const email = "ada@example.com";
    const s = await signup(db, {
      email,
      password: "a fine password 1",
      secret,
      sendEmail: (m) => {
        mails.push(m.text ?? m.html ?? "");
      },
      iterations: 1000,
      now,
    });
    assert.ok(s.ok);
    const code = /\b(\d{6})\b/.exec(mails[0])![1];
    const later = now + 11 * 60_000;
    const stranger = "not the attempt";
    assert.deepEqual(
      await verifyOtp(db, { email, code, attempt: stranger, secret, now: later }),
      await verifyOtp(db, {
        email: "none@example.com",
        code,
        attempt: stranger,
        secret,
        now: later,
      }),
    );
    assert.deepEqual(await verifyOtp(db, { email, code, attempt: s.attempt, secret, now: later }), {
      ok: false,
      error: "expired_code",
    });
  } finally {
    db.close();
    await Deno.remove(dir, { recursive: true });
  }
});
