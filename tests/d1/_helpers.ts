/** Shared helpers of the d1 tests: a capturing e-mail sender, unique addresses, constants. */
import type { EmailMessage } from "../../d1.ts";

/** The TOKEN_SECRET of the tests. */
export const SECRET = "test token secret, long and random enough";
/** Low PBKDF2 iterations for speed (one case uses the default). */
export const ITER = 1000;
/** A password that passes the policy. */
export const PASSWORD = "correct horse battery staple";

let counter = 0;
/** A fresh address for each call. */
export function newEmail(tag = "user"): string {
  return `${tag}-${++counter}-${crypto.randomUUID().slice(0, 8)}@example.com`;
}

/** A sender that keeps every message. */
export function outbox(): {
  send: (m: EmailMessage) => Promise<void>;
  mails: EmailMessage[];
  to: (addr: string) => EmailMessage[];
} {
  const mails: EmailMessage[] = [];
  return {
    mails,
    send: (m) => {
      mails.push(m);
      return Promise.resolve();
    },
    to: (addr) => mails.filter((m) => m.to === addr),
  };
}

/** The 6-digit code in a message. */
export function codeIn(mail: EmailMessage | undefined): string {
  const m = mail?.text.match(/\b(\d{6})\b/);
  if (!m) throw new Error("no code in the message");
  return m[1];
}

/** The `token` query parameter of the first link in a message. */
export function tokenIn(mail: EmailMessage | undefined): string {
  const m = mail?.text.match(/https?:\/\/\S+/);
  if (!m) throw new Error("no link in the message");
  const token = new URL(m[0]).searchParams.get("token");
  if (!token) throw new Error("no token in the link");
  return token;
}

/** A sender that always fails. */
export const failingSender = (): Promise<void> => Promise.reject(new Error("smtp down"));

/** A database object whose every call fails like a dead connection. */
export const brokenDb = {
  prepare(): never {
    throw new Error("connection lost");
  },
  batch(): Promise<never> {
    return Promise.reject(new Error("connection lost"));
  },
};
