/**
 * One server of the `http` app: its listen addresses, compiled routes and error routes, the
 * client-IP rules (trusted proxies) and the access log. `handle` is what the listener calls
 * for each request; it builds the request context, runs the route chain, hands thrown
 * HandlerErrors to the `errors` routes, and finishes the response (headers set before the
 * response existed, `Server` header, access log).
 *
 * @module
 */
import type { ProvisionContext } from "../module/mod.ts";
import type { ListenerHandle, ServeInfo } from "../module/listener.ts";
import type { Logger, ModuleInstance } from "../module/instance.ts";
import {
  accessLoggers,
  type HandledRequest,
  logHandledRequest,
  parseLogConfig,
  type ServerLogConfig,
  shouldLog,
} from "./access_log.ts";
import { Decoder, type Raw } from "../config/decode.ts";
import { decodePath, RequestContext, type ServerFacts } from "./context.ts";
import { responseError, toHandlerError } from "./errors.ts";
import { chooseEngine, parseServerOptions, type ServerOptions } from "./server_options.ts";
import { isHttp2, misdirected, refusedStream, sniMatches } from "./request_checks.ts";
import { HeaderAliasFilter } from "./header_aliases.ts";
import { checkListenAddresses, expandListenAddress, type ListenAddress } from "./listen_address.ts";
import type { Next } from "./handler.ts";
import { ipInRanges, type IPRange, parseIP } from "../net/ip.ts";
import {
  compileRoutes,
  emptyHandler,
  provisionRoutes,
  type Route,
  RouteListCache,
} from "./routes.ts";
import type { HttpInstrumentation } from "./instrumentation.ts";
import { durationPlaceholderUsed } from "./replacer.ts";
import { type ConnectionPolicy, parseConnectionPolicies, routeHostNames } from "../tls/policies.ts";
import { fillTlsState } from "../tls/connection.ts";
import type { TlsApp } from "../tls/app.ts";
import { answerHttpChallenge, HTTP_CHALLENGE_PREFIX } from "../tls/acme/challenges.ts";
import { PKI_VALIDATION_PREFIX } from "../tls/zerossl/validation.ts";
import { type PolicyClientAuth, provisionPolicyClientAuth } from "../tls/client_auth/policies.ts";

/** A module of `http.ip_sources`: where trusted proxy ranges come from. */
export interface IPRangeSource extends ModuleInstance {
  /** The current trusted ranges. */
  ranges(): readonly IPRange[];
}

/**
 * One server of `apps.http.servers` (Caddy's `caddyhttp.Server`, `modules/caddyhttp/server.go`).
 * Durations are nanoseconds or duration strings; see `server_options.ts` for the connection
 * fields and the engine each needs.
 */
export type HttpServerConfig = {
  /** Listen addresses (`:443`, `127.0.0.1:8000-8003`, `unix//run/sock`, `fd/3`). */
  listen?: string[];
  /** Listener wrappers (`caddy.listeners.*`), in order; `{"wrapper": "tls"}` marks where TLS goes. */
  listener_wrappers?: Raw[];
  /** Most time to read a whole request, body included. */
  read_timeout?: number | string;
  /** Most time to read a request's header. */
  read_header_timeout?: number | string;
  /** Most time to write a response. */
  write_timeout?: number | string;
  /** Most time a kept-alive connection waits for its next request (5 minutes). */
  idle_timeout?: number | string;
  /** TCP keep-alive probe interval (negative: keep-alive off). */
  keepalive_interval?: number | string;
  /** TCP keep-alive idle time before the first probe. */
  keepalive_idle?: number | string;
  /** TCP keep-alive probes before the connection is dropped. */
  keepalive_count?: number;
  /** Most bytes of a request's header (1 MiB). */
  max_header_bytes?: number;
  /** Read a request's body while its response streams (both engines always do). */
  enable_full_duplex?: boolean;
  /** Request header names with `_` that are kept (others are dropped before the routes). */
  expected_underscore_headers?: string[];
  /** Request header names with `.` that are kept (others are dropped before the routes). */
  expected_dot_headers?: string[];
  /** The protocols of each listen address, instead of `protocols`. */
  listen_protocols?: (string[] | null)[];
  /** 0-RTT early data (HTTP/3): refused when true. */
  allow_0rtt?: boolean;
  /** The routes. */
  routes?: Raw[];
  /** The routes that answer a request whose handling failed. */
  errors?: { routes?: Raw[] };
  /** TLS connection policies (the server terminates TLS when present). */
  tls_connection_policies?: Raw[];
  /** Automatic HTTPS (see `autohttps.ts`). */
  automatic_https?: Raw;
  /** A TLS request's Host must be its SNI name (on by default with client authentication). */
  strict_sni_host?: boolean;
  /** Where trusted proxies' ranges come from (`http.ip_sources.*`, by `source`). */
  trusted_proxies?: Raw;
  /** Read the client IP from the right of the header list (an integer above 0, or true). */
  trusted_proxies_strict?: number | boolean;
  /** Peers on unix sockets are trusted proxies. */
  trusted_proxies_unix?: boolean;
  /** Headers a trusted proxy names the client in (`X-Forwarded-For`). */
  client_ip_headers?: string[];
  /** The access log (see `access_log.ts`). */
  logs?: Raw;
  /** The HTTP versions served: `h1`, `h2`, `h2c`, `h3` (`h1`, `h2`). */
  protocols?: string[];
  /** Caddy before 2.6: refused with a pointer to `protocols`. */
  experimental_http3?: unknown;
  /** Caddy before 2.6: refused with a pointer to `protocols`. */
  allow_h2c?: unknown;
  /** Request metrics of this server (the app's `metrics` applies too). */
  metrics?: Raw;
  /** Routes that `invoke` runs by name. */
  named_routes?: Record<string, Raw>;
  /** Ours: the listener engine, `deno` or `node` (chosen from the fields when unset). */
  listener_engine?: string;
};

/** The fields of {@linkcode HttpServerConfig}. */
export const SERVER_FIELDS: readonly (keyof HttpServerConfig)[] = [
  "listen",
  "listener_wrappers",
  "read_timeout",
  "read_header_timeout",
  "write_timeout",
  "idle_timeout",
  "keepalive_interval",
  "keepalive_idle",
  "keepalive_count",
  "max_header_bytes",
  "enable_full_duplex",
  "expected_underscore_headers",
  "expected_dot_headers",
  "listen_protocols",
  "allow_0rtt",
  "routes",
  "errors",
  "tls_connection_policies",
  "automatic_https",
  "strict_sni_host",
  "trusted_proxies",
  "trusted_proxies_strict",
  "trusted_proxies_unix",
  "client_ip_headers",
  "logs",
  "protocols",
  "experimental_http3",
  "allow_h2c",
  "metrics",
  "named_routes",
  "listener_engine",
];

/** `trusted_proxies_strict`: Caddy's integer (greater than zero enables), or a boolean. */
/**
 * Where the tls app loaded an X.509 v1 certificate (`tls.certificates.load_pem[0]`), if it
 * did: a TLS server that may serve it needs the node engine (see `chooseEngine`).
 */
async function v1Certificate(ctx: ProvisionContext): Promise<string | undefined> {
  const app = await ctx.app<TlsApp>("tls");
  return app?.certificates.find((c) => c.version === 1)?.source;
}

function strictProxies(d: Decoder): boolean {
  const v = d.value("trusted_proxies_strict");
  if (v === undefined || v === null) return false;
  if (typeof v === "boolean") return v;
  return (d.number("trusted_proxies_strict") ?? 0) > 0;
}

/** What a server is made of, decoded and provisioned by {@linkcode HttpServer.create}. */
interface ServerParts {
  name: string;
  addresses: ListenAddress[];
  /** The compiled routes. */
  chain: Next;
  /** The compiled error routes; null without any. */
  errorChain: Next | null;
  logs: ServerLogConfig | null;
  ctx: ProvisionContext;
  trusted: IPRangeSource | null;
  clientIPHeaders: string[];
  /** `trusted_proxies_strict`. */
  strict: boolean;
}

/** A provisioned server. */
export class HttpServer implements ServerFacts {
  /** Name in `apps.http.servers`. */
  readonly name: string;
  /** Expanded listen addresses. */
  readonly addresses: ListenAddress[];
  /** Listener handles once started. */
  listeners: ListenerHandle[] = [];
  /** Decoded `tls_connection_policies`; null when the server serves plain HTTP. */
  tlsPolicies: ConnectionPolicy[] | null = null;
  /** Host names of the routes' `host` matchers (to choose the TLS certificate). */
  hostNames: string[] = [];
  /**
   * `listener_engine`: `deno` (default, `Deno.serve`: HTTP/1.1 and HTTP/2) or `node`
   * (`node:http`: HTTP/1.1, raw upgrades for every protocol, TLS session details).
   */
  engine: "deno" | "node" = "deno";
  /** Connection fields: timeouts, keep-alive, wrappers, protocols per `listen` entry. */
  options!: ServerOptions;
  /** Index into `options.protocols` of each expanded address. */
  listenIndex: number[] = [];
  /** Local addresses of listeners that must not answer HTTP/2 (h2 or h2c not enabled). */
  #noHttp2 = new Set<string>();
  /** The policies' client authentication; null when no policy authenticates clients. */
  clientAuth: PolicyClientAuth | null = null;
  /** `named_routes`: routes that `invoke` runs by name. */
  namedRoutes: Map<string, RouteListCache> = new Map();
  #chain: Next;
  #errorChain: Next | null;
  #logs: ServerLogConfig | null;
  #accessLogger: Logger;
  #errorLogger: Logger;
  #trusted: IPRangeSource | null;
  #clientIPHeaders: string[];
  #strict: boolean;
  /** When the server stops (ms since the epoch), while it waits out `shutdown_delay`. */
  shutdownAt?: number;
  /** `trusted_proxies_unix`: unix socket peers are trusted proxies. */
  trustedUnix = false;
  /**
   * Request fields dropped before any route sees them (when the request's headers are first
   * read): names with `_` or `.`, which CGI-style backends fold onto hyphenated ones
   * (`expected_underscore_headers`, `expected_dot_headers` keep some).
   */
  aliases!: HeaderAliasFilter;
  /** Whether request start times are recorded (access log or duration placeholders). */
  get timed(): boolean {
    return this.#logs !== null || durationPlaceholderUsed();
  }
  /** The listener callback. */
  readonly handle: (request: Request, info: ServeInfo) => Response | Promise<Response>;

  private constructor(p: ServerParts) {
    this.name = p.name;
    this.addresses = p.addresses;
    this.#chain = p.chain;
    this.#errorChain = p.errorChain;
    this.#logs = p.logs;
    this.#accessLogger = p.ctx.logger("http.log.access");
    this.#errorLogger = p.ctx.logger("http.log.error");
    this.#trusted = p.trusted;
    this.#clientIPHeaders = p.clientIPHeaders.map((h) => h.toLowerCase());
    this.#strict = p.strict;
    this.handle = (request, info) => this.#serve(request, info);
  }

  /** Decodes and provisions one server config. */
  static async create(
    name: string,
    rawConfig: unknown,
    ctx: ProvisionContext,
    httpPort: number,
    metrics?: HttpInstrumentation,
  ): Promise<HttpServer> {
    const d = Decoder.of(rawConfig, `http.servers.${name}`).fields(SERVER_FIELDS);
    const listen = d.strings("listen") ?? [];
    const listenIndex: number[] = [];
    const addresses = listen.flatMap((a, i) => {
      const expanded = expandListenAddress(a, httpPort);
      for (const _ of expanded) listenIndex.push(i);
      return expanded;
    });
    checkListenAddresses(addresses, listenIndex.map((i) => listen[i]));
    const routes = await provisionRoutes(d.value("routes"), ctx, d.at("routes"));
    const named = new Map<string, RouteListCache>();
    for (const [n, r] of Object.entries(d.rawObject("named_routes") ?? {})) {
      const list = await provisionRoutes([r], ctx, `${d.at("named_routes")}.${n}`);
      if (metrics) instrumentRoutes(list, [r], name, metrics);
      named.set(n, new RouteListCache(list));
    }
    if (metrics) instrumentRoutes(routes, d.value("routes") as unknown[], name, metrics);
    const errors = d.object("errors");
    let errorChain: Next | null = null;
    if (errors) {
      errors.fields(["routes"]);
      const errRoutes = await provisionRoutes(errors.value("routes"), ctx, errors.at("routes"));
      if (errRoutes.length) errorChain = compileRoutes(errRoutes, emptyHandler);
    }
    const logsD = d.object("logs");
    const logs = logsD ? parseLogConfig(logsD) : null;
    const trustedRaw = d.rawObject("trusted_proxies");
    const trusted = trustedRaw
      ? await ctx.loadModule<IPRangeSource>("http.ip_sources", "source", trustedRaw)
      : null;
    const policies = d.has("tls_connection_policies")
      ? parseConnectionPolicies(d.value("tls_connection_policies"), d.at("tls_connection_policies"))
      : null;
    const server = new HttpServer({
      name,
      addresses,
      chain: compileRoutes(routes, emptyHandler),
      errorChain,
      logs,
      ctx,
      trusted,
      clientIPHeaders: d.strings("client_ip_headers") ?? ["X-Forwarded-For"],
      strict: strictProxies(d),
    });
    const clientAuth = policies
      ? await provisionPolicyClientAuth(policies, d.at("tls_connection_policies"), ctx)
      : null;
    const tls = policies !== null;
    const options = await parseServerOptions(d, ctx, {
      listenCount: listen.length,
      tls,
      clientAuth: clientAuth !== null,
    });
    server.options = options;
    server.listenIndex = listenIndex;
    // client authentication, TLS details, push and X.509 v1 certificates run on the node
    // engine, chosen automatically
    server.engine = chooseEngine(d, options, {
      clientAuth: clientAuth !== null,
      inheritedFd: addresses.some((a) => a.network === "fd"),
      tls,
      v1Certificate: tls ? await v1Certificate(ctx) : undefined,
    });
    server.clientAuth = clientAuth;
    server.trustedUnix = d.bool("trusted_proxies_unix") ?? false;
    server.aliases = HeaderAliasFilter.parse(d, ctx.logger("http"));
    server.namedRoutes = named;
    server.tlsPolicies = policies;
    if (policies) server.hostNames = routeHostNames(d.value("routes"));
    return server;
  }

  /** True when the peer is a trusted proxy (`trusted_proxies`, `trusted_proxies_unix`). */
  trustsPeer(c: RequestContext): boolean {
    if (c.info.remoteAddr.transport === "unix") return this.trustedUnix;
    if (!this.#trusted) return false;
    const ip = parseIP(c.remoteHost);
    return ip !== null && ipInRanges(ip, this.#trusted.ranges());
  }

  /** The client IP: the peer, or the forwarded address when the peer is a trusted proxy. */
  clientIP(c: RequestContext): string {
    const remote = c.remoteHost;
    if (!this.trustsPeer(c)) return remote;
    const ranges = this.#trusted?.ranges() ?? [];
    for (const h of this.#clientIPHeaders) {
      const v = c.request.headers.get(h);
      if (!v) continue;
      const list = v.split(",").map((s) => s.trim()).filter(Boolean);
      if (this.#strict) {
        for (let i = list.length - 1; i >= 0; i--) {
          const p = parseIP(list[i]);
          if (p === null) break;
          if (!ipInRanges(p, ranges)) return list[i];
        }
        continue;
      }
      const first = list[0];
      if (first && parseIP(first) !== null) return first.replace(/^\[|\]$/g, "");
    }
    return remote;
  }

  /**
   * The listener at `address` must not answer HTTP/2 requests (its protocols lack h2 / h2c;
   * `Deno.serve` speaks both): each such request's stream is reset unanswered.
   */
  refuseHttp2(address: string): void {
    this.#noHttp2.add(address);
  }

  /** HTTP/3 listeners of this server: advertised on its other answers (`Alt-Svc`). */
  #http3: ListenerHandle[] = [];

  /** Adds an HTTP/3 listener of this server. */
  addHttp3(handle: ListenerHandle): void {
    this.#http3.push(handle);
  }

  /**
   * The `Alt-Svc` of an answer to `host` over HTTP/1.1 or HTTP/2 (Caddy's: every HTTP/3 port
   * of the server, `ma` 30 days), or null: only the ports whose certificate covers the host.
   */
  #altSvc(host: string): string | null {
    let out: string | null = null;
    let seen = -1;
    for (const h of this.#http3) {
      if (h.port === undefined || h.port === seen || !h.servesHttp3?.(host)) continue;
      const entry = `h3=":${h.port}"; ma=2592000`;
      out = out === null ? entry : `${out},${entry}`;
      seen = h.port;
    }
    return out;
  }

  #serve(request: Request, info: ServeInfo): Response | Promise<Response> {
    // Deno.serve does not say which version a cleartext request came over (h2c has no Host)
    // (unless the listener looked at the connection's first bytes: see ConnectionOptions)
    if (this.engine === "deno" && !info.tls && !info.http3) {
      info.http2 ??= isHttp2(request, info);
    }
    if (
      this.#noHttp2.size !== 0 && !info.http3 && this.#noHttp2.has(info.localAddress) &&
      (info.http2 ?? isHttp2(request, info))
    ) return refusedStream();
    if (info.tls) fillTlsState(request, info);
    const c = new RequestContext(request, info, this);
    const log = this.#logs !== null && shouldLog(this.#logs, c);
    if (!c.settleHost()) {
      return this.#finish(c, new Response("400 Bad Request: invalid host", { status: 400 }), log);
    }
    if (this.#http3.length !== 0 && !info.http3) c.altSvc = this.#altSvc(c.host);
    if (this.options.strictSniHost && info.tls && !sniMatches(c, info)) {
      return this.#fail(c, misdirected(c, info), log);
    }
    if (c.rawPath.indexOf("%") >= 0 && decodePath(c.rawPath) === null) {
      return this.#finish(c, new Response("400 Bad Request", { status: 400 }), log);
    }
    // ACME HTTP-01 challenges (and ZeroSSL's HTTP validations) are answered before any
    // route, as Caddy does.
    if (
      c.rawPath.startsWith(HTTP_CHALLENGE_PREFIX) || c.rawPath.startsWith(PKI_VALIDATION_PREFIX)
    ) return this.#challenge(c, log);
    return this.#route(c, log);
  }

  async #challenge(c: RequestContext, log: boolean): Promise<Response> {
    const res = await answerHttpChallenge(c.request, c.rawPath, c.remoteHost);
    return res ? this.#finish(c, res, log) : await this.#route(c, log);
  }

  #route(c: RequestContext, log: boolean): Response | Promise<Response> {
    let res: Response | Promise<Response>;
    try {
      res = this.#chain(c);
    } catch (e) {
      return this.#fail(c, e, log);
    }
    if (res instanceof Response) {
      const err = responseError(res);
      return err ? this.#fail(c, err, log) : this.#finish(c, res, log);
    }
    return res.then((r) => {
      const err = responseError(r);
      return err ? this.#fail(c, err, log) : this.#finish(c, r, log);
    }, (e) => this.#fail(c, e, log));
  }

  async #fail(c: RequestContext, e: unknown, log: boolean): Promise<Response> {
    const err = toHandlerError(e);
    c.error = err;
    const level = err.status >= 500 ? "ERROR" : "DEBUG";
    const fields = this.#errorLogger.enabled(level) || this.#errorChain !== null
      ? { error: err.message, status: err.status, err_id: err.id, err_trace: err.trace }
      : {};
    if (this.#errorChain) {
      try {
        let res = await this.#errorChain(c);
        const again = responseError(res);
        if (again) res = new Response(null, { status: again.status });
        this.#errorLogger.debug(err.message, fields);
        return this.#finish(c, res, log);
      } catch (e2) {
        this.#errorLogger.error("error handling handler error", {
          error: String((e2 as Error)?.message ?? e2),
          first_error: { msg: err.message, ...fields },
        });
      }
    } else if (err.status >= 500) this.#errorLogger.error(err.message, fields);
    else this.#errorLogger.debug(err.message, fields);
    return this.#finish(c, new Response(null, { status: err.status }), log);
  }

  #finish(c: RequestContext, res: Response, log: boolean): Response {
    // Reading res.headers materialises the header list (several µs); skip it when the
    // handler says its headers are final.
    if (c.respHeaders !== null || !c.headersFinal) res = applyResponseHeaders(c, res);
    if (c.altSvc !== null) res = withAltSvc(res, c.altSvc);
    if (log && !c.skipLog) return this.#logged(c, res);
    return res;
  }

  #logged(c: RequestContext, res: Response): Response {
    const cfg = this.#logs!;
    // A taken-over connection answered with what `accept` sent, not with the placeholder.
    const sent = c.info.upgrade?.sent;
    const record: HandledRequest = {
      loggers: accessLoggers(cfg, this.#accessLogger, c),
      c,
      res: sent ? { status: sent.status, headers: new Headers(sent.headers) } : res,
      size: 0,
      logCredentials: cfg.shouldLogCredentials,
    };
    if (res.body === null || c.method === "HEAD" || sent) {
      logHandledRequest(record);
      return res;
    }
    let done = false;
    const finish = () => {
      if (!done) {
        done = true;
        logHandledRequest(record);
      }
    };
    const counted = res.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, ctl) {
          record.size += chunk.byteLength;
          ctl.enqueue(chunk);
        },
        flush: finish,
        cancel: finish,
      }),
    );
    return new Response(counted, {
      status: res.status,
      statusText: res.statusText,
      headers: res.headers,
    });
  }
}

/** Measures each route as one unit, labelled with its first handler's name (as Caddy). */
function instrumentRoutes(
  routes: Route[],
  raw: unknown[],
  server: string,
  metrics: HttpInstrumentation,
): void {
  routes.forEach((r, i) => {
    const first = (raw[i] as { handle?: { handler?: unknown }[] })?.handle?.[0]?.handler;
    const handler = typeof first === "string" ? first : "";
    r.instrument = (chain) => metrics.instrument(server, handler, chain);
  });
}

/**
 * `res` with `Alt-Svc: value` unless a handler set one (Caddy sets it before the handlers run,
 * so theirs replaces it); a copy when its headers are immutable.
 */
function withAltSvc(res: Response, value: string): Response {
  const h = res.headers;
  if (h.has("alt-svc")) return res;
  try {
    h.set("alt-svc", value);
    return res;
  } catch {
    const copy = new Response(res.body, {
      status: res.status,
      statusText: res.statusText,
      headers: h,
    });
    copy.headers.set("alt-svc", value);
    return copy;
  }
}

/**
 * Merges headers set before the response existed (`c.respHeaders`), runs deferred header
 * operations and adds `Server`. Copies the response when its headers are immutable.
 */
export function applyResponseHeaders(c: RequestContext, res: Response): Response {
  let h = res.headers;
  const pre = c.respHeaders;
  // a `Server` set before the response (`header Server X`) is the one sent, as in Caddy,
  // where it replaces the `Server: Caddy` every response starts with
  const server = c.serverHeader && !pre?.has("server");
  try {
    if (server && !h.has("server")) h.set("server", "Gatehouse");
  } catch {
    res = new Response(res.body, { status: res.status, statusText: res.statusText, headers: h });
    h = res.headers;
    if (server && !h.has("server")) h.set("server", "Gatehouse");
  }
  if (pre !== null) {
    const present = new Set<string>();
    for (const [k] of h) present.add(k);
    for (const [k, v] of pre) {
      if (k === "set-cookie") h.append(k, v);
      else if (!present.has(k)) h.set(k, v);
      // our own default, which a handler's prepared answer may carry, gives way too
      else if (k === "server" && h.get("server") === "Gatehouse") h.set(k, v);
    }
  }
  return res;
}
