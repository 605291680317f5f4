/**
 * Cases for ending one session everywhere: session ids, `revokeSession`, the `revoked` option
 * of `readSession`, `memoryRevocationStore`, and cookies made before session ids.
 *
 * @module
 */
import assert from "node:assert/strict";
import { cookiePair, T0, test } from "./_harness.mjs";

const NOW = T0 + 1000;

function fresh() {
  return { secret: `revocation-${Math.random()}`, cookieName: "__Host-session" };
}

function req(cookie) {
  return new Request("https://site.example/", cookie ? { headers: { cookie } } : {});
}

/** A cookie as the core made it before session ids: a signed subject or [subject, generation]. */
async function oldCookie(api, config, payload) {
  const token = await api.signToken(config.secret, {
    purpose: `session:${config.cookieName}`,
    payload,
    ttlSeconds: 3600,
    now: T0,
  });
  return `${config.cookieName}=${token}`;
}

test("session ids: each cookie has its own, the same in every copy; older cookies get a stable one", async ({ api }) => {
  const config = fresh();
  const a = cookiePair(await api.createSessionCookie(config, "u1", { now: T0 }));
  const b = cookiePair(await api.createSessionCookie(config, "u1", { now: T0 }));
  assert.notEqual(a, b, "two sign-ins in the same second are two sessions");
  const ida = (await api.readSession(config, req(a), { now: NOW }))?.id;
  const idb = (await api.readSession(config, req(b), { now: NOW }))?.id;
  assert.match(ida ?? "", /^[A-Za-z0-9_-]{22}$/);
  assert.match(idb ?? "", /^[A-Za-z0-9_-]{22}$/);
  assert.notEqual(ida, idb);
  assert.equal((await api.readSession(config, req(a), { now: NOW }))?.id, ida, "remembered");
  const rotated = { ...config, secret: ["next secret", config.secret] };
  assert.equal((await api.readSession(rotated, req(a), { now: NOW }))?.id, ida, "verified anew");

  // Cookies made before session ids are still read, with an id derived from the cookie.
  const plain = await oldCookie(api, config, "old@example.com");
  const bound = await oldCookie(api, config, ["u2", "stamp-1"]);
  const p = await api.readSession(config, req(plain), { now: NOW });
  assert.deepEqual(p, {
    subject: "old@example.com",
    id: p?.id,
    issuedAt: T0 / 1000,
    expiresAt: T0 / 1000 + 3600,
  });
  assert.match(p?.id ?? "", /^~[A-Za-z0-9_-]{22}$/);
  const g = await api.readSession(config, req(bound), { now: NOW, generation: "stamp-1" });
  assert.equal(g?.subject, "u2");
  assert.equal(g?.generation, "stamp-1");
  assert.match(g?.id ?? "", /^~[A-Za-z0-9_-]{22}$/);
  assert.notEqual(g?.id, p?.id);
  assert.equal((await api.readSession(rotated, req(bound), { now: NOW }))?.id, g?.id, "stable");

  // Payloads of the new shape that are not well formed are no session.
  for (
    const payload of [
      ["u1", null, ""],
      ["u1", null, 7],
      ["u1", null, "x".repeat(65)],
      ["u1", "", "id"],
      ["u1", 5, "id"],
      ["", null, "id"],
      ["u1", null, "id", "extra"],
    ]
  ) {
    const c = await oldCookie(api, config, payload);
    assert.equal(
      await api.readSession(config, req(c), { now: NOW }),
      null,
      JSON.stringify(payload),
    );
  }
  const ok = await oldCookie(api, config, ["u1", null, "an-id"]);
  assert.equal((await api.readSession(config, req(ok), { now: NOW }))?.id, "an-id");
});

test("revokeSession: a sign-out ends that cookie and its copies; the user's other sessions go on", async ({ api }) => {
  const subtle = crypto.subtle;
  const hadOwn = Object.hasOwn(subtle, "verify");
  const original = subtle.verify;
  let verifies = 0;
  subtle.verify = function (...args) {
    verifies++;
    return original.apply(this, args);
  };
  try {
    const config = fresh();
    const store = api.memoryRevocationStore({ now: () => NOW });
    const a = cookiePair(await api.createSessionCookie(config, "u1", { now: T0, generation: "g" }));
    const b = cookiePair(await api.createSessionCookie(config, "u1", { now: T0, generation: "g" }));
    const read = (cookie) =>
      api.readSession(config, req(cookie), { now: NOW, generation: "g", revoked: store });
    for (let i = 0; i < 3; i++) assert.equal((await read(a))?.subject, "u1");
    const verifiesBefore = verifies;

    const ended = await api.revokeSession(config, req(a), store, { now: NOW });
    assert.equal(ended?.subject, "u1");
    assert.equal(store.size, 1);
    assert.equal(await read(a), null, "the copy of the signed-out cookie");
    assert.equal(verifies, verifiesBefore, "refused although remembered as verified");
    assert.equal((await read(b))?.subject, "u1", "the same user's other session");
    // Without the store the cookie still verifies: the store is what ends it.
    assert.equal((await api.readSession(config, req(a), { now: NOW }))?.id, ended?.id);
    // Signing out again is harmless; no cookie, a tampered one or another site's adds nothing.
    assert.equal((await api.revokeSession(config, req(a), store, { now: NOW }))?.id, ended?.id);
    assert.equal(store.size, 1);
    assert.equal(await api.revokeSession(config, req(undefined), store, { now: NOW }), null);
    assert.equal(await api.revokeSession(config, req(`${a}x`), store, { now: NOW }), null);
    const other = cookiePair(await api.createSessionCookie(fresh(), "u1", { now: T0 }));
    assert.equal(await api.revokeSession(config, req(other), store, { now: NOW }), null);
    assert.equal(store.size, 1);
    // An expired cookie is not recorded (it is refused by its expiry already).
    assert.equal(
      await api.revokeSession(config, req(b), store, { now: T0 + 604_800_000 }),
      null,
    );

    // Cookies made before session ids are ended one by one too.
    const old1 = await oldCookie(api, config, ["u1", "g"]);
    const old2 = await oldCookie(api, { ...config }, ["u1", "g"]);
    const old3 = await (async () => {
      const token = await api.signToken(config.secret, {
        purpose: `session:${config.cookieName}`,
        payload: ["u1", "g"],
        ttlSeconds: 3600,
        now: T0 + 1000, // another second: another cookie
      });
      return `${config.cookieName}=${token}`;
    })();
    assert.equal(old1, old2, "the same cookie");
    assert.equal((await api.revokeSession(config, req(old1), store, { now: NOW }))?.subject, "u1");
    assert.equal(await read(old2), null);
    assert.equal((await read(old3))?.subject, "u1");
    assert.equal((await read(b))?.subject, "u1");
  } finally {
    if (hadOwn) subtle.verify = original;
    else delete subtle.verify;
  }
});

test("revocation stores: a failing lookup refuses the cookie; a failing record rejects", async ({ api }) => {
  const config = fresh();
  const c = cookiePair(await api.createSessionCookie(config, "u1", { now: T0 }));
  const id = (await api.readSession(config, req(c), { now: NOW }))?.id;
  const read = (isRevoked) =>
    api.readSession(config, req(c), { now: NOW, revoked: { revoke() {}, isRevoked } });
  const asked = [];
  assert.equal(
    (await read((i, session) => (asked.push(i, session.subject), false)))?.subject,
    "u1",
  );
  assert.deepEqual(asked, [id, "u1"], "the store is given the id and the session");
  assert.equal((await read(() => Promise.resolve(false)))?.subject, "u1");
  assert.equal(await read(() => true), null);
  for (const answer of [undefined, null, 0, "no", "false", {}]) {
    assert.equal(await read(() => answer), null, `isRevoked answering ${String(answer)}`);
  }
  assert.equal(
    await read(() => {
      throw new Error("store down");
    }),
    null,
  );
  assert.equal(await read(() => Promise.reject(new Error("store down"))), null);

  const down = {
    revoke: () => Promise.reject(new Error("store down")),
    isRevoked: () => false,
  };
  await assert.rejects(api.revokeSession(config, req(c), down, { now: NOW }), /store down/);
  for (const bad of [null, {}, { revoke() {} }, { isRevoked() {} }]) {
    await assert.rejects(api.revokeSession(config, req(c), bad, { now: NOW }), {
      name: "AuthError",
      code: "invalid_options",
    });
  }
});

test("memoryRevocationStore: keeps ids until their expiry, then drops them; refuses to forget a live one", async ({ api }) => {
  assert.equal(api.DEFAULT_MAX_REVOKED, 100_000);
  const clock = { now: T0 };
  const store = api.memoryRevocationStore({ maxEntries: 2, now: () => clock.now });
  const at = (seconds) => T0 / 1000 + seconds;
  store.revoke("a", at(10));
  await store.revoke("b", at(20));
  assert.equal(store.isRevoked("a"), true);
  assert.equal(store.isRevoked("c"), false);
  store.revoke("a", at(10)); // again: harmless
  assert.equal(store.size, 2);
  assert.throws(() => store.revoke("c", at(30)), { name: "AuthError", code: "store_full" });
  assert.equal(store.isRevoked("c"), false);
  assert.equal(store.isRevoked("a") && store.isRevoked("b"), true, "nothing live was dropped");
  clock.now = T0 + 10_000; // a's session has expired
  store.revoke("c", at(30));
  assert.equal(store.size, 2);
  assert.equal(store.isRevoked("a"), false);
  assert.equal(store.isRevoked("c"), true);
  clock.now = T0 + 20_000;
  assert.equal(store.isRevoked("b"), false, "dropped on look-up once expired");
  assert.equal(store.size, 1);
  store.revoke("d", at(5)); // already expired: nothing to keep
  assert.equal(store.isRevoked("d"), false);
  assert.equal(store.size, 1);

  for (const [id, exp] of [["", at(60)], ["x".repeat(257), at(60)], [7, at(60)], ["e", NaN]]) {
    assert.throws(() => store.revoke(id, exp), { name: "AuthError", code: "invalid_options" });
  }
  for (const maxEntries of [0, -1, 1.5, "10"]) {
    assert.throws(() => api.memoryRevocationStore({ maxEntries }), {
      code: "invalid_options",
    });
  }
  // The real clock by default.
  const live = api.memoryRevocationStore();
  live.revoke("z", Math.floor(Date.now() / 1000) + 60);
  assert.equal(live.isRevoked("z"), true);
});
