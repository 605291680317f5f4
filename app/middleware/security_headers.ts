/**
 * Security headers on every answer of the app (Hono's `secureHeaders` with our policy):
 *
 * - `Content-Security-Policy`: {@linkcode CONTENT_SECURITY_POLICY} — scripts only from the
 *   app's own origin (the pages' one script is the bundle at `<site>/auth-client.js`; no inline
 *   script runs), styles from the app or inline `style` attributes (the sign-in pages style
 *   their elements inline), images from the app or `data:`, forms only to the app, no framing
 *   (`frame-ancestors 'none'`), no plugins, no `<base>`.
 * - `X-Frame-Options: DENY` (the same for browsers without CSP level 2),
 *   `X-Content-Type-Options: nosniff`, `Referrer-Policy: same-origin` (a reset link's token
 *   never leaves in a `Referer`; same-origin posts keep their `Origin`),
 *   `Cross-Origin-Opener-Policy: same-origin`, `Strict-Transport-Security: max-age=15552000`
 *   (browsers honour it over https only), and the rest of Hono's defaults.
 * - No `Cross-Origin-Resource-Policy`: the mail API's signed file links may be shown by an
 *   integration on another site.
 *
 * @module
 */
import type { MiddlewareHandler } from "hono";
import { secureHeaders } from "hono/secure-headers";

/** The app's Content-Security-Policy, directive by directive. */
export const CONTENT_SECURITY_POLICY: Readonly<Record<string, readonly string[]>> = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'", "'unsafe-inline'"],
  imgSrc: ["'self'", "data:"],
  connectSrc: ["'self'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
  baseUri: ["'none'"],
  objectSrc: ["'none'"],
};

/**
 * The middleware.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { securityHeaders } from "./security_headers.ts";
 * const app = new Hono().use("*", securityHeaders());
 * app.get("/", (c) => c.html("<p>hi</p>"));
 * const res = await app.request("/");
 * console.log(res.headers.get("x-frame-options")); // "DENY"
 * ```
 */
export function securityHeaders(): MiddlewareHandler {
  return secureHeaders({
    contentSecurityPolicy: Object.fromEntries(
      Object.entries(CONTENT_SECURITY_POLICY).map(([k, v]) => [k, [...v]]),
    ),
    xFrameOptions: "DENY",
    referrerPolicy: "same-origin",
    strictTransportSecurity: "max-age=15552000",
    crossOriginResourcePolicy: false,
  });
}
