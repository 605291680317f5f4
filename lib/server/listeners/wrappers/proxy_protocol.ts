/**
 * `caddy.listeners.proxy_protocol`: reads the PROXY protocol header (v1 or v2) a load balancer
 * sends before anything else, and takes the client address from it — as Caddy does with
 * go-proxyproto:
 *
 * - `allow` (CIDR ranges): peers in them get policy `USE`; `deny`: peers in them get `REJECT`;
 *   every other peer gets `fallback_policy` (default `IGNORE`). Unix-socket peers are `USE`.
 * - `USE`: a header is optional; its source address becomes the client's. `IGNORE`: a header is
 *   optional, consumed, and its address not used. `REQUIRE`: no header, no connection; the
 *   address is used. `REJECT`: a header closes the connection. `SKIP`: nothing is read.
 * - `timeout`: how long to wait for the header (default 10s, go-proxyproto's; negative: no
 *   limit). A peer that sends nothing by then goes on without a header (`REQUIRE`: closed); one
 *   that stops mid-header is closed. A header that cannot be valid closes the connection.
 *
 * @module
 */
import type { ModuleDefinition } from "../../module/mod.ts";
import { Decoder, type Raw } from "../../config/decode.ts";
import { ipInRanges, type IPRange, parseIP } from "../../net/ip.ts";
import { parseProxyHeader, proxyHeaderNeeds } from "./proxy_header.ts";
import type { ListenerWrapper, PendingConnection } from "../../module/listener.ts";

/** What happens to one peer's connections. */
export type ProxyPolicy = "IGNORE" | "USE" | "REJECT" | "REQUIRE" | "SKIP";

const POLICIES: ProxyPolicy[] = ["IGNORE", "USE", "REJECT", "REQUIRE", "SKIP"];

/** Decoded `proxy_protocol` config. */
export interface ProxyProtocolConfig {
  /** Longest wait for the header (ms); undefined: no limit. */
  timeoutMs?: number;
  allow: IPRange[];
  deny: IPRange[];
  fallback: ProxyPolicy;
}

const WHERE = "caddy.listeners.proxy_protocol";

/** Decodes the wrapper's JSON. */
export function parseProxyProtocolConfig(raw: Raw): ProxyProtocolConfig {
  const d = new Decoder(raw, WHERE).fields([
    "wrapper",
    "timeout",
    "allow",
    "deny",
    "fallback_policy",
  ]);
  const ranges = (key: string) => {
    for (const r of d.strings(key) ?? []) {
      if (!r.includes("/")) d.failAt(key, `${r} is not a CIDR range`);
    }
    return d.ipRanges(key) ?? [];
  };
  const t = d.duration("timeout");
  const policy = (d.string("fallback_policy") ?? "IGNORE").toUpperCase();
  if (!POLICIES.includes(policy as ProxyPolicy)) {
    d.failAt(
      "fallback_policy",
      `${policy} is invalid policy (IGNORE, USE, REJECT, REQUIRE or SKIP)`,
    );
  }
  return {
    timeoutMs: t === undefined || t === 0 ? 10_000 : t < 0 ? undefined : t,
    allow: ranges("allow"),
    deny: ranges("deny"),
    fallback: policy as ProxyPolicy,
  };
}

/** The policy for a peer. */
export function policyFor(cfg: ProxyProtocolConfig, conn: PendingConnection): ProxyPolicy {
  const peer = conn.socketRemote;
  if (peer.transport === "unix") return "USE";
  const ip = parseIP(peer.hostname);
  if (ip === null) return "REJECT";
  if (ipInRanges(ip, cfg.deny)) return "REJECT";
  if (ipInRanges(ip, cfg.allow)) return "USE";
  return cfg.fallback;
}

/**
 * Reads the header of one connection under `cfg`; true when the connection goes on.
 *
 * @example
 * ```ts ignore
 * if (!(await acceptProxyHeader(cfg, conn))) return; // closed
 * ```
 */
export async function acceptProxyHeader(
  cfg: ProxyProtocolConfig,
  conn: PendingConnection,
): Promise<boolean> {
  const policy = policyFor(cfg, conn);
  if (policy === "SKIP") return true;
  const deadline = cfg.timeoutMs === undefined ? undefined : performance.now() + cfg.timeoutMs;
  while (true) {
    const v = parseProxyHeader(conn.buffered);
    if (v.kind === "none") return policy !== "REQUIRE";
    if (v.kind === "invalid") return false;
    if (v.kind === "header") {
      if (policy === "REJECT") return false;
      conn.consume(v.length);
      const src = v.header.source;
      if ((policy === "USE" || policy === "REQUIRE") && src) {
        conn.remote = src.transport === "unix"
          ? { transport: "unix", path: src.path }
          : { transport: "tcp", hostname: src.hostname, port: src.port };
      }
      return true;
    }
    // never more than the header can still hold: what follows it stays unread
    const got = await conn.fill(deadline, proxyHeaderNeeds(conn.buffered));
    if (got === "eof") return false;
    if (got === "timeout") return conn.buffered.length === 0 && policy !== "REQUIRE";
  }
}

/** Registry entry. */
export const proxyProtocolModule: ModuleDefinition<ListenerWrapper> = {
  id: "caddy.listeners.proxy_protocol",
  create(config) {
    const cfg = parseProxyProtocolConfig(config);
    return { name: "proxy_protocol", accept: (conn) => acceptProxyHeader(cfg, conn) };
  },
};
