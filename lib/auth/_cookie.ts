/**
 * Reading cookies from a `Cookie` request header.
 *
 * @module
 */

/** RFC 6265 cookie-name (an RFC 7230 token). */
export const COOKIE_NAME: RegExp = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** Every value of cookie `name` in a `Cookie` header, in order (quotes removed). */
export function cookieValues(header: string | null, name: string): string[] {
  const values: string[] = [];
  if (!header) return values;
  for (const part of header.split(";")) {
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
