/** The second-factor, passkey, session-record and event flows never throw, on any input. */
import assert from "node:assert/strict";
import fc from "fast-check";
import * as d1 from "../../../d1.ts";
import type { Case } from "../_backend.ts";
import { brokenDb, SECRET } from "../_helpers.ts";

const CODES = new Set<string>(d1.D1_ERROR_CODES);
const rp = { id: "example.com", name: "Example", origin: "https://example.com" };

const hostile = {
  get userId(): string {
    throw new Error("getter");
  },
};

const value = fc.oneof(
  fc.anything({ maxDepth: 2 }),
  fc.string({ maxLength: 300 }),
  fc.constantFrom(
    "123456",
    "abcde-fghjk",
    "",
    null,
    undefined,
    NaN,
    -1,
    1e308,
    "x".repeat(100_000),
    { id: "s", issuedAt: 1 },
    { id: "AAAA", response: { clientDataJSON: "e30" } },
    '{"id":"x","response":{}}',
    hostile,
    () => {
      throw new Error("sync throw");
    },
    () => Promise.reject(new Error("async throw")),
  ),
);

const paramsArb = fc.oneof(
  fc.anything({ maxDepth: 2 }),
  fc.constant(hostile),
  fc.record({
    userId: value,
    ticket: value,
    code: value,
    secret: fc.oneof(fc.constant(SECRET), value),
    issuer: value,
    session: value,
    password: value,
    passkeyId: value,
    sessionId: value,
    keepId: value,
    currentId: value,
    name: value,
    ceremony: value,
    response: value,
    rp: fc.oneof(fc.constant(rp), value),
    attestation: value,
    client: value,
    rememberDevice: value,
    rememberDays: value,
    deviceLabel: value,
    passkey: value,
    onEvent: value,
    before: value,
    limit: value,
    now: value,
  }, { requiredKeys: [] }),
);

type Flow = (db: d1.D1Database, p: never) => Promise<{ ok: boolean; error?: string }>;

const flows: [string, Flow][] = [
  ["verifySecondFactor", d1.verifySecondFactor as Flow],
  ["startTotpEnrolment", d1.startTotpEnrolment as Flow],
  ["confirmTotpEnrolment", d1.confirmTotpEnrolment as Flow],
  ["regenerateBackupCodes", d1.regenerateBackupCodes as Flow],
  ["removeTotp", d1.removeTotp as Flow],
  ["getSecondFactors", d1.getSecondFactors as Flow],
  ["resetSecondFactor", d1.resetSecondFactor as Flow],
  ["passkeyRegistrationOptions", d1.passkeyRegistrationOptions as Flow],
  ["verifyPasskeyRegistration", d1.verifyPasskeyRegistration as Flow],
  ["passkeySignInOptions", d1.passkeySignInOptions as Flow],
  ["verifyPasskeySignIn", d1.verifyPasskeySignIn as Flow],
  ["listPasskeys", d1.listPasskeys as unknown as Flow],
  ["renamePasskey", d1.renamePasskey as Flow],
  ["removePasskey", d1.removePasskey as Flow],
  ["removePassword", d1.removePassword as Flow],
  ["listUserSessions", d1.listUserSessions as Flow],
  ["renameSession", d1.renameSession as Flow],
  ["endSession", d1.endSession as Flow],
  ["endOtherSessions", d1.endOtherSessions as Flow],
  ["stepUp", d1.stepUp as Flow],
  ["listAuthEvents", d1.listAuthEvents as Flow],
];

export const fuzzFactorCases: Case[] = [
  {
    name: "fuzz: the second-factor, passkey and session flows never throw; answers are documented",
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
          { numRuns: 30 },
        );
      }
    },
  },
];
