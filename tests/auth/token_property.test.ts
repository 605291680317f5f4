/**
 * Property tests of the token format (Deno only, with fast-check): any JSON payload round
 * trips; changing any single character of a token, or the purpose, or the secret, makes it
 * invalid; passwords of any Unicode text round trip.
 *
 * @module
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { hashPassword, signToken, verifyPassword, verifyToken } from "../../mod.ts";

const T0 = Date.UTC(2026, 0, 1);
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.";

Deno.test("property: any JSON payload round trips for its purpose", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.jsonValue(),
      fc.string({ minLength: 1 }),
      fc.string({ minLength: 1 }),
      async (payload, secret, purpose) => {
        const token = await signToken(secret, { purpose, payload, ttlSeconds: 60, now: T0 });
        const claims = await verifyToken(secret, token, { purpose, now: T0 });
        // JSON normalizes -0 to 0; compare through JSON.
        assert.deepEqual(claims?.payload, JSON.parse(JSON.stringify(payload)));
        assert.equal(await verifyToken(secret, token, { purpose: purpose + "x", now: T0 }), null);
        assert.equal(await verifyToken(secret + "x", token, { purpose, now: T0 }), null);
      },
    ),
    { numRuns: 200 },
  );
});

Deno.test("property: changing any one character invalidates a token", async () => {
  const token = await signToken("secret", {
    purpose: "p",
    payload: { id: 123, email: "a@example.com" },
    ttlSeconds: 60,
    now: T0,
  });
  await fc.assert(
    fc.asyncProperty(
      fc.nat({ max: token.length - 1 }),
      fc.constantFrom(...ALPHABET),
      async (index, char) => {
        fc.pre(token[index] !== char);
        const mutated = token.slice(0, index) + char + token.slice(index + 1);
        assert.equal(await verifyToken("secret", mutated, { purpose: "p", now: T0 }), null);
      },
    ),
    { numRuns: 300 },
  );
});

Deno.test("property: any non-empty password verifies, a different one does not", async () => {
  await fc.assert(
    fc.asyncProperty(fc.string({ minLength: 1, unit: "grapheme" }), async (password) => {
      const stored = await hashPassword(password, { iterations: 10 });
      assert.equal(await verifyPassword(password, stored), true);
      assert.equal(await verifyPassword(password + "!", stored), false);
    }),
    { numRuns: 50 },
  );
});
