/**
 * The owner-only site of the reference app, as a real process (`app/main.ts`): its one shared
 * password is guarded by the sign-in throttle in the app's database (guessing was unlimited:
 * about 4 to 22 guesses a second, every one checked), and its sessions end when the owner
 * password changes (a session issued before kept working for its whole week).
 */
import assert from "node:assert/strict";
import { hashPassword } from "../../mod.ts";
import { startAppProcess } from "../e2e/_process.ts";

function login(port: number, password: string, client: string): Promise<Response> {
  return fetch(`http://127.0.0.1:${port}/owner/api/auth/login`, {
    method: "POST",
    redirect: "manual",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      accept: "application/json",
      "x-forwarded-for": client,
    },
    body: new URLSearchParams({ email: "owner@example.com", password }).toString(),
  });
}

async function status(r: Promise<Response>): Promise<number> {
  const res = await r;
  await res.body?.cancel();
  return res.status;
}

Deno.test("owner site: password guesses are throttled per client, the owner still signs in", async () => {
  const hash = await hashPassword("the-owner-password", { iterations: 1000 });
  // Behind a trusted proxy (the test's own address), X-Forwarded-For names the client.
  const app = await startAppProcess({ OWNER_PASSWORD_HASH: hash, TRUSTED_PROXIES: "127.0.0.1" });
  try {
    const seen: number[] = [];
    let refused: Response | null = null;
    for (let i = 0; i < 12 && !refused; i++) {
      const r = await login(app.port, `wrong-${i}`, "203.0.113.1");
      if (r.status === 429) refused = r;
      else {
        seen.push(r.status);
        await r.body?.cancel();
      }
    }
    assert.ok(refused, `a guessing client is refused at some point (answers: ${seen})`);
    assert.ok(seen.length >= 5 && seen.every((s) => s === 401), `5 free tries: ${seen}`);
    assert.ok(Number(refused.headers.get("retry-after")) >= 1, "Retry-After says how long");
    assert.deepEqual(await refused.json(), { error: "too_many_attempts" });
    // While it waits, even the right password is not checked for that client.
    assert.equal(await status(login(app.port, "the-owner-password", "203.0.113.1")), 429);
    // Many guesses at once from a fresh client: no more than the free tries are checked.
    const burst = await Promise.all(
      Array.from({ length: 30 }, (_, i) => status(login(app.port, `burst-${i}`, "203.0.113.2"))),
    );
    assert.ok(burst.filter((s) => s === 401).length <= 6, `burst answers: ${burst}`);
    assert.equal(burst.filter((s) => s === 401 || s === 429).length, 30);
    // The owner, from elsewhere, is not locked out by either guesser.
    assert.equal(await status(login(app.port, "the-owner-password", "198.51.100.7")), 200);
  } finally {
    await app.close();
  }
});

Deno.test("owner site: a session ends when the owner password changes", async () => {
  const first = await hashPassword("first-password", { iterations: 1000 });
  const second = await hashPassword("second-password", { iterations: 1000 });
  let cookie = "";
  const app1 = await startAppProcess({ OWNER_PASSWORD_HASH: first });
  try {
    const r = await login(app1.port, "first-password", "203.0.113.9");
    assert.equal(r.status, 200);
    await r.body?.cancel();
    cookie = r.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
    const page = await fetch(`http://127.0.0.1:${app1.port}/owner/`, {
      headers: { cookie },
      redirect: "manual",
    });
    await page.body?.cancel();
    assert.equal(page.status, 200, "the session opens the page");
  } finally {
    await app1.close();
  }
  // Same secrets, a new owner password (the old one leaked): the old session is over.
  const app2 = await startAppProcess({ OWNER_PASSWORD_HASH: second });
  try {
    const page = await fetch(`http://127.0.0.1:${app2.port}/owner/`, {
      headers: { cookie },
      redirect: "manual",
    });
    await page.body?.cancel();
    assert.equal(page.status, 302, "the session from before the change no longer signs in");
    assert.match(page.headers.get("location") ?? "", /\/owner\/api\/auth\/login$/);
    const r = await login(app2.port, "second-password", "203.0.113.9");
    await r.body?.cancel();
    assert.equal(r.status, 200);
  } finally {
    await app2.close();
  }
});
