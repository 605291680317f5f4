/**
 * Development only: the owner's console account, so `deno task start` gives a working console
 * sign-in with nothing set. It is made once through the toolkit's own signup and verification
 * (the code is read from the message instead of an inbox), with the owner site's documented
 * development login.
 *
 * @module
 */
import {
  type D1Database,
  type EmailMessage,
  getUserByEmail,
  setAdmin,
  signup,
  verifyOtp,
} from "../../d1.ts";
import { DEV_OWNER_EMAIL, DEV_OWNER_PASSWORD } from "../owner.ts";

/** The development owner's login, as the start-up banner prints it. */
export const DEV_CONSOLE_LOGIN = { email: DEV_OWNER_EMAIL, password: DEV_OWNER_PASSWORD };

/**
 * Makes the development owner's account (verified, administrator) unless it exists.
 * Resolves to true when it made it. Throws when a flow refuses (which would be a bug).
 */
export async function ensureDevOwner(
  db: D1Database,
  o: { tokenSecret: string; iterations?: number },
): Promise<boolean> {
  if ((await getUserByEmail(db, DEV_OWNER_EMAIL)).ok) return false;
  const sent: EmailMessage[] = [];
  const sending: Promise<unknown>[] = [];
  const s = await signup(db, {
    email: DEV_OWNER_EMAIL,
    password: DEV_OWNER_PASSWORD,
    secret: o.tokenSecret,
    sendEmail: (m) => void sent.push(m),
    waitUntil: (p) => void sending.push(p),
    iterations: o.iterations,
  });
  if (!s.ok) throw new Error(`development owner: signup refused (${s.error})`);
  await Promise.all(sending);
  const code = sent[0]?.text.match(/\b(\d{6})\b/)?.[1] ?? "";
  const v = await verifyOtp(db, {
    email: DEV_OWNER_EMAIL,
    code,
    attempt: s.attempt,
    secret: o.tokenSecret,
  });
  if (!v.ok) throw new Error(`development owner: verification refused (${v.error})`);
  const a = await setAdmin(db, { userId: v.userId, admin: true });
  if (!a.ok) throw new Error(`development owner: ${a.error}`);
  return true;
}
