/**
 * CSRF protection of the console, as one middleware: every state-changing request (any method
 * but GET, HEAD and OPTIONS) must carry the signed-in session's token, in the form field
 * `_csrf` or the `X-CSRF-Token` header; anything else gets the refusal page (403) and reaches
 * no route. This comes on top of the app-wide refusal of cross-site requests
 * (`app/middleware/cross_site.ts`), which stops a post from another site before it gets here.
 *
 * The token is an HMAC of the session (user id and issue time) under the console's secret:
 * nothing is stored, it changes with every sign-in, and a token of one session is worthless
 * in another.
 *
 * @module
 */
import type { Context, MiddlewareHandler } from "hono";
import { CSRF_FIELD } from "./ui.ts";

/** Header a script sends the token in. */
export const CSRF_HEADER = "x-csrf-token";

const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);
const enc = new TextEncoder();

function b64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(
    /=+$/,
    "",
  );
}

/**
 * The CSRF token of a session.
 *
 * @example
 * ```ts
 * import { csrfToken } from "./csrf.ts";
 * const token = await csrfToken("console secret", { subject: "u1", issuedAt: 1700000000 });
 * ```
 */
export async function csrfToken(
  secret: string,
  session: { subject: string; issuedAt: number },
): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    enc.encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = await crypto.subtle.sign(
    "HMAC",
    key,
    enc.encode(`gatehouse-console-csrf\u0000${session.subject}\u0000${session.issuedAt}`),
  );
  return b64url(new Uint8Array(mac));
}

function sameText(a: string, b: string): boolean {
  const x = enc.encode(a);
  const y = enc.encode(b);
  let diff = x.length ^ y.length;
  for (let i = 0; i < Math.max(x.length, y.length); i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0);
  return diff === 0;
}

async function sentToken(c: Context): Promise<string> {
  const header = c.req.header(CSRF_HEADER);
  if (header) return header;
  const type = c.req.header("content-type") ?? "";
  if (
    !type.startsWith("application/x-www-form-urlencoded") && !type.startsWith("multipart/form-data")
  ) {
    return "";
  }
  const body = await c.req.parseBody().catch(() => ({} as Record<string, unknown>));
  const v = body[CSRF_FIELD];
  return typeof v === "string" ? v : "";
}

/** Settings of {@linkcode csrfProtection}. */
export interface CsrfOptions {
  /** The token expected on this request (the signed-in session's), or null when there is none. */
  expected(c: Context): Promise<string | null>;
  /** The refusal (403). */
  refuse(c: Context): Response | Promise<Response>;
}

/**
 * The middleware. Put it after the sign-in check, so `expected` can read the session.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { csrfProtection } from "./csrf.ts";
 * const app = new Hono().use("*", csrfProtection({
 *   expected: () => Promise.resolve("token-of-this-session"),
 *   refuse: (c) => c.text("refused", 403),
 * }));
 * app.post("/x", (c) => c.text("done"));
 * const res = await app.request("/x", { method: "POST" });
 * console.log(res.status); // 403
 * ```
 */
export function csrfProtection(options: CsrfOptions): MiddlewareHandler {
  return async (c, next) => {
    if (SAFE.has(c.req.method)) return await next();
    const expected = await options.expected(c);
    const sent = await sentToken(c);
    if (!expected || !sent || !sameText(sent, expected)) return await options.refuse(c);
    await next();
  };
}
