import { type D1Database, signup, verifyOtp } from "../../../d1.ts";
import { codeIn, ITER, newEmail, outbox, PASSWORD, SECRET } from "../_helpers.ts";

/**
 * Signs up a new user (not yet verified); resolves to its address, its outbox, the code and
 * the signup's attempt.
 */
export async function pendingUser(
  db: D1Database,
  password = PASSWORD,
): Promise<{ email: string; box: ReturnType<typeof outbox>; code: string; attempt: string }> {
  const box = outbox();
  const email = newEmail();
  const s = await signup(db, {
    email,
    password,
    secret: SECRET,
    sendEmail: box.send,
    iterations: ITER,
  });
  if (!s.ok) throw new Error(`signup failed: ${s.error}`);
  return { email, box, code: codeIn(box.mails[0]), attempt: s.attempt };
}

/** Signs up and verifies a new user; resolves to its id and address. */
export async function verifiedUser(
  db: D1Database,
  password = PASSWORD,
): Promise<{ id: string; email: string }> {
  const { email, code, attempt } = await pendingUser(db, password);
  const v = await verifyOtp(db, { email, code, attempt, secret: SECRET });
  if (!v.ok) throw new Error(`verify failed: ${v.error}`);
  return { id: v.userId, email };
}
