/**
 * A server's connection fields, decoded once: timeouts, `max_header_bytes`, TCP keep-alive,
 * `protocols` / `listen_protocols`, `listener_wrappers`, `strict_sni_host`, `allow_0rtt`,
 * `enable_full_duplex`. Each is honoured or refused here, never accepted and ignored:
 *
 * - Timeouts, `max_header_bytes` up to 64 KiB and listener wrappers on cleartext listeners run
 *   on the `deno` engine, which accepts each connection itself and holds it to them (see
 *   `listeners/deno/limits.ts` and `listeners/deno/plain.ts`). What it cannot see needs the
 *   `node` listener engine, chosen automatically (`listener_engine: "deno"` with one of them
 *   is refused by name): `max_header_bytes` above 64 KiB (Deno's parser refuses longer heads),
 *   listener wrappers and `strict_sni_host` on TLS servers (they need the bytes before the
 *   handshake and the client's SNI, which Deno's TLS server keeps to itself), and a server
 *   whose routes use the `push` handler and that can speak HTTP/2 (`Deno.serve` cannot push);
 *   without HTTP/2 there is nothing to push on, and the handler passes requests through on
 *   either engine, as Caddy's does on HTTP/1.1.
 * - `keepalive_*` set the listening socket's TCP keep-alive (both engines).
 * - `protocols`: `h1`; `h2` over TLS (offered by ALPN, both engines); `h2c` on plain
 *   listeners (prior knowledge, both engines; also where `h1` and `h2` are, as Caddy since
 *   v2.10.1: see {@linkcode cleartextHttp2}); `h2` or `h2c` without `h1` (as Caddy since
 *   v2.10.1: ALPN offers `h2` alone, a connection that does not start HTTP/2 is closed; on the
 *   node engine, chosen automatically; `h2` alone on a plain listener serves nothing there, as
 *   in Caddy: the listener is left out with a warning); `h3` on TLS servers: a
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
import { DENO_MAX_HEAD_BYTES } from "../listeners/deno/limits.ts";
import type { Decoder, Raw } from "../config/decode.ts";

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
  /** What needs the node listener engine, by field name (and why). */
  needsNode: string[];
  /** The routes use the `push` handler on a server that can speak HTTP/2. */
  pushes: boolean;
  /**
   * The routes may take a connection over (a `reverse_proxy` handler relays WebSockets and
   * other upgrades): its deno-engine TLS listeners serve with Deno's listener-wide server.
   */
  upgrades: boolean;
}

const KNOWN_PROTOCOLS = ["h1", "h2", "h2c", "h3"];

/** True when a `name` handler appears anywhere in `v` (routes, subroutes, named routes). */
function usesHandler(v: unknown, name: string, depth = 0): boolean {
  if (depth > 64 || v === null || typeof v !== "object") return false;
  if (Array.isArray(v)) return v.some((x) => usesHandler(x, name, depth + 1));
  const o = v as Raw;
  if (o.handler === name) return true;
  return Object.values(o).some((x) => usesHandler(x, name, depth + 1));
}

const ROUTE_FIELDS = ["routes", "errors", "named_routes"];

/** A timeout field in ms: undefined when unset or 0 (Caddy's default), 0 for "none" (negative). */
function timeout(d: Decoder, key: string): number | undefined {
  const ms = d.duration(key);
  if (ms === undefined || ms === 0) return undefined;
  return ms < 0 ? 0 : ms;
}

function keepAlive(d: Decoder): TcpKeepAlive | undefined {
  const interval = d.duration("keepalive_interval");
  const idle = d.duration("keepalive_idle");
  const count = d.number("keepalive_count");
  if (interval === undefined && idle === undefined && count === undefined) return undefined;
  if (count !== undefined && !Number.isInteger(count)) {
    d.failAt("keepalive_count", "must be an integer");
  }
  const why = keepAliveUnavailable();
  if (why) d.failAt("keepalive_*", why);
  if (interval !== undefined && interval < 0) return { enabled: false };
  const seconds = (ms: number | undefined, key: string) => {
    if (ms === undefined || ms <= 0) return undefined;
    if (ms < 1000) d.failAt(key, "TCP keep-alive times are whole seconds (at least 1s)");
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

/** The protocols of `list`, the value of the field `key` of `d`. */
function protocolList(d: Decoder, key: string, list: string[]): ListenerProtocols {
  for (const p of list) {
    if (!KNOWN_PROTOCOLS.includes(p)) {
      d.failAt(key, `unknown protocol ${JSON.stringify(p)} (h1, h2, h2c or h3)`);
    }
  }
  const has = (p: string) => list.includes(p);
  // h2 or h2c without h1: served since Caddy v2.10.1 (caddyserver/caddy#6961; 2.6.2 refused it)
  return { h1: has("h1"), h2: has("h2"), h2c: has("h2c"), h3: has("h3") };
}

/**
 * Whether a cleartext listener answers HTTP/2 with prior knowledge (h2c): where `h2c` is
 * listed, and where `h1` and `h2` both are (the default h1 h2 h3), as current Caddy does (since
 * v2.10.1, caddyserver/caddy#6961: Go's server gets unencrypted HTTP/2 whenever h2 or h2c is
 * on, and `http2Listener` looks for the preface only when h1 or HTTP/2 is off; caddytest
 * proxyprotocol_test.go speaks h2c to a server of the default protocols). Caddy 2.6.2 needed
 * `h2c` listed.
 *
 * @example
 * ```ts
 * import { cleartextHttp2 } from "./server_options.ts";
 * cleartextHttp2({ h1: true, h2: true, h2c: false, h3: true }); // true
 * cleartextHttp2({ h1: true, h2: false, h2c: false, h3: false }); // false
 * ```
 */
export function cleartextHttp2(p: ListenerProtocols): boolean {
  return p.h2c || (p.h1 && p.h2);
}

/** Loads `listener_wrappers`: the wrappers that run before TLS (Caddy's order rules). */
async function wrappers(
  d: Decoder,
  ctx: ProvisionContext,
  tls: boolean,
): Promise<ListenerWrapper[]> {
  const list = d.array("listener_wrappers") ?? [];
  const out: ListenerWrapper[] = [];
  let marker = -1;
  for (let i = 0; i < list.length; i++) {
    const w = await ctx.loadModule<ListenerWrapper>("caddy.listeners", "wrapper", list[i]);
    if (w.name === "tls") {
      if (i === 0) {
        d.failAt(
          "listener_wrappers",
          "it is unnecessary to specify the TLS listener wrapper in the first position because that is the default",
        );
      }
      if (marker >= 0) {
        d.failAt("listener_wrappers", "TLS listener wrapper can only be specified once");
      }
      marker = i;
      continue;
    }
    if (tls && (marker >= 0 || !list.some((x) => (x as Raw)?.wrapper === "tls"))) {
      // Caddy runs wrappers after the `tls` marker (or all of them, without one) on the
      // decrypted stream; the ones here read what comes before the TLS handshake.
      d.failAt(
        `listener_wrappers[${i}]`,
        `${w.name} would run after TLS here, where no PROXY header or plain HTTP request can ` +
          `arrive; list it before {"wrapper": "tls"}`,
      );
    }
    out.push(w);
  }
  return out;
}

/**
 * Decodes a server's connection fields from its decoder `d` (at `http.servers.<name>`).
 * `listenCount` is the number of `listen` entries, `tls` whether the server terminates TLS,
 * `clientAuth` whether a connection policy authenticates clients (then `strict_sni_host`
 * defaults to on, as in Caddy).
 *
 * @example
 * ```ts ignore
 * const d = new Decoder(raw, "http.servers.srv0");
 * const o = await parseServerOptions(d, ctx, { listenCount: 1, tls: false });
 * o.needsNode; // ["max_header_bytes above 65536"] when max_header_bytes is 1 MiB
 * ```
 */
export async function parseServerOptions(
  d: Decoder,
  ctx: ProvisionContext,
  o: { listenCount: number; tls: boolean; clientAuth?: boolean },
): Promise<ServerOptions> {
  const needsNode: string[] = [];
  for (const old of ["experimental_http3", "allow_h2c"]) {
    if (d.value(old) !== undefined) {
      d.failAt(old, "a field of Caddy before 2.6; list the versions in protocols");
    }
  }
  const read = timeout(d, "read_timeout") ?? 0;
  const readHeader = timeout(d, "read_header_timeout") ?? 0;
  const write = timeout(d, "write_timeout") ?? 0;
  const idleRaw = timeout(d, "idle_timeout");
  const maxHeader = d.number("max_header_bytes");
  if (maxHeader !== undefined) {
    if (!Number.isInteger(maxHeader)) d.failAt("max_header_bytes", "must be an integer");
    // Deno's HTTP/1.1 parser refuses longer heads itself
    if (maxHeader > DENO_MAX_HEAD_BYTES) {
      needsNode.push(`max_header_bytes above ${DENO_MAX_HEAD_BYTES}`);
    }
  }
  const wrapperList = await wrappers(d, ctx, o.tls);
  if (wrapperList.length && o.tls) needsNode.push("listener_wrappers on a TLS server");
  // As Caddy: TLS client authentication turns strict_sni_host on unless the config sets it
  // (a client could otherwise pass a benign SNI and then name a protected host).
  const strictGiven = d.bool("strict_sni_host");
  const strict = strictGiven ?? (o.clientAuth === true);
  if (strictGiven === true && o.tls) needsNode.push("strict_sni_host on a TLS server");
  if (d.bool("allow_0rtt") === true) {
    d.failAt(
      "allow_0rtt",
      "the HTTP/3 listener serves no request before the TLS handshake completed (no 0-RTT early data); remove it or set false",
    );
  }
  // Both engines let a handler read the request body while its response streams.
  d.bool("enable_full_duplex");

  const given = d.strings("protocols");
  const base = protocolList(d, "protocols", given ?? ["h1", "h2", "h3"]);
  const perListen = d.array("listen_protocols");
  if (perListen && perListen.length !== o.listenCount) {
    d.failAt(
      "listen_protocols",
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
        d.failAt(`listen_protocols[${i}]`, "must be an array of strings");
      }
      p = protocolList(d, `listen_protocols[${i}]`, own as string[]);
      anyGiven = true;
    }
    if (!p.h1 && !p.h2c && !p.h2 && !(p.h3 && o.tls)) {
      d.failAt(
        own ? `listen_protocols[${i}]` : "protocols",
        o.tls
          ? "no protocol this server can serve (add h1, h2 or h3)"
          : "no protocol this server can serve over TCP (add h1 or h2c)",
      );
    }
    protocols.push(p);
  }
  // without h1, connections that do not start HTTP/2 are closed: the node engine's listener
  // sees the connection, Deno.serve does not
  if (protocols.some((p) => !p.h1 && (p.h2c || (o.tls && p.h2)))) {
    needsNode.push("protocols without h1");
  }
  const http2 = protocols.some((p) => o.tls ? p.h2 : cleartextHttp2(p));
  const pushes = http2 && ROUTE_FIELDS.some((k) => usesHandler(d.value(k), "push"));
  const upgrades = ROUTE_FIELDS.some((k) => usesHandler(d.value(k), "reverse_proxy"));
  return {
    readTimeoutMs: read,
    readHeaderTimeoutMs: readHeader,
    writeTimeoutMs: write,
    idleTimeoutMs: idleRaw ?? DEFAULT_CONNECTION_OPTIONS.idleTimeoutMs,
    maxHeaderBytes: maxHeader && maxHeader > 0
      ? maxHeader
      : DEFAULT_CONNECTION_OPTIONS.maxHeaderBytes,
    keepalive: keepAlive(d),
    wrappers: wrapperList,
    protocols,
    protocolsGiven: anyGiven,
    strictSniHost: strict,
    needsNode,
    pushes,
    upgrades,
  };
}

/** What else asks a server for the node listener engine (see {@linkcode chooseEngine}). */
export interface EngineNeeds {
  /** A TLS connection policy authenticates clients. */
  clientAuth: boolean;
  /**
   * A listen address is an inherited socket (`fd/N`): the deno engine serves it unless the
   * server terminates TLS there or has listener wrappers.
   */
  inheritedFd: boolean;
  /** The server terminates TLS. */
  tls?: boolean;
  /**
   * Where a loaded certificate the server may serve is X.509 v1 (`tls.certificates.load_files[0]`):
   * rustls, under `Deno.serve`, refuses v1 certificates (`UnsupportedCertVersion`); node:tls
   * (OpenSSL) serves them, as Go's crypto/tls does for Caddy.
   */
  v1Certificate?: string;
}

/**
 * The listener engine of a server (decoder `d`): `listener_engine` when given, else `node`
 * when a field (`o.needsNode`), TLS client authentication, an `fd/` listen address with TLS
 * or wrappers, HTTP/2 server push or an X.509 v1 certificate needs it; refuses `deno` with
 * any of them.
 *
 * @example
 * ```ts ignore
 * chooseEngine(d, options, { clientAuth: false, inheritedFd: false }); // "deno"
 * ```
 */
export function chooseEngine(d: Decoder, o: ServerOptions, needs: EngineNeeds): "deno" | "node" {
  const explicit = d.string("listener_engine");
  const { clientAuth, v1Certificate } = needs;
  const inheritedFd = needs.inheritedFd && (needs.tls === true || o.wrappers.length > 0);
  if (explicit !== undefined && explicit !== "deno" && explicit !== "node") {
    d.failAt("listener_engine", `must be "deno" or "node", got ${JSON.stringify(explicit)}`);
  }
  if (explicit === "deno" && clientAuth) {
    d.failAt(
      "listener_engine",
      `"deno" cannot ask clients for certificates (Deno.serve has no client certificate ` +
        `authentication); leave listener_engine unset or set "node" for ` +
        `tls_connection_policies with client_authentication`,
    );
  }
  if (explicit === "deno" && o.needsNode.length) {
    d.failAt(
      "listener_engine",
      `"deno" (Deno's HTTP server) cannot serve ${o.needsNode.join(", ")}; leave ` +
        `listener_engine unset or set "node"`,
    );
  }
  if (explicit === "deno" && inheritedFd) {
    d.failAt(
      "listener_engine",
      `"deno" cannot run TLS or listener wrappers on an inherited socket (fd/ listen ` +
        `addresses); leave listener_engine unset or set "node"`,
    );
  }
  if (explicit === "deno" && o.pushes) {
    d.failAt(
      "listener_engine",
      `"deno" (Deno.serve) cannot push (HTTP/2 server push, which the push handler in the ` +
        `routes does); leave listener_engine unset or set "node"`,
    );
  }
  if (explicit === "deno" && v1Certificate) {
    d.failAt(
      "listener_engine",
      `"deno" (Deno.serve, rustls) cannot serve X.509 v1 certificates (UnsupportedCertVersion), ` +
        `which ${v1Certificate} is; leave listener_engine unset or set "node", or load a v3 ` +
        `certificate`,
    );
  }
  const needed = clientAuth || inheritedFd || o.pushes || o.needsNode.length > 0 ||
    v1Certificate !== undefined;
  return (explicit ?? (needed ? "node" : "deno")) as "deno" | "node";
}
