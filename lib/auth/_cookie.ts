/**
 * Reading cookies from a `Cookie` request header.
 *
 * @module
 */

/** RFC 6265 cookie-name (an RFC 7230 token). */
export const COOKIE_NAME: RegExp = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** Most same-named cookies looked at (bounds the verification work per request). */
const MAX_VALUES = 4;

/** The values of cookie `name` in a `Cookie` header, in order (quotes removed), at most 4. */
export function cookieValues(header: string | null, name: string): string[] {
  const values: string[] = [];
  if (!header) return values;
  for (const part of header.split(";")) {
    if (values.length === MAX_VALUES) break;
    const eq = part.indexOf("=");
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    let value = part.slice(eq + 1).trim();
    if (value.length >= 2 && value[0] === '"' && value[value.length - 1] === '"') {
      value = value.slice(1, -1);
    }
    values.push(value);
  }
  return values;
}
