/**
 * Parsing of an admin request's target, once, at the edge: the raw request target (never the
 * WHATWG-normalised `URL`, which resolves `%2e%2e` and backslashes and so could move a request
 * out of the scope it names), the `Host` header, and the path split into decoded segments.
 *
 * A path is refused with 400 when any segment is a dot-segment (`.`, `..`) in any encoding
 * (`%2e%2e`, `%2E.`, `%252e%252e`, ...), holds a slash or backslash (raw, `%2f`, `%5c`, or
 * encoded twice), is empty in the middle (`//`), holds a control character, or has malformed
 * percent-encoding or invalid UTF-8. What is left maps one to one onto config keys.
 *
 * @module
 */
import { AdminError } from "../errors.ts";

/** Longest admin request target accepted, in bytes (longer: 414). */
export const MAX_TARGET_LENGTH = 8192;

/**
 * The request target as the client sent it (`/config/a?x=1`), without the scheme and authority
 * the server put in front of it in `req.url`.
 *
 * @example
 * ```ts
 * import { requestTarget } from "./request.ts";
 * const req = new Request("http://127.0.0.1:2019/config/%2e%2e/load", {
 *   headers: { host: "127.0.0.1:2019" },
 * });
 * requestTarget(req); // "/config/%2e%2e/load"
 * ```
 */
export function requestTarget(req: Request): string {
  const url = req.url;
  const host = req.headers.get("host");
  if (host !== null) {
    const prefix = `http://${host}`;
    if (url.startsWith(prefix) && (url.length === prefix.length || url[prefix.length] === "/")) {
      return url.slice(prefix.length) || "/";
    }
  }
  const m = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^/?#]*/.exec(url);
  return m ? url.slice(m[0].length) || "/" : url;
}

// RFC 3986 reg-name (unreserved, sub-delims, pct-encoded) or an IP literal, optional port.
const REG_NAME = /^(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})*$/;
const IP_LITERAL = /^\[[0-9A-Fa-f:.]+(?:%25[A-Za-z0-9\-._~]+)?\]$/;

/**
 * True when `host` is a valid `Host` header value: `uri-host [ ":" port ]` (RFC 9110 §7.2),
 * the empty value included. Spaces, `/`, `?`, `#`, `@`, `\`, brackets outside an IP literal
 * and ports over 65535 are not.
 *
 * @example
 * ```ts
 * import { validHost } from "./request.ts";
 * validHost("localhost:2019"); // true
 * validHost("evil.example/x"); // false
 * ```
 */
export function validHost(host: string): boolean {
  if (host.length > 255 + 6 + 2) return false;
  let name = host;
  const m = /^(.*?)(?::(\d{0,5}))?$/.exec(host);
  if (m && m[2] !== undefined && !(m[1].includes(":") && !m[1].startsWith("["))) {
    if (m[2] !== "" && Number(m[2]) > 65535) return false;
    name = m[1];
  }
  if (name.startsWith("[")) return IP_LITERAL.test(name);
  return REG_NAME.test(name);
}

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 65 && c <= 70) return c - 55;
  if (c >= 97 && c <= 102) return c - 87;
  return -1;
}

/**
 * Percent-decodes one path segment strictly: every `%` must start a `%XX` escape and the
 * result must be valid UTF-8. Returns null when it is not.
 *
 * @example
 * ```ts
 * import { decodeSegment } from "./request.ts";
 * decodeSegment("my%20server"); // "my server"
 * decodeSegment("%zz"); // null
 * ```
 */
export function decodeSegment(raw: string): string | null {
  if (!raw.includes("%")) return raw;
  const bytes: number[] = [];
  const enc = new TextEncoder();
  for (let i = 0; i < raw.length; i++) {
    const ch = raw.charCodeAt(i);
    if (ch === 37) {
      const hi = i + 2 < raw.length ? hexValue(raw.charCodeAt(i + 1)) : -1;
      const lo = i + 2 < raw.length ? hexValue(raw.charCodeAt(i + 2)) : -1;
      if (hi < 0 || lo < 0) return null;
      bytes.push(hi * 16 + lo);
      i += 2;
    } else if (ch < 128) {
      bytes.push(ch);
    } else {
      // a non-ASCII character sent raw: keep its UTF-8 bytes
      const end = ch >= 0xd800 && ch <= 0xdbff ? i + 2 : i + 1;
      bytes.push(...enc.encode(raw.slice(i, end)));
      i = end - 1;
    }
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(new Uint8Array(bytes));
  } catch {
    return null;
  }
}

/** Decodes `%XX` escapes leniently (malformed ones stay as they are), for the re-decoding check. */
function decodeLenient(s: string): string {
  return s.replace(/%([0-9A-Fa-f]{2})/g, (_, h) => String.fromCharCode(parseInt(h, 16)));
}

/** True when a decoded segment, decoded again any number of times, would step out of scope. */
function escapes(segment: string): boolean {
  let s = segment;
  for (let round = 0; round < 8; round++) {
    if (s === "." || s === ".." || s.includes("/") || s.includes("\\")) return true;
    const next = decodeLenient(s);
    if (next === s) return false;
    s = next;
  }
  return true; // encoded more than eight times over: nobody means that
}

/**
 * Parses the path of an admin request target into its canonical form: `/` + the decoded
 * segments joined by `/` (a trailing `/` is kept). Throws a 400 AdminError naming what is wrong
 * for anything listed in the module documentation, and 414 for targets over
 * {@linkcode MAX_TARGET_LENGTH}.
 *
 * @example
 * ```ts
 * import { parseAdminPath } from "./request.ts";
 * parseAdminPath("/config/apps/my%20server?x=1"); // "/config/apps/my server"
 * ```
 */
export function parseAdminPath(target: string): string {
  if (target.length > MAX_TARGET_LENGTH) {
    throw new AdminError(
      "uri_too_long",
      `request target too long: limit is ${MAX_TARGET_LENGTH} bytes`,
    );
  }
  const end = target.search(/[?#]/);
  const raw = end < 0 ? target : target.slice(0, end);
  if (!raw.startsWith("/")) {
    throw new AdminError("bad_request", "request target must be a path starting with '/'");
  }
  if (raw.includes("\\")) {
    throw new AdminError("bad_request", "backslashes are not allowed in admin paths");
  }
  const parts = raw.slice(1).split("/");
  const out: string[] = [];
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    if (part === "") {
      if (i === parts.length - 1) {
        out.push("");
        continue;
      }
      throw new AdminError("bad_request", "empty segment ('//') in admin path");
    }
    const decoded = decodeSegment(part);
    if (decoded === null) {
      throw new AdminError(
        "bad_request",
        `malformed percent-encoding or invalid UTF-8 in path segment '${part.slice(0, 64)}'`,
      );
    }
    if (escapes(decoded)) {
      throw new AdminError(
        "bad_request",
        `path segment '${part.slice(0, 64)}' would leave its scope ` +
          "(dot-segments and encoded slashes are not allowed)",
      );
    }
    // deno-lint-ignore no-control-regex
    if (/[\u0000-\u001f\u007f]/.test(decoded)) {
      throw new AdminError("bad_request", "control characters are not allowed in admin paths");
    }
    out.push(decoded);
  }
  return "/" + out.join("/");
}
