/**
 * A server's connection fields, decoded once: timeouts, `max_header_bytes`, TCP keep-alive,
 * `protocols` / `listen_protocols`, `listener_wrappers`, `strict_sni_host`, `allow_0rtt`,
 * `enable_full_duplex`. Each is honoured or refused here, never accepted and ignored:
 *
 * - Timeouts, `max_header_bytes`, listener wrappers and (on TLS servers) `strict_sni_host`
 *   need the socket, which `Deno.serve` does not give: a server that sets one runs on the
 *   `node` listener engine, chosen automatically; `listener_engine: "deno"` with one of them is
 *   refused by name. So does a server whose routes use the `push` handler and that can speak
 *   HTTP/2 (`Deno.serve` cannot push); without HTTP/2 there is nothing to push on, and the
 *   handler passes requests through on either engine, as Caddy's does on HTTP/1.1.
 * - `keepalive_*` set the listening socket's TCP keep-alive (both engines).
 * - `protocols`: `h1`; `h2` over TLS (offered by ALPN, both engines); `h2c` on plain
 *   listeners (both engines; prior knowledge only on the node engine); `h3` on TLS servers: a
 *   QUIC listener on the same port (UDP), advertised with `Alt-Svc` (see
 *   `listeners/h3/listener.ts`); on plain servers it has no effect, as in Caddy. The default is
 *   Caddy's, h1 h2 h3. A TLS listener may be h3 alone (no TCP listener then); an `fdgram/`
 *   address serves h3 only, an `fd/` address h1 and h2 only (as Caddy).
 * - `allow_0rtt`: `false` (the default) is what the HTTP/3 listener does; `true` is refused.
 *
 * @module
 */
import type { ProvisionContext } from "../module/mod.ts";
import { DEFAULT_CONNECTION_OPTIONS, type TcpKeepAlive } from "../module/listener.ts";
import type { ListenerWrapper } from "../module/listener.ts";
import { keepAliveUnavailable } from "../listeners/keepalive.ts";
import { optArray, optBool, optDuration, optNumber, optStrings, type Raw } from "./config.ts";
import { ConfigError } from "../config/error.ts";

/** The HTTP versions one listener speaks. */
export interface ListenerProtocols {
  h1: boolean;
  h2: boolean;
  h2c: boolean;
  /** HTTP/3 (TLS servers only). */
  h3: boolean;
}

/** A server's decoded connection fields. */
export interface ServerOptions {
  readTimeoutMs: number;
  readHeaderTimeoutMs: number;
  writeTimeoutMs: number;
  idleTimeoutMs: number;
  maxHeaderBytes: number;
  keepalive?: TcpKeepAlive;
  /** Wrappers before TLS, in order (the `tls` marker removed). */
  wrappers: ListenerWrapper[];
  /** Per entry of `listen` (before port ranges are expanded). */
  protocols: ListenerProtocols[];
  /** Whether `protocols` was given (the default follows the engine). */
  protocolsGiven: boolean;
  /** `strict_sni_host` (applies to TLS connections). */
  strictSniHost: boolean;
  /** Fields that need the node listener engine, by name. */
  needsNode: string[];
  /** The routes use the `push` handler on a server that can speak HTTP/2. */
  pushes: boolean;
}

const KNOWN_PROTOCOLS = ["h1", "h2", "h2c", "h3"];

function bad(where: string, msg: string): never {
  throw new ConfigError("invalid_config", `${where}: ${msg}`);
}

/** True when a `push` handler appears anywhere in `v` (routes, subroutes, named routes). */
function usesPush(v: unknown, depth = 0): boolean {
  if (depth > 64 || v === null || typeof v !== "object") return false;
  if (Array.isArray(v)) return v.some((x) => usesPush(x, depth + 1));
  const o = v as Raw;
  if (o.handler === "push") return true;
  return Object.values(o).some((x) => usesPush(x, depth + 1));
}

/** A timeout field in ms: undefined when unset or 0 (Caddy's default), 0 for "none" (negative). */
function timeout(raw: Raw, key: string, where: string, needsNode: string[]): number | undefined {
  const ms = optDuration(raw, key, where);
  if (ms === undefined || ms === 0) return undefined;
  needsNode.push(key);
  return ms < 0 ? 0 : ms;
}

function keepAlive(raw: Raw, where: string): TcpKeepAlive | undefined {
  const interval = optDuration(raw, "keepalive_interval", where);
  const idle = optDuration(raw, "keepalive_idle", where);
  const count = optNumber(raw, "keepalive_count", where);
  if (interval === undefined && idle === undefined && count === undefined) return undefined;
  if (count !== undefined && !Number.isInteger(count)) {
    bad(`${where}.keepalive_count`, "must be an integer");
  }
  const why = keepAliveUnavailable();
  if (why) bad(`${where}.keepalive_*`, why);
  if (interval !== undefined && interval < 0) return { enabled: false };
  const seconds = (ms: number | undefined, key: string) => {
    if (ms === undefined || ms <= 0) return undefined;
    if (ms < 1000) bad(`${where}.${key}`, "TCP keep-alive times are whole seconds (at least 1s)");
    return Math.round(ms / 1000);
  };
  // Caddy: an unset (zero) interval is 15s and an unset count 9 (Go's defaults); an unset idle
  // is the interval (Caddy 2.6.2 sets both from keepalive_interval), a negative one untouched.
  const intervalS = seconds(interval, "keepalive_interval") ?? 15;
  return {
    enabled: true,
    intervalS,
    idleS: idle !== undefined && idle < 0
      ? undefined
      : seconds(idle, "keepalive_idle") ?? intervalS,
    count: count !== undefined && count < 0 ? undefined : count || 9,
  };
}

function protocolList(list: string[], where: string): ListenerProtocols {
  for (const p of list) {
    if (!KNOWN_PROTOCOLS.includes(p)) {
      bad(where, `unknown protocol ${JSON.stringify(p)} (h1, h2, h2c or h3)`);
    }
  }
  const has = (p: string) => list.includes(p);
  if (!has("h1") && (has("h2") || has("h2c"))) {
    bad(where, "cannot enable HTTP/2 or H2C without enabling HTTP/1.1; add h1 or remove h2/h2c");
  }
  return { h1: has("h1"), h2: has("h2"), h2c: has("h2c"), h3: has("h3") };
}

/** Loads `listener_wrappers`: the wrappers that run before TLS (Caddy's order rules). */
async function wrappers(
  raw: Raw,
  where: string,
  ctx: ProvisionContext,
  tls: boolean,
): Promise<ListenerWrapper[]> {
  const list = optArray(raw, "listener_wrappers", where) ?? [];
  const out: ListenerWrapper[] = [];
  let marker = -1;
  for (let i = 0; i < list.length; i++) {
    const w = await ctx.loadModule<ListenerWrapper>("caddy.listeners", "wrapper", list[i]);
    if (w.name === "tls") {
      if (i === 0) {
        bad(
          `${where}.listener_wrappers`,
          "it is unnecessary to specify the TLS listener wrapper in the first position because that is the default",
        );
      }
      if (marker >= 0) {
        bad(`${where}.listener_wrappers`, "TLS listener wrapper can only be specified once");
      }
      marker = i;
      continue;
    }
    if (tls && (marker >= 0 || !list.some((x) => (x as Raw)?.wrapper === "tls"))) {
      // Caddy runs wrappers after the `tls` marker (or all of them, without one) on the
      // decrypted stream; the ones here read what comes before the TLS handshake.
      bad(
        `${where}.listener_wrappers[${i}]`,
        `${w.name} would run after TLS here, where no PROXY header or plain HTTP request can ` +
          `arrive; list it before {"wrapper": "tls"}`,
      );
    }
    out.push(w);
  }
  return out;
}

/**
 * Decodes a server's connection fields. `listenCount` is the number of `listen` entries, `tls`
 * whether the server terminates TLS, `clientAuth` whether a connection policy authenticates
 * clients (then `strict_sni_host` defaults to on, as in Caddy).
 *
 * @example
 * ```ts ignore
 * const o = await parseServerOptions(raw, "http.servers.srv0", ctx, { listenCount: 1, tls: false });
 * o.needsNode; // ["idle_timeout"] when idle_timeout is set
 * ```
 */
export async function parseServerOptions(
  raw: Raw,
  where: string,
  ctx: ProvisionContext,
  o: { listenCount: number; tls: boolean; clientAuth?: boolean },
): Promise<ServerOptions> {
  const needsNode: string[] = [];
  for (const old of ["experimental_http3", "allow_h2c"]) {
    if (raw[old] !== undefined) {
      bad(`${where}.${old}`, "a field of Caddy before 2.6; list the versions in protocols");
    }
  }
  const read = timeout(raw, "read_timeout", where, needsNode) ?? 0;
  const readHeader = timeout(raw, "read_header_timeout", where, needsNode) ?? 0;
  const write = timeout(raw, "write_timeout", where, needsNode) ?? 0;
  const idleRaw = timeout(raw, "idle_timeout", where, needsNode);
  const maxHeader = optNumber(raw, "max_header_bytes", where);
  if (maxHeader !== undefined) {
    if (!Number.isInteger(maxHeader)) bad(`${where}.max_header_bytes`, "must be an integer");
    if (maxHeader > 0) needsNode.push("max_header_bytes");
  }
  const wrapperList = await wrappers(raw, where, ctx, o.tls);
  if (wrapperList.length) needsNode.push("listener_wrappers");
  // As Caddy: TLS client authentication turns strict_sni_host on unless the config sets it
  // (a client could otherwise pass a benign SNI and then name a protected host).
  const strictGiven = optBool(raw, "strict_sni_host", where);
  const strict = strictGiven ?? (o.clientAuth === true);
  if (strictGiven === true && o.tls) needsNode.push("strict_sni_host");
  if (optBool(raw, "allow_0rtt", where) === true) {
    bad(
      `${where}.allow_0rtt`,
      "the HTTP/3 listener serves no request before the TLS handshake completed (no 0-RTT early data); remove it or set false",
    );
  }
  // Both engines let a handler read the request body while its response streams.
  optBool(raw, "enable_full_duplex", where);

  const given = optStrings(raw, "protocols", where);
  const base = protocolList(given ?? ["h1", "h2", "h3"], `${where}.protocols`);
  const perListen = optArray(raw, "listen_protocols", where);
  if (perListen && perListen.length !== o.listenCount) {
    bad(
      `${where}.listen_protocols`,
      `listener protocols count does not match address count: ${perListen.length} != ${o.listenCount}`,
    );
  }
  const protocols: ListenerProtocols[] = [];
  let anyGiven = given !== undefined;
  for (let i = 0; i < o.listenCount; i++) {
    const own = perListen?.[i];
    let p = base;
    if (own !== undefined && own !== null) {
      if (!Array.isArray(own) || own.some((s) => typeof s !== "string")) {
        bad(`${where}.listen_protocols[${i}]`, "must be an array of strings");
      }
      p = protocolList(own as string[], `${where}.listen_protocols[${i}]`);
      anyGiven = true;
    }
    if (!p.h1 && !(p.h3 && o.tls)) {
      bad(
        own ? `${where}.listen_protocols[${i}]` : `${where}.protocols`,
        o.tls
          ? "no protocol this server can serve (add h1 or h3)"
          : "no protocol this server can serve over TCP (add h1)",
      );
    }
    protocols.push(p);
  }
  const http2 = protocols.some((p) => o.tls ? p.h2 : p.h2c);
  const pushes = http2 && [raw.routes, raw.errors, raw.named_routes].some((r) => usesPush(r));
  return {
    readTimeoutMs: read,
    readHeaderTimeoutMs: readHeader,
    writeTimeoutMs: write,
    idleTimeoutMs: idleRaw ?? DEFAULT_CONNECTION_OPTIONS.idleTimeoutMs,
    maxHeaderBytes: maxHeader && maxHeader > 0
      ? maxHeader
      : DEFAULT_CONNECTION_OPTIONS.maxHeaderBytes,
    keepalive: keepAlive(raw, where),
    wrappers: wrapperList,
    protocols,
    protocolsGiven: anyGiven,
    strictSniHost: strict,
    needsNode,
    pushes,
  };
}

/**
 * The listener engine of a server: `listener_engine` when given, else `node` when a field,
 * TLS client authentication (`clientAuth`), an `fd/` listen address (`inheritedFd`) or HTTP/2
 * server push needs it; refuses `deno` with any of them.
 */
export function chooseEngine(
  explicit: string | undefined,
  o: ServerOptions,
  where: string,
  _tls: boolean,
  clientAuth = false,
  inheritedFd = false,
): "deno" | "node" {
  if (explicit !== undefined && explicit !== "deno" && explicit !== "node") {
    bad(`${where}.listener_engine`, `must be "deno" or "node", got ${JSON.stringify(explicit)}`);
  }
  if (explicit === "deno" && clientAuth) {
    bad(
      `${where}.listener_engine`,
      `"deno" cannot ask clients for certificates (Deno.serve has no client certificate ` +
        `authentication); leave listener_engine unset or set "node" for ` +
        `tls_connection_policies with client_authentication`,
    );
  }
  if (explicit === "deno" && o.needsNode.length) {
    bad(
      `${where}.listener_engine`,
      `"deno" (Deno.serve) gives no access to the connection, which ${o.needsNode.join(", ")} ` +
        `need; leave listener_engine unset or set "node"`,
    );
  }
  if (explicit === "deno" && inheritedFd) {
    bad(
      `${where}.listener_engine`,
      `"deno" (Deno.serve) cannot listen on an inherited socket (fd/ listen addresses); ` +
        `leave listener_engine unset or set "node"`,
    );
  }
  if (explicit === "deno" && o.pushes) {
    bad(
      `${where}.listener_engine`,
      `"deno" (Deno.serve) cannot push (HTTP/2 server push, which the push handler in the ` +
        `routes does); leave listener_engine unset or set "node"`,
    );
  }
  const needs = clientAuth || inheritedFd || o.pushes || o.needsNode.length > 0;
  return (explicit ?? (needs ? "node" : "deno")) as "deno" | "node";
}
