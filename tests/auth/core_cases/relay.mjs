/**
 * Cases for relay tokens: shape, 2-minute lifetime, rejection.
 *
 * @module
 */
import assert from "node:assert/strict";
import { bodyOf, flip, T0, test } from "./_harness.mjs";

const RELAY_SECRET = "per-site-relay-secret";

test("relay: round trip, optional providerUserId leaves the shape unchanged", async ({ api }) => {
  const claims = { email: "ann@example.com", provider: "github", nonce: "n-123" };
  const t1 = await api.signRelay(RELAY_SECRET, claims, { now: T0 });
  assert.deepEqual(await api.verifyRelay(RELAY_SECRET, t1, { now: T0 }), claims);
  assert.deepEqual(Object.keys(bodyOf(t1)[2]), ["email", "provider", "nonce"]);
  assert.deepEqual(
    Object.keys(
      bodyOf(
        await api.signRelay(RELAY_SECRET, { ...claims, providerUserId: undefined }, { now: T0 }),
      )[2],
    ),
    [
      "email",
      "provider",
      "nonce",
    ],
  );
  const t2 = await api.signRelay(RELAY_SECRET, { ...claims, providerUserId: "583231" }, {
    now: T0,
  });
  assert.deepEqual(await api.verifyRelay(RELAY_SECRET, t2, { now: T0 }), {
    ...claims,
    providerUserId: "583231",
  });
  await assert.rejects(api.signRelay(RELAY_SECRET, { email: "a@b.c", provider: "github" }), {
    code: "invalid_claims",
  });
});

test("relay: tokens expire after 2 minutes (controlled clock)", async ({ api }) => {
  const token = await api.signRelay(RELAY_SECRET, {
    email: "a@b.c",
    provider: "google",
    nonce: "n",
  }, { now: T0 });
  assert.equal(api.RELAY_TTL_SECONDS, 120);
  assert.ok(await api.verifyRelay(RELAY_SECRET, token, { now: T0 + 119_999 }));
  assert.equal(await api.verifyRelay(RELAY_SECRET, token, { now: T0 + 120_000 }), null);
  const claims = await api.verifyToken(RELAY_SECRET, token, { purpose: "relay", now: T0 });
  assert.equal(claims.exp - claims.iat, 120);
});

test("relay: wrong secret, tampering, other purposes -> null", async ({ api }) => {
  const claims = { email: "a@b.c", provider: "google", nonce: "n" };
  const token = await api.signRelay(RELAY_SECRET, claims, { now: T0 });
  const opts = { now: T0 };
  assert.equal(await api.verifyRelay("other-site-secret", token, opts), null);
  assert.equal(await api.verifyRelay(RELAY_SECRET, flip(token, 2), opts), null);
  assert.equal(await api.verifyRelay(RELAY_SECRET, token.slice(0, -3), opts), null);
  assert.equal(await api.verifyRelay(RELAY_SECRET, "garbage", opts), null);
  const reset = await api.signToken(RELAY_SECRET, {
    purpose: "reset",
    payload: claims,
    ttlSeconds: 60,
    now: T0,
  });
  assert.equal(await api.verifyRelay(RELAY_SECRET, reset, opts), null);
  const wrongShape = await api.signToken(RELAY_SECRET, {
    purpose: "relay",
    payload: { email: "a@b.c" },
    ttlSeconds: 60,
    now: T0,
  });
  assert.equal(await api.verifyRelay(RELAY_SECRET, wrongShape, opts), null);
  assert.equal(await api.verifyToken(RELAY_SECRET, token, { purpose: "session", now: T0 }), null);
  assert.ok(await api.verifyRelay(["new", RELAY_SECRET], token, opts), "rotation");
});
