import assert from "node:assert/strict";
import fc from "fast-check";
import * as d1 from "../../../d1.ts";
import type { Case } from "../_backend.ts";
import { brokenDb, ITER, PASSWORD, SECRET } from "../_helpers.ts";

const CODES = new Set<string>(d1.D1_ERROR_CODES);

const hostile = {
  get email(): string {
    throw new Error("getter");
  },
};

/** A value for any parameter: valid-looking, wrong type, huge, or hostile. */
const value = fc.oneof(
  fc.anything({ maxDepth: 2 }),
  fc.string({ maxLength: 300 }),
  fc.constantFrom(
    "ada@example.com",
    PASSWORD,
    "123456",
    "",
    null,
    undefined,
    NaN,
    -1,
    1e308,
    "x".repeat(200_000),
    "a@b.co",
    "\u0000\r\n",
    "<script>alert(1)</script>@x.com",
    ["a"],
    { issuedAt: 1 },
    hostile,
    () => {
      throw new Error("sync throw");
    },
    () => Promise.reject(new Error("async throw")),
    () => null,
    () => ({ subject: 1 }),
  ),
);

const paramsArb = fc.oneof(
  fc.anything({ maxDepth: 2 }),
  fc.constant(hostile),
  fc.record({
    email: value,
    password: value,
    newPassword: value,
    currentPassword: value,
    code: value,
    token: value,
    userId: value,
    name: value,
    newEmail: value,
    provider: value,
    providerUserId: value,
    emailVerified: value,
    secret: fc.oneof(fc.constant(SECRET), value),
    sendEmail: fc.oneof(fc.constant(() => {}), value),
    appUrl: fc.oneof(fc.constant("https://example.com"), value),
    session: fc.oneof(fc.constant({ secret: SECRET, cookieName: "sid" }), value),
    request: fc.oneof(fc.constant(new Request("https://x.example/")), value),
    attempt: value,
    client: fc.oneof(fc.constantFrom("203.0.113.9", "2001:db8::1", "[::ffff:1.2.3.4]"), value),
    maxAge: value,
    now: value,
    ttlHours: value,
    renderOtp: value,
    renderReset: value,
    iterations: fc.constantFrom(undefined, ITER, 0, -5, 1.5, "1000", 1e12, null),
  }, { requiredKeys: [] }),
);

type Flow = (db: d1.D1Database, p: never) => Promise<{ ok: boolean; error?: string }>;

const flows: [string, Flow][] = [
  ["signup", d1.signup as Flow],
  ["verifyOtp", d1.verifyOtp as Flow],
  ["resendOtp", d1.resendOtp as Flow],
  ["login", d1.login as Flow],
  ["requestPasswordReset", d1.requestPasswordReset as Flow],
  ["resetPassword", d1.resetPassword as Flow],
  ["changePassword", d1.changePassword as Flow],
  ["changeName", d1.changeName as Flow],
  ["removeUser", d1.removeUser as Flow],
  ["requestEmailChange", d1.requestEmailChange as Flow],
  ["confirmEmailChange", d1.confirmEmailChange as Flow],
  ["findOrCreateOAuthUser", d1.findOrCreateOAuthUser as Flow],
  ["getUser", d1.getUser as unknown as Flow],
  ["createUserSession", d1.createUserSession as Flow],
  ["signOutEverywhere", d1.signOutEverywhere as Flow],
  ["signOut", d1.signOut as Flow],
];

export const fuzzCases: Case[] = [
  {
    name: "fuzz: no flow throws, every answer is ok or a documented code",
    async fn({ db }) {
      const dbArb = fc.oneof(
        { weight: 4, arbitrary: fc.constant(db) },
        fc.constantFrom(brokenDb, null, undefined, {}, 42, { prepare: () => ({}) }),
      );
      for (const [name, flow] of flows) {
        await fc.assert(
          fc.asyncProperty(dbArb, paramsArb, async (target, p) => {
            let r: { ok: boolean; error?: string };
            try {
              r = await flow(target as d1.D1Database, p as never);
            } catch (e) {
              assert.fail(`${name} threw: ${e}`);
            }
            assert.equal(typeof r, "object", name);
            assert.ok(
              r.ok === true || (r.ok === false && CODES.has(String(r.error))),
              `${name}: ${JSON.stringify(r)}`,
            );
          }),
          { numRuns: 40 },
        );
      }
      await fc.assert(
        fc.asyncProperty(dbArb, paramsArb, async (target, p) => {
          const r = await d1.readUserSession(target as d1.D1Database, p as never);
          assert.equal(r, null);
        }),
        { numRuns: 40 },
      );
    },
  },
];
