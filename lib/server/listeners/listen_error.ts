/**
 * A bind that failed, in words that name the address, as Caddy's `listening on <address>:
 * ... address already in use`: Deno's `AddrInUse` ("Address already in use (os error 98)") and
 * the node engine's `EADDRINUSE` say neither which address nor which listener.
 *
 * @module
 */

/** Why a bind failed, for the errors a listen address can cause; undefined for others. */
function reason(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  if (e instanceof Deno.errors.AddrInUse || code === "EADDRINUSE") {
    return "address already in use";
  }
  if (e instanceof Deno.errors.AddrNotAvailable || code === "EADDRNOTAVAIL") {
    return "cannot assign the requested address (it is not an address of this machine)";
  }
  if (e instanceof Deno.errors.PermissionDenied || code === "EACCES") {
    return "permission denied (ports below 1024 need privileges)";
  }
  return undefined;
}

/**
 * The error to report for a failed listen on `address`: `listening on <address>: <reason>`
 * for an address in use, not available or not permitted (the original as its `cause`), the
 * error itself otherwise.
 *
 * @example
 * ```ts
 * import { listenError } from "./listen_error.ts";
 * const e = listenError(new Deno.errors.AddrInUse("Address already in use"), "127.0.0.1:80");
 * e.message; // "listening on 127.0.0.1:80: address already in use"
 * ```
 */
export function listenError(e: unknown, address: string): unknown {
  const why = reason(e);
  if (why === undefined) return e;
  return new Error(`listening on ${address}: ${why}`, { cause: e });
}
