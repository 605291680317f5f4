/**
 * The one canonical form of an e-mail address, used wherever the toolkit compares or stores
 * one (owner lists, domain lists, signup, sign-in, OAuth linking):
 *
 * - surrounding whitespace is removed;
 * - the ASCII letters `A`–`Z` become `a`–`z`;
 * - nothing else changes: no Unicode case mapping, no NFC/NFKC normalization.
 *
 * So `Kate@Example.COM` and `kate@example.com` are one address, while a look-alike never
 * becomes another address: `\u212Aate@example.com` (with the Kelvin sign, which Unicode lowercases
 * and normalizes to `k`) stays itself and does not match `kate@example.com`. An address with
 * non-ASCII characters matches only the same code points.
 *
 * @module
 */

/** Longest input looked at, in UTF-16 code units (an address is at most 254 characters). */
const MAX_INPUT = 1000;

/**
 * The canonical form of an e-mail address (see the module documentation), or `null` when the
 * value is not a string with an `@` that has text on both sides.
 *
 * @example
 * ```ts
 * import { canonicalEmail } from "@gatehouse/gatehouse";
 * console.log(canonicalEmail("  Kate@Example.COM ")); // "kate@example.com"
 * console.log(canonicalEmail("\u212Aate@example.com") === "kate@example.com"); // false
 * ```
 */
export function canonicalEmail(email: unknown): string | null {
  if (typeof email !== "string" || email.length > MAX_INPUT) return null;
  const e = email.trim().replace(/[A-Z]+/g, (s) => s.toLowerCase());
  const at = e.lastIndexOf("@");
  if (at <= 0 || at === e.length - 1) return null;
  return e;
}

/** Lowercases ASCII letters only (for list entries that are not addresses, e.g. domains). */
export function asciiLower(text: string): string {
  return text.replace(/[A-Z]+/g, (s) => s.toLowerCase());
}
