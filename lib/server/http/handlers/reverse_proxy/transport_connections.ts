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
import {
  checkFields,
  optBool,
  optDuration,
  optNumber,
  optObject,
  optStrings,
  type Raw,
} from "../../config.ts";
import { ConfigError } from "../../../config/error.ts";
import { keepAliveUnavailable } from "../../../listeners/keepalive.ts";
import type { DialOptions } from "./h1conn.ts";
import type { PoolLimits } from "./h1client.ts";
import type { NameServer } from "./dial.ts";
import { parseIP } from "../../../net/ip.ts";

function bad(where: string, msg: string): never {
  throw new ConfigError("invalid_config", `${where}: ${msg}`);
}

function count(
  raw: Raw,
  key: string,
  where: string,
  max = Number.MAX_SAFE_INTEGER,
): number | undefined {
  const v = optNumber(raw, key, where);
  if (v === undefined) return undefined;
  if (!Number.isInteger(v) || v < 0 || v > max) {
    bad(`${where}.${key}`, `must be a whole number from 0 to ${max}`);
  }
  return v;
}

/** A resolver address: `[udp/]ip[:port]`. */
export function parseNameServer(s: string, where: string): NameServer {
  let rest = s.trim();
  const slash = rest.indexOf("/");
  if (slash >= 0) {
    const network = rest.slice(0, slash).toLowerCase();
    if (network !== "udp" && network !== "udp4" && network !== "udp6") {
      bad(where, `${JSON.stringify(s)}: only udp DNS servers can be asked (Deno's resolver)`);
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
    bad(where, `${JSON.stringify(s)} is not an IP address with an optional port`);
  }
  return { ipAddr: host, port };
}

/**
 * Decodes the connection fields of a transport.
 *
 * @example
 * ```ts
 * import { parseConnectionFields } from "./transport_connections.ts";
 * const { dial, pool } = parseConnectionFields({ max_conns_per_host: 4 }, "transport");
 * pool.maxConnsPerHost; // 4
 * ```
 */
export function parseConnectionFields(
  raw: Raw,
  where: string,
): { dial: Omit<DialOptions, "localAddress">; pool: PoolLimits } {
  const dial: Omit<DialOptions, "localAddress"> = {};
  const pool: PoolLimits = {};
  const resolver = optObject(raw, "resolver", where);
  if (resolver) {
    checkFields(resolver, ["addresses"], `${where}.resolver`);
    const list = optStrings(resolver, "addresses", `${where}.resolver`) ?? [];
    if (list.length) {
      dial.resolvers = list.map((a) => parseNameServer(a, `${where}.resolver.addresses`));
    }
  }
  const fallback = optDuration(raw, "dial_fallback_delay", where);
  if (fallback !== undefined) dial.fallbackDelayMs = fallback === 0 ? 300 : fallback;
  const ka = optObject(raw, "keep_alive", where);
  if (ka) {
    const w = `${where}.keep_alive`;
    checkFields(ka, [
      "enabled",
      "probe_interval",
      "max_idle_conns",
      "max_idle_conns_per_host",
      "idle_timeout",
    ], w);
    pool.keepAlive = optBool(ka, "enabled", w) ?? true;
    pool.maxIdle = count(ka, "max_idle_conns", w);
    const perHost = count(ka, "max_idle_conns_per_host", w);
    if (perHost) pool.maxIdlePerHost = perHost;
    const idle = optDuration(ka, "idle_timeout", w);
    if (idle !== undefined) pool.idleTimeoutMs = idle < 0 ? 0 : idle;
    const probe = optDuration(ka, "probe_interval", w);
    if (probe !== undefined && probe > 0) {
      if (probe < 1000) {
        bad(`${w}.probe_interval`, "TCP keep-alive times are whole seconds (at least 1s)");
      }
      const why = keepAliveUnavailable();
      if (why) bad(`${w}.probe_interval`, why);
      dial.probeIntervalS = Math.round(probe / 1000);
    }
  }
  const conns = count(raw, "max_conns_per_host", where);
  if (conns) pool.maxConnsPerHost = conns;
  const head = count(raw, "max_response_header_size", where, 64 << 20);
  if (head) pool.maxHeadBytes = head;
  const readBuf = count(raw, "read_buffer_size", where, 64 << 20);
  if (readBuf) dial.readBufferSize = readBuf;
  return { dial, pool };
}
