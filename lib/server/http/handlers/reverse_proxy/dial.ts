/**
 * How an upstream host name becomes connections, for the transport's `resolver` and
 * `dial_fallback_delay`:
 *
 * - `resolver.addresses`: the name is looked up (A and AAAA) on these DNS servers, tried in
 *   order, instead of the system's resolver.
 * - `dial_fallback_delay`: Go's "happy eyeballs" (RFC 6555): the addresses of the name's
 *   first family are tried one after the other; when that has not connected after the delay,
 *   the other family's addresses are tried alongside; the first connection wins and the
 *   others are closed. A negative delay tries every address in order, one at a time.
 *
 * Connecting and waiting are passed in, so the racing is the same code in tests.
 *
 * @module
 */

/** A DNS server to ask (`resolver.addresses`). */
export interface NameServer {
  ipAddr: string;
  port: number;
}

/** One address of a name. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

/** True for an IP literal (no lookup needed). */
export function isIPLiteral(host: string): boolean {
  return IPV4.test(host) || host.includes(":");
}

/**
 * The addresses of `host`: from `servers` (each tried in order until one answers), or the
 * system resolver (`getaddrinfo`, which reads /etc/hosts) when none are given.
 *
 * @example
 * ```ts ignore
 * await resolveHost("localhost"); // [{ address: "::1", family: 6 }, { address: "127.0.0.1", family: 4 }]
 * ```
 */
export async function resolveHost(
  host: string,
  servers?: readonly NameServer[],
): Promise<ResolvedAddress[]> {
  if (isIPLiteral(host)) return [{ address: host, family: host.includes(":") ? 6 : 4 }];
  if (!servers?.length) {
    const dns = (await import("node:dns")).default;
    const found = await dns.promises.lookup(host, { all: true, verbatim: true });
    return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
  }
  let last: unknown;
  for (const nameServer of servers) {
    const ask = (type: "A" | "AAAA") =>
      Deno.resolveDns(host, type, { nameServer }).catch((e) => {
        if (e instanceof Deno.errors.NotFound) return [] as string[];
        throw e;
      });
    try {
      const [v4, v6] = await Promise.allSettled([ask("A"), ask("AAAA")]);
      if (v4.status === "rejected" && v6.status === "rejected") throw v4.reason;
      const out: ResolvedAddress[] = [];
      if (v4.status === "fulfilled") {
        for (const a of v4.value) out.push({ address: a, family: 4 });
      }
      if (v6.status === "fulfilled") {
        for (const a of v6.value) out.push({ address: a, family: 6 });
      }
      if (out.length) return out;
      throw new Error(`no address for ${host}`);
    } catch (e) {
      last = e;
    }
  }
  throw new Error(`resolving ${host}: ${(last as Error)?.message ?? last}`);
}

/** A connection attempt that can be given up. */
export interface Attempt<C> {
  result: Promise<C>;
}

/**
 * Races connections to `addresses` as Go's dialer does (see the module doc). `connect` makes
 * one attempt; `sleep` waits (ms); `close` ends a connection that lost the race. Rejects with
 * the first family's last error when nothing connects.
 *
 * @example
 * ```ts ignore
 * const conn = await dialParallel(addrs, 300, (a) => Deno.connect({ hostname: a.address, port }), ...);
 * ```
 */
export function dialParallel<C>(
  addresses: readonly ResolvedAddress[],
  fallbackDelayMs: number,
  connect: (a: ResolvedAddress) => Promise<C>,
  sleep: (ms: number) => Promise<void>,
  close: (c: C) => void,
): Promise<C> {
  if (!addresses.length) return Promise.reject(new Error("no addresses to dial"));
  const family = addresses[0].family;
  const primaries = addresses.filter((a) => a.family === family);
  const fallbacks = fallbackDelayMs < 0 ? [] : addresses.filter((a) => a.family !== family);
  const serial = fallbackDelayMs < 0 ? addresses : primaries;
  return new Promise<C>((resolve, reject) => {
    let won = false;
    let primaryDone = false;
    let fallbackState: "waiting" | "running" | "done" = fallbacks.length ? "waiting" : "done";
    let firstError: unknown;
    const settle = () => {
      if (!won && primaryDone && fallbackState === "done") reject(firstError);
    };
    const run = async (list: readonly ResolvedAddress[]) => {
      for (const a of list) {
        if (won) return;
        try {
          const c = await connect(a);
          if (won) close(c);
          else {
            won = true;
            resolve(c);
          }
          return;
        } catch (e) {
          if (firstError === undefined) firstError = e;
        }
      }
    };
    const startFallback = () => {
      if (fallbackState !== "waiting" || won) return;
      fallbackState = "running";
      run(fallbacks).then(() => {
        fallbackState = "done";
        settle();
      });
    };
    run(serial).then(() => {
      primaryDone = true;
      // the first family failed: the other one starts at once (as Go's timer reset to 0)
      startFallback();
      settle();
    });
    if (fallbacks.length) sleep(fallbackDelayMs).then(startFallback);
  });
}
