/**
 * Resolution of a listen address's host name before binding. `Deno.serve({ hostname })` looks a
 * name up synchronously, holding the event loop (every site and the admin API) for as long as
 * the lookup takes; here the name is resolved asynchronously (the hosts file, then the
 * resolvers of `/etc/resolv.conf`, as Caddy's Go resolver does) with a time limit, and the
 * socket is bound to the address found. IP literals and the empty host are used as they are.
 *
 * @module
 */

/** How listen host names are resolved. */
export interface ResolveOptions {
  /** Longest wait for an answer, in ms (default {@linkcode DEFAULT_RESOLVE_TIMEOUT_MS}). */
  timeoutMs?: number;
  /** Ask this DNS server instead of the system's (the hosts file is then not read). */
  nameServer?: { ipAddr: string; port?: number };
}

/** Default limit on resolving a listen host name: 5 s. */
export const DEFAULT_RESOLVE_TIMEOUT_MS = 5000;

function isIpLiteral(host: string): boolean {
  return host.includes(":") || /^\d{1,3}(?:\.\d{1,3}){3}$/.test(host);
}

/**
 * The address to bind for `host` on `network` (`tcp` prefers IPv4, as Go's `net.Listen`;
 * `tcp4`/`tcp6` take only their family). Throws an Error naming the host when it does not
 * resolve or the answer takes longer than the limit.
 *
 * @example
 * ```ts
 * import { resolveBindHost } from "./resolve_host.ts";
 * await resolveBindHost("127.0.0.1", "tcp"); // "127.0.0.1", no lookup
 * await resolveBindHost("localhost", "tcp"); // "127.0.0.1"
 * ```
 */
export async function resolveBindHost(
  host: string,
  network: string,
  options: ResolveOptions = {},
): Promise<string> {
  if (host === "" || isIpLiteral(host)) return host;
  const timeoutMs = options.timeoutMs ?? DEFAULT_RESOLVE_TIMEOUT_MS;
  const types: ("A" | "AAAA")[] = network === "tcp4"
    ? ["A"]
    : network === "tcp6"
    ? ["AAAA"]
    : ["A", "AAAA"];
  const lookup: Deno.ResolveDnsOptions = {};
  if (options.nameServer) lookup.nameServer = options.nameServer;
  // No AbortSignal: with one, Deno cuts each DNS attempt to 1 s whatever the system's resolver
  // settings say. The limit is a race instead; a lookup still running after it is left to end
  // on its own (the resolver's own timeouts bound it).
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<"expired">((
    r,
  ) => (timer = setTimeout(() => r("expired"), timeoutMs)));
  let lastError: unknown;
  try {
    for (const type of types) {
      const attempt = Deno.resolveDns(host, type, lookup).then(
        (found) => ({ found }),
        (error: unknown) => ({ error }),
      );
      const outcome = await Promise.race([attempt, expired]);
      if (outcome === "expired") {
        throw new Error(
          `resolving listen address host '${host}': no answer within ${timeoutMs / 1000}s`,
        );
      }
      if ("found" in outcome && outcome.found.length > 0) return outcome.found[0];
      if ("error" in outcome) lastError = outcome.error;
    }
  } finally {
    clearTimeout(timer);
  }
  const why = lastError instanceof Deno.errors.NotFound || lastError === undefined
    ? "no such host"
    : (lastError as Error).message;
  throw new Error(`resolving listen address host '${host}': ${why}`);
}
