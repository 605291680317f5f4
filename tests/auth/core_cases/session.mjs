/**
 * Cases for session cookies: attributes, reading, rejection, rotation, clearing.
 *
 * @module
 */
import assert from "node:assert/strict";
import { cookiePair, flip, T0, test } from "./_harness.mjs";

const SESSION = { secret: "session-secret-for-tests", cookieName: "__Host-session" };

function requestWithCookie(cookie) {
  return new Request("https://site.example/", cookie === undefined ? {} : { headers: { cookie } });
}

test("session: cookie attributes, default and configured Max-Age, __Host- name", async ({ api }) => {
  const c = await api.createSessionCookie(SESSION, "owner@example.com", { now: T0 });
  const [pair, ...attrs] = c.split("; ");
  assert.match(pair, /^__Host-session=[A-Za-z0-9_.-]+$/);
  assert.deepEqual(attrs, ["HttpOnly", "Secure", "SameSite=Lax", "Path=/", "Max-Age=604800"]);
  assert.equal(api.DEFAULT_SESSION_MAX_AGE, 604_800);
  assert.match(
    await api.createSessionCookie({ ...SESSION, maxAge: 3600 }, "u1"),
    /; Max-Age=3600$/,
  );
  assert.match(await api.createSessionCookie(SESSION, "u1", { maxAge: 60 }), /; Max-Age=60$/);
  await assert.rejects(api.createSessionCookie({ ...SESSION, cookieName: "bad name" }, "u"), {
    code: "invalid_options",
  });
  await assert.rejects(api.createSessionCookie(SESSION, ""), { code: "invalid_options" });
  await assert.rejects(api.createSessionCookie({ ...SESSION, secret: "" }, "u"), {
    code: "invalid_secret",
  });
});

test("session: readSession returns the identity among other cookies", async ({ api }) => {
  const c = await api.createSessionCookie(SESSION, "owner@example.com", { now: T0 });
  const req = requestWithCookie(`theme=dark; ${cookiePair(c)}; other=1`);
  const read = await api.readSession(SESSION, req, { now: T0 + 5000 });
  assert.match(read?.id ?? "", /^[A-Za-z0-9_-]{22}$/);
  assert.deepEqual(read, {
    subject: "owner@example.com",
    id: read.id,
    issuedAt: T0 / 1000,
    expiresAt: T0 / 1000 + 604_800,
  });
  // A second, stale cookie of the same name does not hide the valid one.
  const req2 = requestWithCookie(`__Host-session=stale; ${cookiePair(c)}`);
  assert.equal((await api.readSession(SESSION, req2, { now: T0 }))?.subject, "owner@example.com");
  // Works with the real clock for a fresh cookie, and with plain Headers holders.
  const live = await api.createSessionCookie(SESSION, "u42");
  assert.equal(
    (await api.readSession(SESSION, { headers: new Headers({ cookie: cookiePair(live) }) }))
      ?.subject,
    "u42",
  );
});

test("session: missing, tampered, truncated, expired, wrong-secret, cross-purpose -> null", async ({ api }) => {
  const now = T0 + 1000;
  const c = cookiePair(
    await api.createSessionCookie(SESSION, "owner@example.com", { now: T0, maxAge: 3600 }),
  );
  const value = c.slice(c.indexOf("=") + 1);
  const read = (cookie, opts = { now }) =>
    api.readSession(SESSION, requestWithCookie(cookie), opts);
  assert.equal(await read(undefined), null);
  assert.equal(await read(""), null);
  assert.equal(await read("other=1"), null);
  assert.equal(await read(`__Host-session=${flip(value, 4)}`), null);
  assert.equal(await read(`__Host-session=${flip(value, value.length - 3)}`), null);
  assert.equal(await read(`__Host-session=${value.slice(0, -4)}`), null);
  assert.equal(await read(`__Host-session=${value.slice(0, value.indexOf("."))}`), null);
  assert.equal(await read(c, { now: T0 + 3600_000 }), null, "expired");
  assert.ok(await read(c, { now: T0 + 3599_000 }));
  assert.equal(
    await api.readSession({ ...SESSION, secret: "another" }, requestWithCookie(c), { now }),
    null,
  );
  // Same secret, other cookie name: bound to the name.
  assert.equal(
    await api.readSession({ ...SESSION, cookieName: "sid" }, requestWithCookie(`sid=${value}`), {
      now,
    }),
    null,
  );
  // A generic token with the same secret for another purpose is not a session.
  const reset = await api.signToken(SESSION.secret, {
    purpose: "reset",
    payload: "owner@example.com",
    ttlSeconds: 60,
    now: T0,
  });
  assert.equal(await read(`__Host-session=${reset}`), null);
  const relay = await api.signRelay(SESSION.secret, {
    email: "a@b.c",
    provider: "github",
    nonce: "n",
  }, { now: T0 });
  assert.equal(await read(`__Host-session=${relay}`), null);
});

test("session: rotated secrets keep old sessions valid; clearSessionCookie expires it", async ({ api }) => {
  const c = cookiePair(await api.createSessionCookie(SESSION, "u1", { now: T0 }));
  const rotated = { ...SESSION, secret: ["brand-new-secret", SESSION.secret] };
  assert.equal((await api.readSession(rotated, requestWithCookie(c), { now: T0 }))?.subject, "u1");
  assert.equal(
    api.clearSessionCookie(SESSION),
    "__Host-session=; HttpOnly; Secure; SameSite=Lax; Path=/; Max-Age=0",
  );
});

test("session: a repeated cookie skips the HMAC yet still expires and still needs its secret", async ({ api }) => {
  const subtle = crypto.subtle;
  const hadOwn = Object.hasOwn(subtle, "verify");
  const original = subtle.verify;
  let verifies = 0;
  subtle.verify = function (...args) {
    verifies++;
    return original.apply(this, args);
  };
  try {
    const config = { secret: [`repeat-${Math.random()}`, "older"], cookieName: "sid" };
    const c = cookiePair(await api.createSessionCookie(config, "u7", { now: T0, maxAge: 60 }));
    const read = (cfg, now) => api.readSession(cfg, requestWithCookie(c), { now });
    assert.equal((await read(config, T0 + 1000))?.subject, "u7");
    assert.equal(verifies, 1);
    for (let i = 0; i < 5; i++) assert.equal((await read(config, T0 + 2000))?.subject, "u7");
    assert.equal(verifies, 1, "repeats are answered without another HMAC");
    // The answer is a copy: changing it changes nothing for the next read.
    (await read(config, T0 + 2000)).subject = "admin";
    assert.equal((await read(config, T0 + 2000))?.subject, "u7");
    // Expiry is checked on every read, cached or not.
    assert.equal(await read(config, T0 + 60_000), null);
    // The signing secret dropped from the list: the cookie no longer verifies.
    assert.equal(await read({ ...config, secret: ["older"] }, T0 + 2000), null);
    // A tampered cookie is never remembered.
    const tampered = c.replace(/.$/, (ch) => (ch === "A" ? "B" : "A"));
    for (let i = 0; i < 2; i++) {
      assert.equal(
        await api.readSession(config, requestWithCookie(tampered), { now: T0 + 2000 }),
        null,
      );
    }
  } finally {
    if (hadOwn) subtle.verify = original;
    else delete subtle.verify;
  }
});

test("session: a generation binds the cookie; a changed one refuses it, remembered cookie or not", async ({ api }) => {
  const subtle = crypto.subtle;
  const hadOwn = Object.hasOwn(subtle, "verify");
  const original = subtle.verify;
  let verifies = 0;
  subtle.verify = function (...args) {
    verifies++;
    return original.apply(this, args);
  };
  try {
    const config = { secret: `generation-${Math.random()}`, cookieName: "sid" };
    const c = cookiePair(
      await api.createSessionCookie(config, "u1", { now: T0, generation: "g1" }),
    );
    const read = (generation) =>
      api.readSession(config, requestWithCookie(c), { now: T0 + 1000, generation });
    const first = await read("g1");
    assert.deepEqual(first, {
      subject: "u1",
      id: first?.id,
      issuedAt: T0 / 1000,
      expiresAt: T0 / 1000 + 604_800,
      generation: "g1",
    });
    assert.equal(verifies, 1);
    // The user's generation changed (password change, reset, sign out everywhere).
    assert.equal(await read("g2"), null);
    assert.equal(verifies, 1, "refused from the remembered cookie: no second HMAC needed");
    // A lookup by subject, sync or async; a missing user, a throw or a rejection is null.
    const seen = [];
    assert.equal((await read((s, session) => (seen.push(s, session), "g1")))?.subject, "u1");
    assert.deepEqual(seen, ["u1", first], "the lookup is given the subject and the session");
    assert.equal((await read(() => Promise.resolve("g1")))?.subject, "u1");
    assert.equal(await read(() => Promise.resolve("g2")), null);
    for (const lookup of [() => null, () => undefined, () => "", () => 7]) {
      assert.equal(await read(lookup), null);
    }
    assert.equal(
      await read(() => {
        throw new Error("store down");
      }),
      null,
    );
    assert.equal(await read(() => Promise.reject(new Error("store down"))), null);
    // Without the option the generation is only reported.
    assert.equal(
      (await api.readSession(config, requestWithCookie(c), { now: T0 + 1000 }))?.generation,
      "g1",
    );
    // A cookie made without a generation is refused wherever one is required.
    const plain = cookiePair(await api.createSessionCookie(config, "u1", { now: T0 }));
    assert.equal(
      await api.readSession(config, requestWithCookie(plain), { now: T0 + 1000, generation: "g1" }),
      null,
    );
    for (const generation of ["", "x".repeat(257), 42]) {
      await assert.rejects(api.createSessionCookie(config, "u1", { generation }), {
        code: "invalid_options",
      });
    }
  } finally {
    if (hadOwn) subtle.verify = original;
    else delete subtle.verify;
  }
});

test("session: a missing secret is AuthError invalid_secret, never a TypeError", async ({ api }) => {
  for (const secret of [undefined, null, 42, "", []]) {
    await assert.rejects(api.createSessionCookie({ secret, cookieName: "sid" }, "u1"), {
      name: "AuthError",
      code: "invalid_secret",
    });
    await assert.rejects(api.signToken(secret, { purpose: "p", payload: 1, ttlSeconds: 60 }), {
      code: "invalid_secret",
    });
    assert.equal(
      await api.readSession({ secret, cookieName: "sid" }, requestWithCookie("sid=a.b")),
      null,
    );
    assert.equal(await api.verifyToken(secret, "a.b", { purpose: "p" }), null);
  }
});
