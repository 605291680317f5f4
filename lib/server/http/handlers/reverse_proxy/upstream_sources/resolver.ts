/**
 * DNS lookups of the dynamic upstream sources: the system's resolvers (the hosts file, then
 * `/etc/resolv.conf`), or the `resolver.addresses` a source names, one picked at random per
 * lookup as Caddy does. `dial_timeout` limits each lookup. A resolver address that is a host
 * name is itself looked up with the system's resolvers first.
 *
 * @module
 */
import { Decoder } from "../../../../config/decode.ts";
import { type Duration, durationMs } from "../../../../config/duration.ts";

/** What the `a` and `srv` sources share: how names are looked up. */
export type LookupFields = {
  /** DNS servers asked (`[udp/]host[:port]`, one at random per lookup); the system's when absent. */
  resolver?: { addresses?: string[] };
  /** The longest wait for one lookup (default: the resolver's own timeouts). */
  dial_timeout?: Duration;
  /** Checked, without effect: lookups are UDP datagrams, which do not race. */
  dial_fallback_delay?: Duration;
};

/** One DNS server: IP and port. */
export interface NameServer {
  /** IP address or host name. */
  host: string;
  /** UDP port. */
  port: number;
}

/** How a source looks names up. */
export interface LookupOptions {
  /** The resolvers to ask (one at random per lookup); empty for the system's. */
  servers: NameServer[];
  /** Longest wait for one lookup, in ms (0: the resolver's own timeouts). */
  timeoutMs: number;
}

/**
 * A resolver address (`8.8.8.8`, `udp/[::1]:5353`, `dns.example:53`): default network udp
 * and port 53, as Caddy's `ParseNetworkAddressWithDefaults(addr, "udp", 53)`; or why it is
 * not one.
 *
 * @example
 * ```ts
 * import { resolverAddress } from "./resolver.ts";
 * resolverAddress("127.0.0.1:5353"); // { host: "127.0.0.1", port: 5353 }
 * ```
 */
export function resolverAddress(input: string): NameServer | string {
  let rest = input.trim();
  const slash = rest.indexOf("/");
  if (slash >= 0) {
    const network = rest.slice(0, slash);
    if (network !== "udp" && network !== "udp4" && network !== "udp6") {
      return `resolver ${JSON.stringify(input)}: network ${network} is not supported ` +
        `(lookups go over UDP, with TCP only for truncated answers)`;
    }
    rest = rest.slice(slash + 1);
  }
  const m = /^(?:\[([^\]]+)\]|([^:\[\]]+)|([0-9a-fA-F:]+))(?::(\d+))?$/.exec(rest);
  const ipv6Bare = m?.[3] !== undefined;
  if (!m || (ipv6Bare && m[4] !== undefined)) {
    return `invalid resolver address ${JSON.stringify(input)}`;
  }
  const host = m[1] ?? m[2] ?? m[3];
  const port = m[4] ? Number(m[4]) : 53;
  if (!host || port < 1 || port > 65535) return `invalid resolver address ${JSON.stringify(input)}`;
  return { host, port };
}

/**
 * A resolver address as {@linkcode resolverAddress} reads it; throws naming `where` when it
 * is not one.
 *
 * @example
 * ```ts
 * import { parseNameServer } from "./resolver.ts";
 * parseNameServer("127.0.0.1:5353", "resolver"); // { host: "127.0.0.1", port: 5353 }
 * ```
 */
export function parseNameServer(input: string, where: string): NameServer {
  const ns = resolverAddress(input);
  if (typeof ns === "string") new Decoder({}, where).fail(ns);
  return ns as NameServer;
}

/**
 * Checks the `resolver`, `dial_timeout` and `dial_fallback_delay` fields of a source (`d` at
 * the source) and returns them. The fallback delay (happy eyeballs between IPv6 and IPv4 when
 * connecting to a resolver named by host name) is checked and has no effect: lookups are UDP
 * datagrams, which do not race.
 */
export function checkLookupFields(d: Decoder): LookupFields {
  const out: LookupFields = {};
  const resolver = d.object("resolver");
  if (resolver) {
    for (const k of Object.keys(resolver.raw)) {
      if (k !== "addresses") resolver.fail(`unknown field "${k}"`, "unknown_field");
    }
    const list = resolver.strings("addresses");
    for (const a of list ?? []) {
      const ns = resolverAddress(a);
      if (typeof ns === "string") resolver.failAt("addresses", ns);
    }
    out.resolver = list ? { addresses: list } : {};
  }
  const timeoutMs = d.duration("dial_timeout");
  if (timeoutMs !== undefined) {
    if (timeoutMs < 0) d.failAt("dial_timeout", "must not be negative");
    out.dial_timeout = d.value("dial_timeout") as Duration;
  }
  if (d.duration("dial_fallback_delay") !== undefined) {
    out.dial_fallback_delay = d.value("dial_fallback_delay") as Duration;
  }
  return out;
}

/** The lookup settings of a decoded source. */
export function lookupOptions(c: LookupFields): LookupOptions {
  return {
    servers: (c.resolver?.addresses ?? []).map((a) => resolverAddress(a) as NameServer),
    timeoutMs: c.dial_timeout === undefined ? 0 : durationMs(c.dial_timeout),
  };
}

function isIP(host: string): boolean {
  return host.includes(":") || /^\d{1,3}(\.\d{1,3}){3}$/.test(host);
}

async function nameServerOf(s: NameServer): Promise<{ ipAddr: string; port: number }> {
  if (isIP(s.host)) return { ipAddr: s.host, port: s.port };
  const found = await Deno.resolveDns(s.host, "A").catch(() => Deno.resolveDns(s.host, "AAAA"));
  if (!found.length) throw new Error(`resolver ${s.host}: no address`);
  return { ipAddr: found[0], port: s.port };
}

/** Runs one lookup under the options' resolver and time limit. */
export async function lookup<T extends "A" | "AAAA" | "SRV" | "TXT">(
  name: string,
  type: T,
  o: LookupOptions,
): Promise<T extends "SRV" ? Deno.SrvRecord[] : T extends "TXT" ? string[][] : string[]> {
  const options: Deno.ResolveDnsOptions = {};
  if (o.servers.length) {
    options.nameServer = await nameServerOf(
      o.servers[Math.floor(Math.random() * o.servers.length)],
    );
  }
  // The limit is a race: an AbortSignal would cut every attempt to 1 s in Deno's resolver.
  const query = Deno.resolveDns(name, type as "A", options) as Promise<unknown>;
  if (o.timeoutMs <= 0) return await query as never;
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      query,
      new Promise<never>((_, rej) => {
        timer = setTimeout(
          () => rej(new Error(`looking up ${type} ${name}: no answer within ${o.timeoutMs} ms`)),
          o.timeoutMs,
        );
      }),
    ]) as never;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The IPs of a name: A and/or AAAA records (an empty answer of one type is not an error
 * when the other has records); throws when neither has any.
 */
export async function lookupIP(
  name: string,
  versions: { v4: boolean; v6: boolean },
  o: LookupOptions,
): Promise<string[]> {
  if (isIP(name)) return [name.replace(/^\[|\]$/g, "")];
  const types: ("A" | "AAAA")[] = [];
  if (versions.v4) types.push("A");
  if (versions.v6) types.push("AAAA");
  const results = await Promise.allSettled(types.map((t) => lookup(name, t, o)));
  const ips = results.flatMap((r) => r.status === "fulfilled" ? r.value : []);
  if (ips.length) return ips;
  const err = results.find((r) => r.status === "rejected") as PromiseRejectedResult | undefined;
  throw new Error(`lookup ${name}: ${(err?.reason as Error)?.message ?? "no addresses"}`);
}
