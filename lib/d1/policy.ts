/**
 * Input policy of the flows: e-mail addresses, display names, and the password policy of
 * NIST SP 800-63B (section 5.1.1.2, "Memorized Secret Verifiers"):
 *
 * - at least 8 characters (Unicode code points, after NFKC normalization), and at most 256,
 *   well above the "at least 64" a verifier must accept;
 * - every character is allowed, spaces and emoji included; no composition rules (no "one
 *   digit, one symbol"), no hints, no periodic expiry;
 * - passwords found in a list of commonly used or compromised values, or equal to the
 *   account's e-mail address or its local part, or to the site's name, are refused;
 * - passwords are normalized with NFKC before hashing and before comparing, so the same
 *   password typed on different keyboards matches.
 *
 * @module
 */
import type { PasswordError } from "./errors.ts";
import { canonicalEmail } from "../auth/email.ts";

/** The password length bounds, in Unicode code points. */
export const PASSWORD_LENGTH: { readonly min: number; readonly max: number } = {
  min: 8,
  max: 256,
};

/** Longest e-mail address accepted (RFC 5321 path limit). */
export const MAX_EMAIL_LENGTH = 254;

/** Longest display name accepted, in code points. */
export const MAX_NAME_LENGTH = 100;

// The most common passwords of public breach corpora that are 8 characters or longer.
const COMMON = new Set([
  "password",
  "password1",
  "password12",
  "password123",
  "password1234",
  "passw0rd",
  "p@ssw0rd",
  "p@ssword",
  "12345678",
  "123456789",
  "1234567890",
  "0123456789",
  "87654321",
  "11111111",
  "00000000",
  "12341234",
  "11223344",
  "12121212",
  "88888888",
  "99999999",
  "123123123",
  "qwertyuiop",
  "qwerty123",
  "qwerty12",
  "qwertyui",
  "1q2w3e4r",
  "1q2w3e4r5t",
  "1qaz2wsx",
  "zaq12wsx",
  "asdfghjkl",
  "asdfasdf",
  "abcd1234",
  "abc12345",
  "abcdefgh",
  "iloveyou",
  "iloveyou1",
  "sunshine",
  "princess",
  "football",
  "baseball",
  "welcome1",
  "welcome123",
  "trustno1",
  "superman",
  "starwars",
  "whatever",
  "computer",
  "internet",
  "michelle",
  "jennifer",
  "jordan23",
  "liverpool",
  "letmein1",
  "changeme",
  "administrator",
  "admin123",
  "admin1234",
  "secret123",
  "dragon123",
  "monkey123",
  "master123",
  "login123",
  "test1234",
  "testtest",
  "qazwsxedc",
  "aa123456",
  "a1234567",
  "q1w2e3r4",
  "q1w2e3r4t5",
  "987654321",
  "password!",
  "passwort",
  "motdepasse",
  "contraseña",
  "senha123",
  "default1",
  "letmein123",
]);

/** Normalizes a password the way it is hashed and compared (NFKC). */
export function normalizePassword(password: string): string {
  return password.normalize("NFKC");
}

/**
 * Checks a new password against the policy; resolves to null when it is acceptable.
 *
 * @example
 * ```ts
 * import { checkPassword } from "@gatehouse/gatehouse/d1";
 * checkPassword("correct horse battery staple"); // null
 * checkPassword("short"); // "password_too_short"
 * ```
 */
export function checkPassword(
  password: string,
  context: { email?: string; appName?: string } = {},
): PasswordError | null {
  const p = normalizePassword(password);
  const length = [...p].length;
  if (length < PASSWORD_LENGTH.min) return "password_too_short";
  if (length > PASSWORD_LENGTH.max) return "password_too_long";
  const lower = p.toLowerCase();
  if (COMMON.has(lower)) return "password_common";
  const words = [context.email, context.email?.split("@")[0], context.appName]
    .filter((w): w is string => typeof w === "string" && w.length > 0)
    .map((w) => w.toLowerCase());
  if (words.includes(lower)) return "password_common";
  return null;
}

/**
 * Parses an e-mail address into the toolkit's canonical form (the core's `canonicalEmail`:
 * trimmed, ASCII letters lowercased, no Unicode case mapping or normalization, so look-alikes
 * such as the Kelvin sign stay distinct addresses); null when implausible.
 *
 * @example
 * ```ts
 * import { normalizeEmail } from "@gatehouse/gatehouse/d1";
 * normalizeEmail("  Ada@Example.COM "); // "ada@example.com"
 * normalizeEmail("\u212Aate@example.com"); // "\u212Aate@example.com", not "kate@example.com"
 * ```
 */
export function normalizeEmail(raw: unknown): string | null {
  const email = canonicalEmail(raw);
  if (email === null) return null;
  if (email.length < 3 || email.length > MAX_EMAIL_LENGTH) return null;
  // deno-lint-ignore no-control-regex
  if (/[\s\u0000-\u001f\u007f<>"(),;:\\[\]]/.test(email)) return null;
  const at = email.lastIndexOf("@");
  if (at < 1 || at !== email.indexOf("@")) return null;
  const local = email.slice(0, at);
  const domain = email.slice(at + 1);
  if (local.length > 64) return null;
  if (!/^[^.]+(\.[^.]+)+$/.test(domain)) return null;
  return email;
}

/** Parses a display name: trimmed, NFC, 1 to 100 code points, no control characters. */
export function normalizeName(raw: unknown): string | null {
  if (typeof raw !== "string" || raw.length > 1000) return null;
  const name = raw.trim().normalize("NFC");
  const length = [...name].length;
  if (length < 1 || length > MAX_NAME_LENGTH) return null;
  // deno-lint-ignore no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(name)) return null;
  return name;
}
