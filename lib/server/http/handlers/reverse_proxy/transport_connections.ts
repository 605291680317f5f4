/**
 * The connection fields of the `http` transport: how upstream names are resolved and dialed
 * and how connections are kept, each honoured:
 *
 * - `resolver.addresses`: DNS servers (`[udp/]ip[:port]`, port 53 by default) asked for
 *   upstream names (A and AAAA), in order, instead of the system's resolver.
 * - `dial_fallback_delay`: happy eyeballs between the address families (0: Go's 300ms;
 *   negative: one address at a time); set, names are resolved here rather than by the system.
 * - `keep_alive`: `enabled` (false: a connection per request), `max_idle_conns_per_host`
 *   (default 32), `max_idle_conns` (over all upstreams), `idle_timeout` (default 2m, 0: none),
 *   `probe_interval` (TCP keep-alive probes on upstream connections; needs FFI on Linux).
 * - `max_conns_per_host`: connections to one upstream at once; requests wait for one.
 * - `max_response_header_size`: the longest response head (default 64 KiB).
 * - `read_buffer_size`: bytes read from an upstream connection at a time (default 32 KiB).
 *
 * @module
 */
import { Decoder } from "../../../config/decode.ts";
import { type Duration, durationMs } from "../../../config/duration.ts";
import { keepAliveUnavailable } from "../../../listeners/keepalive.ts";
import type { DialOptions } from "./h1conn.ts";
import type { PoolLimits } from "./h1client.ts";
import type { NameServer } from "./dial.ts";
import { parseIP } from "../../../net/ip.ts";

/** `resolver`: the DNS servers asked for upstream names. */
export type UpstreamResolverConfig = {
  /** `[udp/]ip[:port]` (port 53 by default); the system's resolver when empty. */
  addresses?: string[];
};

/** `keep_alive`: how upstream connections are kept for later requests. */
export type KeepAliveConfig = {
  /** False: a connection per request (default true). */
  enabled?: boolean;
  /** TCP keep-alive probes on upstream connections, in whole seconds (Linux, needs FFI). */
  probe_interval?: Duration;
  /** Idle connections kept over all upstreams (0: no limit). */
  max_idle_conns?: number;
  /** Idle connections kept per upstream (default 32). */
  max_idle_conns_per_host?: number;
  /** How long an idle connection is kept (default 2m; 0 or less: no limit). */
  idle_timeout?: Duration;
};

/** The connection fields of the `http` transport (Caddy's `HTTPTransport`, in part). */
export type ConnectionFieldsConfig = {
  /** DNS servers for upstream names (A and AAAA), in order, instead of the system's. */
  resolver?: UpstreamResolverConfig;
  /** Happy eyeballs between the address families (0: 300ms; negative: one at a time). */
  dial_fallback_delay?: Duration;
  /** Keeping connections for later requests (enabled by default). */
  keep_alive?: KeepAliveConfig;
  /** Connections to one upstream at once; further requests wait for one (0: no limit). */
  max_conns_per_host?: number;
  /** The longest response head (default 64 KiB). */
  max_response_header_size?: number;
  /** Bytes read from an upstream connection at a time (default 32 KiB). */
  read_buffer_size?: number;
};

function count(d: Decoder, key: string, max = Number.MAX_SAFE_INTEGER): number | undefined {
  const v = d.number(key);
  if (v === undefined) return undefined;
  if (!Number.isInteger(v) || v < 0 || v > max) {
    d.failAt(key, `must be a whole number from 0 to ${max}`);
  }
  return v;
}

/**
 * A resolver address: `[udp/]ip[:port]`, or why it is not one.
 *
 * @example
 * ```ts
 * import { nameServer } from "./transport_connections.ts";
 * nameServer("udp/127.0.0.1:5353"); // { ipAddr: "127.0.0.1", port: 5353 }
 * ```
 */
export function nameServer(s: string): NameServer | string {
  let rest = s.trim();
  const slash = rest.indexOf("/");
  if (slash >= 0) {
    const network = rest.slice(0, slash).toLowerCase();
    if (network !== "udp" && network !== "udp4" && network !== "udp6") {
      return `${JSON.stringify(s)}: only udp DNS servers can be asked (Deno's resolver)`;
    }
    rest = rest.slice(slash + 1);
  }
  let host = rest;
  let port = 53;
  const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(rest) ?? /^([^:]+)(?::(\d+))?$/.exec(rest);
  if (m) {
    host = m[1];
    if (m[2] !== undefined) port = Number(m[2]);
  }
  if (parseIP(host) === null || port < 1 || port > 65535) {
    return `${JSON.stringify(s)} is not an IP address with an optional port`;
  }
  return { ipAddr: host, port };
}

/**
 * Checks the connection fields of a transport (`d` at the transport) and returns them.
 *
 * @example
 * ```ts
 * import { Decoder } from "../../../config/decode.ts";
 * import { checkConnectionFields } from "./transport_connections.ts";
 * checkConnectionFields(new Decoder({ max_conns_per_host: 4 }, "transport")).max_conns_per_host; // 4
 * ```
 */
export function checkConnectionFields(d: Decoder): ConnectionFieldsConfig {
  const out: ConnectionFieldsConfig = {};
  const resolver = d.object("resolver");
  if (resolver) {
    resolver.fields(["addresses"]);
    const list = resolver.strings("addresses");
    for (const a of list ?? []) {
      const ns = nameServer(a);
      if (typeof ns === "string") resolver.failAt("addresses", ns);
    }
    out.resolver = list ? { addresses: list } : {};
  }
  if (d.duration("dial_fallback_delay") !== undefined) {
    out.dial_fallback_delay = d.value("dial_fallback_delay") as Duration;
  }
  const ka = d.object("keep_alive");
  if (ka) {
    ka.fields([
      "enabled",
      "probe_interval",
      "max_idle_conns",
      "max_idle_conns_per_host",
      "idle_timeout",
    ]);
    const k: KeepAliveConfig = {};
    const enabled = ka.bool("enabled");
    if (enabled !== undefined) k.enabled = enabled;
    const maxIdle = count(ka, "max_idle_conns");
    if (maxIdle !== undefined) k.max_idle_conns = maxIdle;
    const perHost = count(ka, "max_idle_conns_per_host");
    if (perHost !== undefined) k.max_idle_conns_per_host = perHost;
    if (ka.duration("idle_timeout") !== undefined) {
      k.idle_timeout = ka.value("idle_timeout") as Duration;
    }
    const probe = ka.duration("probe_interval");
    if (probe !== undefined) {
      if (probe > 0 && probe < 1000) {
        ka.failAt("probe_interval", "TCP keep-alive times are whole seconds (at least 1s)");
      }
      k.probe_interval = ka.value("probe_interval") as Duration;
    }
    out.keep_alive = k;
  }
  const conns = count(d, "max_conns_per_host");
  if (conns !== undefined) out.max_conns_per_host = conns;
  const head = count(d, "max_response_header_size", 64 << 20);
  if (head !== undefined) out.max_response_header_size = head;
  const readBuf = count(d, "read_buffer_size", 64 << 20);
  if (readBuf !== undefined) out.read_buffer_size = readBuf;
  return out;
}

/**
 * The dialing and pooling settings of a decoded transport (`where` names it in the refusal
 * of keep-alive probes where they cannot be set).
 *
 * @example
 * ```ts
 * import { connectionOptions } from "./transport_connections.ts";
 * const { pool } = connectionOptions({ max_conns_per_host: 4 }, "transport");
 * pool.maxConnsPerHost; // 4
 * ```
 */
export function connectionOptions(
  c: ConnectionFieldsConfig,
  where: string,
): { dial: Omit<DialOptions, "localAddress">; pool: PoolLimits } {
  const dial: Omit<DialOptions, "localAddress"> = {};
  const pool: PoolLimits = {};
  const list = c.resolver?.addresses ?? [];
  if (list.length) dial.resolvers = list.map((a) => nameServer(a) as NameServer);
  if (c.dial_fallback_delay !== undefined) {
    const fallback = durationMs(c.dial_fallback_delay);
    dial.fallbackDelayMs = fallback === 0 ? 300 : fallback;
  }
  const ka = c.keep_alive;
  if (ka) {
    pool.keepAlive = ka.enabled ?? true;
    pool.maxIdle = ka.max_idle_conns;
    if (ka.max_idle_conns_per_host) pool.maxIdlePerHost = ka.max_idle_conns_per_host;
    if (ka.idle_timeout !== undefined) {
      const idle = durationMs(ka.idle_timeout);
      pool.idleTimeoutMs = idle < 0 ? 0 : idle;
    }
    const probe = ka.probe_interval === undefined ? 0 : durationMs(ka.probe_interval);
    if (probe > 0) {
      const why = keepAliveUnavailable();
      if (why) new Decoder(ka, `${where}.keep_alive`).failAt("probe_interval", why);
      dial.probeIntervalS = Math.round(probe / 1000);
    }
  }
  if (c.max_conns_per_host) pool.maxConnsPerHost = c.max_conns_per_host;
  if (c.max_response_header_size) pool.maxHeadBytes = c.max_response_header_size;
  if (c.read_buffer_size) dial.readBufferSize = c.read_buffer_size;
  return { dial, pool };
}
