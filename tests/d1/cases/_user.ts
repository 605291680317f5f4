import { type D1Database, signup, verifyOtp } from "../../../d1.ts";
import { codeIn, ITER, newEmail, outbox, PASSWORD, SECRET } from "../_helpers.ts";

/** Signs up and verifies a new user; resolves to its id and address. */
export async function verifiedUser(
  db: D1Database,
  password = PASSWORD,
): Promise<{ id: string; email: string }> {
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
  const v = await verifyOtp(db, { email, code: codeIn(box.mails[0]), secret: SECRET });
  if (!v.ok) throw new Error(`verify failed: ${v.error}`);
  return { id: v.userId, email };
}
