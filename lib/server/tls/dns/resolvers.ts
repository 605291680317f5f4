/**
 * DNS lookups of the DNS-01 challenge (certmagic's `dnsutil.go`), through `Deno.resolveDns`:
 *
 * - resolvers: `ip` or `ip:port` (`[v6]:port`), port 53 by default; none configured means
 *   the system's resolvers (`/etc/resolv.conf`).
 * - the zone of a name: the closest enclosing name with an SOA record, asked of the
 *   resolvers (`_acme-challenge.www.example.com` → `example.com.`).
 * - propagation: the TXT value (or, for ZeroSSL's CNAME validation, the CNAME target) is
 *   visible on every configured resolver or, with none configured, on every authoritative name
 *   server of the name (their NS records, resolved to addresses and asked directly on port 53).
 *
 * @module
 */
import { ConfigError } from "../../config/error.ts";

/** A resolver to ask. */
export interface Resolver {
  /** IP address. */
  ipAddr: string;
  /** UDP/TCP port. */
  port: number;
}

const QUERY_TIMEOUT_MS = 5_000;

/**
 * Parses resolver addresses (`1.1.1.1`, `1.1.1.1:53`, `[::1]:5353`, `::1`); a host name is
 * refused (the resolver must be reachable without a resolver).
 *
 * @example
 * ```ts
 * import { parseResolvers } from "./resolvers.ts";
 * parseResolvers(["8.8.8.8", "127.0.0.1:8053"], "resolvers");
 * // [{ ipAddr: "8.8.8.8", port: 53 }, { ipAddr: "127.0.0.1", port: 8053 }]
 * ```
 */
export function parseResolvers(raw: unknown, where: string): Resolver[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw) || raw.some((r) => typeof r !== "string")) {
    throw new ConfigError("invalid_config", `${where}: must be an array of addresses`);
  }
  return (raw as string[]).map((r) => {
    const s = r.trim().replace(/^(udp|tcp):\/\//, "");
    let ip = s;
    let port = 53;
    const v6 = /^\[([0-9a-fA-F:.]+)\](?::(\d+))?$/.exec(s);
    const v4 = /^(\d{1,3}(?:\.\d{1,3}){3})(?::(\d+))?$/.exec(s);
    if (v6) [ip, port] = [v6[1], v6[2] ? Number(v6[2]) : 53];
    else if (v4) [ip, port] = [v4[1], v4[2] ? Number(v4[2]) : 53];
    else if (!/^[0-9a-fA-F:]+$/.test(s) || !s.includes(":")) {
      throw new ConfigError(
        "invalid_config",
        `${where}: ${JSON.stringify(r)} is not an IP address with an optional port ` +
          `(a resolver is given by address, e.g. "1.1.1.1" or "127.0.0.1:8053")`,
      );
    }
    if (!(port >= 1 && port <= 65535)) {
      throw new ConfigError("invalid_config", `${where}: bad port in ${JSON.stringify(r)}`);
    }
    return { ipAddr: ip, port };
  });
}

type Kind = "TXT" | "SOA" | "NS" | "A" | "AAAA" | "CNAME";

/** Answers of one query (empty when the name has none); throws on other failures. */
async function query(
  name: string,
  kind: Kind,
  resolver: Resolver | undefined,
  signal?: AbortSignal,
): Promise<unknown[]> {
  const timeout = AbortSignal.timeout(QUERY_TIMEOUT_MS);
  const options: Deno.ResolveDnsOptions = {
    signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
  };
  if (resolver) options.nameServer = resolver;
  try {
    return await Deno.resolveDns(name, kind as "TXT", options);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return [];
    throw e;
  }
}

/** Asks the resolvers in turn until one answers (system resolvers when none given). */
async function ask(
  name: string,
  kind: Kind,
  resolvers: Resolver[],
  signal?: AbortSignal,
): Promise<unknown[]> {
  if (!resolvers.length) return await query(name, kind, undefined, signal);
  let last: unknown;
  for (const r of resolvers) {
    try {
      return await query(name, kind, r, signal);
    } catch (e) {
      signal?.throwIfAborted();
      last = e;
    }
  }
  throw last;
}

/**
 * The zone of `fqdn`: the closest enclosing name that has an SOA record.
 *
 * @example
 * ```ts ignore
 * await findZone("_acme-challenge.www.example.com.", []); // "example.com."
 * ```
 */
export async function findZone(
  fqdn: string,
  resolvers: Resolver[],
  signal?: AbortSignal,
): Promise<string> {
  const labels = fqdn.replace(/\.$/, "").toLowerCase().split(".");
  let lastError: unknown;
  for (let i = 0; i < labels.length; i++) {
    const name = labels.slice(i).join(".");
    try {
      const soa = await ask(name, "SOA", resolvers, signal);
      if (soa.length) return `${name}.`;
    } catch (e) {
      signal?.throwIfAborted();
      lastError = e;
    }
  }
  throw new Error(
    `no SOA record found for ${fqdn} or any parent name` +
      (lastError ? ` (last error: ${(lastError as Error).message})` : ""),
  );
}

/** The addresses of the authoritative name servers of `zone` (asked of the resolvers). */
async function authoritative(
  zone: string,
  resolvers: Resolver[],
  signal?: AbortSignal,
): Promise<Resolver[]> {
  const names = await ask(zone, "NS", resolvers, signal) as string[];
  const out: Resolver[] = [];
  for (const ns of names) {
    for (const kind of ["A", "AAAA"] as const) {
      const ips = await ask(ns, kind, resolvers, signal).catch(() => []) as string[];
      for (const ip of ips) out.push({ ipAddr: ip, port: 53 });
    }
  }
  if (!out.length) throw new Error(`no authoritative name server found for ${zone}`);
  return out;
}

/**
 * True when TXT `value` is visible at `fqdn` on every resolver given, or, with none given,
 * on every authoritative name server of `zone`.
 */
export async function txtPropagated(
  fqdn: string,
  value: string,
  zone: string,
  resolvers: Resolver[],
  signal?: AbortSignal,
): Promise<boolean> {
  const servers = resolvers.length ? resolvers : await authoritative(zone, [], signal);
  for (const s of servers) {
    const answers = await query(fqdn, "TXT", s, signal) as string[][];
    if (!answers.some((chunks) => chunks.join("") === value)) return false;
  }
  return true;
}

/**
 * True when the CNAME record at `fqdn` points at `target` (trailing dots and case ignored) on
 * every resolver given, or, with none given, on every authoritative name server of `zone`.
 */
export async function cnamePropagated(
  fqdn: string,
  target: string,
  zone: string,
  resolvers: Resolver[],
  signal?: AbortSignal,
): Promise<boolean> {
  const servers = resolvers.length ? resolvers : await authoritative(zone, [], signal);
  const want = target.replace(/\.$/, "").toLowerCase();
  for (const s of servers) {
    const answers = await query(fqdn, "CNAME", s, signal) as string[];
    if (!answers.some((a) => a.replace(/\.$/, "").toLowerCase() === want)) return false;
  }
  return true;
}
