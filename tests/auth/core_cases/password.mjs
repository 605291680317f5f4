/**
 * Cases for password hashing: format, the Workers per-call cap, the chained construction, garbage input, rehash.
 *
 * @module
 */
import assert from "node:assert/strict";
import { emulateWorkersCap, FAST, test } from "./_harness.mjs";

test("password: default hash is self-describing, salted, and verifies", async ({ api }) => {
  const a = await api.hashPassword("correct horse battery staple");
  const b = await api.hashPassword("correct horse battery staple");
  assert.match(a, /^\$pbkdf2-sha256\$i=600000,c=100000\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
  assert.notEqual(a, b, "random salt");
  assert.equal(await api.verifyPassword("correct horse battery staple", a), true);
  assert.equal(await api.verifyPassword("correct horse battery stapler", a), false);
  assert.equal(await api.verifyPassword("", a), false);
  assert.equal(api.DEFAULT_PASSWORD_ITERATIONS, 600_000);
});

test("password: default stays within Workers' 100,000-iterations-per-call cap", async ({ api }) => {
  const cap = emulateWorkersCap();
  try {
    const stored = await api.hashPassword("pw-under-cap");
    assert.equal(await api.verifyPassword("pw-under-cap", stored), true);
    assert.deepEqual(
      cap.calls,
      [100_000, 100_000, 100_000, 100_000, 100_000, 100_000].concat(
        [100_000, 100_000, 100_000, 100_000, 100_000, 100_000],
      ),
    );
    // A plain single-call PBKDF2 above the cap would be refused by the emulated runtime...
    const key = await crypto.subtle.importKey(
      "raw",
      new TextEncoder().encode("x"),
      "PBKDF2",
      false,
      [
        "deriveBits",
      ],
    );
    await assert.rejects(
      crypto.subtle.deriveBits(
        { name: "PBKDF2", hash: "SHA-256", salt: new Uint8Array(16), iterations: 600_000 },
        key,
        256,
      ),
    );
    // ...and a stored hash asking for that is false, without calling PBKDF2 at all.
    const over = stored.replace("c=100000", "c=600000");
    const before = cap.calls.length;
    assert.equal(await api.verifyPassword("pw-under-cap", over), false);
    assert.equal(cap.calls.length, before);
  } finally {
    cap.restore();
  }
});

test("password: the chain is the documented construction", async ({ api }) => {
  // i=5, c=2: T1 = PBKDF2(P, S, 2), T2 = PBKDF2(P, T1, 2), T3 = PBKDF2(P, T2, 1).
  const salt = Uint8Array.from({ length: 16 }, (_, i) => i);
  const key = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode("pässword"),
    "PBKDF2",
    false,
    [
      "deriveBits",
    ],
  );
  let block = salt;
  for (const n of [2, 2, 1]) {
    block = new Uint8Array(
      await crypto.subtle.deriveBits(
        { name: "PBKDF2", hash: "SHA-256", salt: block, iterations: n },
        key,
        256,
      ),
    );
  }
  const b64 = (u) => btoa(String.fromCharCode(...u)).replace(/=+$/, "");
  const stored = `$pbkdf2-sha256$i=5,c=2$${b64(salt)}$${b64(block)}`;
  assert.equal(await api.verifyPassword("pässword", stored), true);
  // NFD input normalizes to the same NFC password.
  assert.equal(await api.verifyPassword("pa\u0308ssword", stored), true);
  assert.equal(await api.verifyPassword("password", stored), false);
  // With i <= c it is plain PBKDF2; reference value from Python's hashlib.pbkdf2_hmac(
  // "sha256", b"passwd", b"saltSALTsaltSALT", 3, 32).
  const plain = `$pbkdf2-sha256$i=3,c=100000$${
    b64(new TextEncoder().encode("saltSALTsaltSALT"))
  }$CEy7aGNca8Ef88uqhthWDUuHk/FeuOCfbkDmgP6HP4w`;
  assert.equal(await api.verifyPassword("passwd", plain), true);
});

test("password: garbage, truncated and excessive hashes give false, never throw", async ({ api }) => {
  const good = await api.hashPassword("pw", FAST);
  assert.equal(await api.verifyPassword("pw", good), true);
  const bad = [
    "",
    "garbage",
    "$pbkdf2-sha256$",
    good.slice(0, -1),
    good.slice(0, -10),
    good.slice(0, good.lastIndexOf("$")),
    good.replace("i=1000", "i=0"),
    good.replace("i=1000", "i=01000"),
    good.replace("i=1000", "i=-1000"),
    good.replace("i=1000", "i=2000001"),
    good.replace("i=1000", "i=99999999999"),
    good.replace("c=100000", "c=100001"),
    good.replace("$pbkdf2-sha256$", "$pbkdf2-sha512$"),
    good.replace(",c=100000", ""),
    good + "$extra",
    good.slice(0, good.lastIndexOf("$") + 1) + "!!!!",
    good.slice(0, good.lastIndexOf("$") + 1) + "AAAA",
    " " + good,
    "x".repeat(100_000),
  ];
  for (const stored of bad) {
    assert.equal(
      await api.verifyPassword("pw", stored),
      false,
      JSON.stringify(stored.slice(0, 80)),
    );
  }
  for (const stored of [null, undefined, 42, {}, ["$pbkdf2-sha256$"]]) {
    assert.equal(await api.verifyPassword("pw", stored), false);
  }
  assert.equal(await api.verifyPassword(null, good), false);
});

test("password: needsRehash follows the wanted parameters", async ({ api }) => {
  const fast = await api.hashPassword("pw", FAST);
  assert.equal(api.needsRehash(fast, FAST), false);
  assert.equal(api.needsRehash(fast), true, "default is 600,000");
  assert.equal(api.needsRehash(fast, { iterations: 2000 }), true);
  assert.equal(api.needsRehash("garbage", FAST), true);
  assert.equal(api.needsRehash(fast.replace("c=100000", "c=50000"), FAST), true);
});

test("password: invalid arguments throw AuthError invalid_options", async ({ api }) => {
  for (const iterations of [0, -1, 1.5, 2_000_001, Number.NaN]) {
    await assert.rejects(api.hashPassword("pw", { iterations }), (e) => {
      assert.ok(e instanceof api.AuthError);
      assert.equal(e.code, "invalid_options");
      return true;
    });
  }
  await assert.rejects(api.hashPassword(""), { code: "invalid_options" });
  assert.throws(() => api.needsRehash("x", { iterations: 0 }), { code: "invalid_options" });
});
