/**
 * The flows that e-mail only for one kind of address answer before the mail sender finishes,
 * for a known and an unknown address alike, whatever the sender's latency: before, they
 * awaited the sender, so with a 40 ms mail API a known address answered in ~44 ms and an
 * unknown one in ~3 ms. Asserted by order, not by time: the sender holds every mail until the
 * test releases it, and the flow must have answered first; the mail is then still sent, and a
 * failing sender is reported to `onSendError` (never an unhandled rejection).
 */
import assert from "node:assert/strict";
import {
  type D1Database,
  type EmailMessage,
  requestEmailChange,
  requestPasswordReset,
  resendOtp,
  type SendFailure,
  signup,
} from "../../../d1.ts";
import type { Case } from "../_backend.ts";
import { ITER, newEmail, PASSWORD, SECRET } from "../_helpers.ts";
import { pendingUser, verifiedUser } from "./_user.ts";

const APP = "https://example.com";
const MINUTE = 61_000;
/** Only when a flow waits for the sender (the bug): then the gate opens after this. */
const WATCHDOG_MS = 3000;

/** A sender that holds each mail until `release()`, then takes `latency` ms to send it. */
function heldSender(latency: number) {
  let open!: () => void;
  const gate = new Promise<void>((r) => open = r);
  const handed: EmailMessage[] = [];
  const sent: EmailMessage[] = [];
  let released = false;
  const deliveries: Promise<void>[] = [];
  const send = (m: EmailMessage) => {
    handed.push(m);
    const d = gate.then(() => new Promise<void>((r) => setTimeout(r, latency))).then(() => {
      sent.push(m);
    });
    deliveries.push(d);
    return d;
  };
  return {
    send,
    handed,
    sent,
    get released() {
      return released;
    },
    release() {
      released = true;
      open();
    },
    /** Every mail handed over so far, sent. */
    done: () => Promise.all(deliveries),
  };
}

/** Runs `flow`; resolves to whether it answered while the sender still held the mail. */
async function answersFirst(
  sender: ReturnType<typeof heldSender>,
  flow: () => Promise<unknown>,
): Promise<boolean> {
  const watchdog = setTimeout(() => sender.release(), WATCHDOG_MS);
  try {
    await flow();
    return !sender.released;
  } finally {
    clearTimeout(watchdog);
  }
}

interface Flow {
  name: string;
  /** Known and unknown address of the flow, and how many mails each hands to the sender. */
  cases(db: D1Database): Promise<{ label: string; mails: number; run: Run }[]>;
}
type Run = (
  send: (m: EmailMessage) => Promise<void>,
  extra: Record<string, unknown>,
) => Promise<unknown>;

let clock = Date.now();
/** A minute later on each call: the one-mail-a-minute throttle never holds a mail back. */
const later = () => (clock += MINUTE);

const FLOWS: Flow[] = [
  {
    name: "requestPasswordReset",
    async cases(db) {
      const known = await verifiedUser(db);
      const reset = (email: string): Run => (sendEmail, extra) =>
        requestPasswordReset(db, {
          email,
          secret: SECRET,
          sendEmail,
          appUrl: APP,
          now: later(),
          ...extra,
        });
      return [
        { label: "known", mails: 1, run: reset(known.email) },
        { label: "unknown", mails: 0, run: reset(newEmail("nobody")) },
      ];
    },
  },
  {
    name: "signup",
    async cases(db) {
      const known = await verifiedUser(db);
      const up = (email: () => string): Run => (sendEmail, extra) =>
        signup(db, {
          email: email(),
          password: PASSWORD,
          secret: SECRET,
          sendEmail,
          iterations: ITER,
          now: later(),
          ...extra,
        });
      return [
        { label: "taken (notice)", mails: 1, run: up(() => known.email) },
        { label: "new (code)", mails: 1, run: up(() => newEmail("new")) },
      ];
    },
  },
  {
    name: "resendOtp",
    async cases(db) {
      const pending = await pendingUser(db);
      const resend = (email: string, attempt: string): Run => (sendEmail, extra) =>
        resendOtp(db, { email, attempt, secret: SECRET, sendEmail, now: later(), ...extra });
      return [
        { label: "pending signup", mails: 1, run: resend(pending.email, pending.attempt) },
        { label: "unknown", mails: 0, run: resend(newEmail("nobody"), pending.attempt) },
      ];
    },
  },
  {
    name: "requestEmailChange",
    async cases(db) {
      const user = await verifiedUser(db);
      const holder = await verifiedUser(db);
      const change = (newEmail: () => string): Run => (sendEmail, extra) =>
        requestEmailChange(db, {
          userId: user.id,
          newEmail: newEmail(),
          password: PASSWORD,
          secret: SECRET,
          sendEmail,
          appUrl: APP,
          iterations: ITER,
          now: later(),
          ...extra,
        });
      return [
        { label: "taken", mails: 0, run: change(() => holder.email) },
        { label: "free", mails: 1, run: change(() => newEmail("free")) },
      ];
    },
  },
];

export const sendAfterCases: Case[] = [
  {
    name:
      "mail flows answer before a 40 ms or 400 ms sender finishes, for known and unknown addresses",
    async fn({ db }) {
      for (const flow of FLOWS) {
        for (const { label, mails, run } of await flow.cases(db)) {
          for (const latency of [40, 400]) {
            for (const handOff of [false, true]) {
              const what = `${flow.name}, ${label}, ${latency} ms, ${
                handOff ? "waitUntil" : "no waitUntil"
              }`;
              const sender = heldSender(latency);
              const kept: Promise<unknown>[] = [];
              const failures: SendFailure[] = [];
              const extra: Record<string, unknown> = {
                onSendError: (f: SendFailure) => void failures.push(f),
              };
              if (handOff) extra.waitUntil = (p: Promise<unknown>) => void kept.push(p);
              assert.ok(await answersFirst(sender, () => run(sender.send, extra)), what);
              assert.equal(sender.handed.length, mails, what);
              assert.equal(kept.length, handOff ? mails : 0, what);
              sender.release();
              await sender.done();
              await Promise.all(kept);
              assert.equal(sender.sent.length, mails, what);
              assert.deepEqual(failures, [], what);
            }
          }
        }
      }
    },
  },
  {
    name: "a sender that fails after the answer is reported to onSendError and lifts the throttle",
    async fn({ db }) {
      for (const flow of FLOWS) {
        const [first, second] = await flow.cases(db);
        for (const { label, mails, run } of [first, second]) {
          if (mails === 0) continue;
          const failures: SendFailure[] = [];
          const kept: Promise<unknown>[] = [];
          let calls = 0;
          const failing = () => {
            calls++;
            return Promise.reject(new Error("mail API down"));
          };
          const extra = {
            onSendError: (f: SendFailure) => void failures.push(f),
            waitUntil: (p: Promise<unknown>) => void kept.push(p),
          };
          const at = later();
          await run(failing, { ...extra, now: at });
          await Promise.all(kept);
          const what = `${flow.name}, ${label}`;
          assert.equal(calls, 1, what);
          assert.equal(failures.length, 1, what);
          assert.equal(failures[0].flow, flow.name, what);
          assert.equal(failures[0].error, "send_failed", what);
          assert.equal((failures[0].cause as Error).message, "mail API down", what);
          // At the same moment again: the failed mail did not hold the one-a-minute throttle.
          const sent: EmailMessage[] = [];
          await run((m) => Promise.resolve(void sent.push(m)), { ...extra, now: at });
          await Promise.all(kept);
          assert.equal(sent.length, 1, what);
        }
      }
    },
  },
];
