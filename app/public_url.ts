/**
 * The app's public origin: where e-mailed links, OAuth redirect URIs, relay redirects and mail
 * file links point. It comes from configuration, never from a request's `Host` header:
 *
 * - `APP_URL` (e.g. `https://app.example`): the one public origin. Every link uses it.
 * - `APP_HOSTS` (e.g. `app.example, www.app.example`): the host names the app answers to. A
 *   request for any other host gets 421 before it reaches a site; links use the request's
 *   host once it passed that check. An entry is a host (`app.example`, `app.example:8443`,
 *   https is assumed) or an origin (`http://127.0.0.1:8000`).
 * - Neither, in development: the request's own origin (convenient on a laptop).
 *
 * In production (`MODE=production`, or on Deno Deploy where `DENO_DEPLOYMENT_ID` is set) one
 * of the two is required: the app refuses to start without it.
 *
 * @module
 */

/** The parsed `APP_URL` / `APP_HOSTS` settings. */
export interface PublicUrlSettings {
  /** The origin from `APP_URL`, without a trailing slash, or null. */
  appUrl: string | null;
  /** `APP_HOSTS`: lower-case `host[:port]` → origin, or null when unset. */
  appHosts: ReadonlyMap<string, string> | null;
}

/** The environment fields the public origin depends on. */
export interface PublicUrlEnv {
  /** The parsed settings. */
  PUBLIC: PublicUrlSettings;
}

const LOOPBACK = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/;
const HOST =
  /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*|\[[0-9a-f:.]+\])(?::\d{1,5})?$/;

function parseOrigin(name: string, raw: string, production: boolean): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(
      `${name}: ${JSON.stringify(raw)} is not a URL; give an origin such as https://app.example`,
    );
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new Error(
      `${name}: ${JSON.stringify(raw)} must be an http(s) origin such as https://app.example`,
    );
  }
  if (url.username || url.password || url.search || url.hash || url.pathname !== "/") {
    throw new Error(
      `${name}: ${JSON.stringify(raw)} must be an origin only (scheme, host, port), ` +
        `with no path, query or credentials, e.g. https://app.example`,
    );
  }
  if (production && url.protocol === "http:" && !LOOPBACK.test(url.hostname)) {
    throw new Error(`${name}: ${JSON.stringify(raw)} must use https in production`);
  }
  return url.origin;
}

/**
 * Parses `APP_URL` and `APP_HOSTS` from `vars`; throws an `Error` naming the variable when one
 * is malformed, or when `required` (production) and neither is set.
 *
 * @example
 * ```ts
 * import { parsePublicUrlSettings } from "./public_url.ts";
 * const s = parsePublicUrlSettings({ APP_URL: "https://app.example/" }, true);
 * console.log(s.appUrl); // "https://app.example"
 * ```
 */
export function parsePublicUrlSettings(
  vars: Record<string, string | undefined>,
  required: boolean,
): PublicUrlSettings {
  const appUrl = vars.APP_URL ? parseOrigin("APP_URL", vars.APP_URL.trim(), required) : null;
  let appHosts: Map<string, string> | null = null;
  if (vars.APP_HOSTS !== undefined && vars.APP_HOSTS.trim() !== "") {
    appHosts = new Map();
    for (const entry of vars.APP_HOSTS.split(",").map((s) => s.trim()).filter(Boolean)) {
      const origin = entry.includes("://")
        ? parseOrigin("APP_HOSTS", entry, required)
        : HOST.test(entry.toLowerCase())
        ? new URL(`https://${entry.toLowerCase()}`).origin
        : null;
      if (origin === null) {
        throw new Error(
          `APP_HOSTS: ${JSON.stringify(entry)} is not a host name; give host names such as ` +
            `app.example or app.example:8443, or origins such as http://127.0.0.1:8000`,
        );
      }
      appHosts.set(new URL(origin).host, origin);
    }
  }
  if (required && !appUrl && !appHosts) {
    throw new Error(
      "APP_URL must be set in production: the app's public origin (e.g. https://app.example), " +
        "used in e-mailed links, OAuth redirect URIs, relay redirects and file links instead " +
        "of the request's Host header. Or set APP_HOSTS to the host names the app answers to.",
    );
  }
  return { appUrl, appHosts };
}

/**
 * True when the request's host may be served: always without `APP_HOSTS`, else only for a
 * listed host.
 */
export function hostAllowed(env: PublicUrlEnv, request: Request): boolean {
  const hosts = env.PUBLIC.appHosts;
  return !hosts || hosts.has(new URL(request.url).host);
}

/**
 * The public origin for links made while answering `request`: `APP_URL`; else, with
 * `APP_HOSTS`, the origin of the request's host when listed (the first listed one otherwise);
 * else (development) the request's origin.
 *
 * @example
 * ```ts
 * import { parsePublicUrlSettings, publicOrigin } from "./public_url.ts";
 * const env = { PUBLIC: parsePublicUrlSettings({ APP_URL: "https://app.example" }, true) };
 * const req = new Request("http://evil.example/users/api/auth/forgot");
 * console.log(publicOrigin(env, req)); // "https://app.example"
 * ```
 */
export function publicOrigin(env: PublicUrlEnv, request: Request): string {
  const { appUrl, appHosts } = env.PUBLIC;
  if (appUrl) return appUrl;
  const url = new URL(request.url);
  if (appHosts) return appHosts.get(url.host) ?? appHosts.values().next().value!;
  return url.origin;
}

/**
 * Origins a browser request may come from (its `Origin` header) for a state-changing request:
 * the configured public origins and the request's own origin.
 */
export function trustedOrigins(env: PublicUrlEnv, request: Request): Set<string> {
  const out = new Set<string>([new URL(request.url).origin]);
  if (env.PUBLIC.appUrl) out.add(env.PUBLIC.appUrl);
  for (const origin of env.PUBLIC.appHosts?.values() ?? []) out.add(origin);
  return out;
}
