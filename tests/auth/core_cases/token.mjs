/**
 * Cases for purpose-bound signed tokens: round trip, tampering, expiry, rotation, purposes, key cache.
 *
 * @module
 */
import assert from "node:assert/strict";
import { flip, T0, test } from "./_harness.mjs";

test("token: round trip with claims in seconds and a controlled clock in ms", async ({ api }) => {
  const token = await api.signToken("k1", {
    purpose: "reset",
    payload: { userId: 7, email: "a@example.com" },
    ttlSeconds: 3600,
    now: T0,
  });
  assert.match(token, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
  const claims = await api.verifyToken("k1", token, { purpose: "reset", now: T0 + 1000 });
  assert.deepEqual(claims, {
    payload: { userId: 7, email: "a@example.com" },
    iat: T0 / 1000,
    exp: T0 / 1000 + 3600,
  });
  // Without `now` the real clock is used: a token from 2026-01-01 valid for an hour is expired.
  assert.equal(await api.verifyToken("k1", token, { purpose: "reset" }), null);
});

test("token: tampered, truncated and malformed tokens are rejected", async ({ api }) => {
  const opts = { purpose: "reset", now: T0 };
  const token = await api.signToken("k1", {
    purpose: "reset",
    payload: { admin: false },
    ttlSeconds: 60,
    now: T0,
  });
  const [body, sig] = token.split(".");
  const forged = JSON.stringify([T0 / 1000, T0 / 1000 + 60, { admin: true }]);
  const forgedBody = btoa(forged).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
  const bad = [
    "",
    ".",
    body,
    `${body}.`,
    `.${sig}`,
    `${flip(body, 3)}.${sig}`,
    `${body}.${flip(sig, 5)}`,
    `${forgedBody}.${sig}`,
    token.slice(0, -1),
    token.slice(0, -2),
    token.slice(1),
    `${token}.x`,
    `${body}.${sig}=`,
    `${body} .${sig}`,
    "x".repeat(20_000),
  ];
  for (const t of bad) assert.equal(await api.verifyToken("k1", t, opts), null, t);
  for (const t of [null, undefined, 1, {}]) {
    assert.equal(await api.verifyToken("k1", t, opts), null);
  }
  assert.ok(await api.verifyToken("k1", token, opts));
});

test("token: expired at exp, valid just before", async ({ api }) => {
  const token = await api.signToken("k1", { purpose: "otp", payload: 1, ttlSeconds: 600, now: T0 });
  assert.ok(await api.verifyToken("k1", token, { purpose: "otp", now: T0 + 599_999 }));
  assert.equal(await api.verifyToken("k1", token, { purpose: "otp", now: T0 + 600_000 }), null);
  assert.equal(await api.verifyToken("k1", token, { purpose: "otp", now: T0 + 86_400_000 }), null);
});

test("token: wrong secret rejected; rotated secrets sign with the first, verify with any", async ({ api }) => {
  const opts = { purpose: "p", now: T0 };
  const old = await api.signToken("old-secret", {
    purpose: "p",
    payload: "x",
    ttlSeconds: 60,
    now: T0,
  });
  assert.equal(await api.verifyToken("other-secret", old, opts), null);
  assert.equal(await api.verifyToken([], old, opts), null);
  assert.ok(await api.verifyToken(["new-secret", "old-secret"], old, opts));
  const fresh = await api.signToken(["new-secret", "old-secret"], {
    purpose: "p",
    payload: "x",
    ttlSeconds: 60,
    now: T0,
  });
  assert.ok(await api.verifyToken("new-secret", fresh, opts));
  assert.equal(
    await api.verifyToken("old-secret", fresh, opts),
    null,
    "signed with the first only",
  );
});

test("token: a token for one purpose never verifies for another", async ({ api }) => {
  const purposes = ["session", "oauth-state", "relay", "reset", "email-change", "session:x"];
  for (const p of purposes) {
    const token = await api.signToken("k", {
      purpose: p,
      payload: { id: 1 },
      ttlSeconds: 60,
      now: T0,
    });
    for (const q of purposes) {
      const claims = await api.verifyToken("k", token, { purpose: q, now: T0 });
      assert.equal(claims !== null, p === q, `${p} -> ${q}`);
    }
  }
});

test("token: the imported key is cached per secret", async ({ api }) => {
  const subtle = crypto.subtle;
  const hadOwn = Object.hasOwn(subtle, "importKey");
  const original = subtle.importKey;
  let imports = 0;
  subtle.importKey = function (...args) {
    imports++;
    return original.apply(this, args);
  };
  try {
    const secret = `cache-test-${Math.random()}`;
    for (let i = 0; i < 5; i++) {
      const t = await api.signToken(secret, { purpose: "p", payload: i, ttlSeconds: 60 });
      assert.equal((await api.verifyToken(secret, t, { purpose: "p" }))?.payload, i);
    }
    assert.equal(imports, 1);
    await api.signToken(`${secret}-other`, { purpose: "p", payload: 0, ttlSeconds: 60 });
    assert.equal(imports, 2);
  } finally {
    if (hadOwn) subtle.importKey = original;
    else delete subtle.importKey;
  }
});

test("token: bad signing arguments throw typed errors", async ({ api }) => {
  const base = { purpose: "p", payload: 1, ttlSeconds: 60 };
  await assert.rejects(api.signToken("", base), { code: "invalid_secret" });
  await assert.rejects(api.signToken([], base), { code: "invalid_secret" });
  await assert.rejects(api.signToken("k", { ...base, purpose: "" }), { code: "invalid_options" });
  await assert.rejects(api.signToken("k", { ...base, ttlSeconds: 0 }), { code: "invalid_options" });
  await assert.rejects(api.signToken("k", { ...base, ttlSeconds: 1.5 }), {
    code: "invalid_options",
  });
});
