/**
 * The users site's password throttle on the real app process (docs/security.md, "Limits and
 * throttles"): one client gets 5 wrong guesses at an account, then 429 with `Retry-After`;
 * the owner on their own network is not kept out meanwhile, and after the wait the right
 * password works from the guessing network too. Client addresses come from `X-Forwarded-For`
 * of a trusted proxy (`TRUSTED_PROXIES=127.0.0.1`), as behind a real proxy.
 */
import assert from "node:assert/strict";
import { THROTTLE } from "../../d1.ts";
import { startAppProcess } from "./_process.ts";
import { Browser, newUser, signedIn, signIn } from "./_users_site.ts";

const OWNER_NETWORK = { "x-forwarded-for": "198.51.100.7" };
const GUESSER = { "x-forwarded-for": "203.0.113.66" };

Deno.test("sign-in throttle on the real app: 5 wrong guesses, then 429 with Retry-After; the owner gets in", async () => {
  const app = await startAppProcess({ TRUSTED_PROXIES: "127.0.0.1" });
  const origin = `http://127.0.0.1:${app.port}`;
  try {
    const email = "guessed@example.com";
    const password = "the owner's real passphrase";
    await newUser(new Browser(origin), email, password);
    assert.equal((await signIn(new Browser(origin), email, password, OWNER_NETWORK)).status, 200);

    const guesser = new Browser(origin);
    assert.equal(THROTTLE.accountClient, 5, "the documented number");
    for (let i = 0; i < THROTTLE.accountClient; i++) {
      const r = await signIn(guesser, email, `wrong guess ${i}`, GUESSER);
      assert.equal(r.status, 401, `guess ${i + 1}`);
      assert.deepEqual(r.body, { error: "invalid_credentials" });
      assert.equal(r.retryAfter, null);
    }
    // The 5th failure started a wait of 1 s. A machine slow enough to let it pass before the
    // next guess arrives lets that guess count, and the next wait doubles: so guess until a
    // refusal, and expect at most the documented wait for the failures counted by then.
    let extra = 0;
    let refused = await signIn(guesser, email, "wrong guess 5", GUESSER);
    while (refused.status === 401 && extra < 8) {
      extra++;
      refused = await signIn(guesser, email, `wrong guess ${5 + extra}`, GUESSER);
    }
    assert.equal(refused.status, 429);
    assert.deepEqual(refused.body, { error: "too_many_attempts" });
    assert.match(refused.retryAfter ?? "", /^[1-9]\d*$/);
    const wait = Number(refused.retryAfter);
    assert.ok(wait <= THROTTLE.firstDelaySeconds * 2 ** extra, `Retry-After ${wait}, ${extra}`);
    assert.equal(guesser.cookies.has("__Host-users-session"), false);

    // Meanwhile the owner, on their own network, signs in at once.
    const owner = new Browser(origin);
    assert.equal((await signIn(owner, email, password, OWNER_NETWORK)).status, 200);
    assert.equal(await signedIn(owner), true);

    // After the wait, the right password works from the guessing network as well.
    await new Promise((r) => setTimeout(r, wait * 1000));
    const later = new Browser(origin);
    const back = await signIn(later, email, password, GUESSER);
    assert.equal(back.status, 200, JSON.stringify(back.body));
    assert.equal(await signedIn(later), true);
  } finally {
    await app.close();
  }
});
