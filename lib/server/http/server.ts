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
  logHandledRequest,
  parseLogConfig,
  type ServerLogConfig,
  shouldLog,
} from "./access_log.ts";
import {
  asObject,
  checkFields,
  optBool,
  optNumber,
  optObject,
  optString,
  optStrings,
  type Raw,
} from "./config.ts";
import { decodePath, RequestContext, type ServerFacts } from "./context.ts";
import { responseError, toHandlerError } from "./errors.ts";
import { chooseEngine, parseServerOptions, type ServerOptions } from "./server_options.ts";
import { isHttp2, misdirected, sniMatches } from "./request_checks.ts";
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
import { answerHttpChallenge, HTTP_CHALLENGE_PREFIX } from "../tls/acme/challenges.ts";
import { PKI_VALIDATION_PREFIX } from "../tls/zerossl/validation.ts";
import { type PolicyClientAuth, provisionPolicyClientAuth } from "../tls/client_auth/policies.ts";

/** A module of `http.ip_sources`: where trusted proxy ranges come from. */
export interface IPRangeSource extends ModuleInstance {
  /** The current trusted ranges. */
  ranges(): readonly IPRange[];
}

const SERVER_FIELDS = [
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
function strictProxies(raw: Raw, where: string): boolean {
  const v = raw.trusted_proxies_strict;
  if (v === undefined || v === null) return false;
  if (typeof v === "boolean") return v;
  return (optNumber(raw, "trusted_proxies_strict", where) ?? 0) > 0;
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

  private constructor(
    name: string,
    addresses: ListenAddress[],
    chain: Next,
    errorChain: Next | null,
    logs: ServerLogConfig | null,
    ctx: ProvisionContext,
    trusted: IPRangeSource | null,
    clientIPHeaders: string[],
    strict: boolean,
  ) {
    this.name = name;
    this.addresses = addresses;
    this.#chain = chain;
    this.#errorChain = errorChain;
    this.#logs = logs;
    this.#accessLogger = ctx.logger("http.log.access");
    this.#errorLogger = ctx.logger("http.log.error");
    this.#trusted = trusted;
    this.#clientIPHeaders = clientIPHeaders.map((h) => h.toLowerCase());
    this.#strict = strict;
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
    const where = `http.servers.${name}`;
    const raw = asObject(rawConfig, where);
    checkFields(raw, SERVER_FIELDS, where);
    const listen = optStrings(raw, "listen", where) ?? [];
    const listenIndex: number[] = [];
    const addresses = listen.flatMap((a, i) => {
      const expanded = expandListenAddress(a, httpPort);
      for (const _ of expanded) listenIndex.push(i);
      return expanded;
    });
    checkListenAddresses(addresses, listenIndex.map((i) => listen[i]));
    const routes = await provisionRoutes(raw.routes, ctx, `${where}.routes`);
    const named = new Map<string, RouteListCache>();
    for (const [n, r] of Object.entries(optObject(raw, "named_routes", where) ?? {})) {
      const list = await provisionRoutes([r], ctx, `${where}.named_routes.${n}`);
      if (metrics) instrumentRoutes(list, [r], name, metrics);
      named.set(n, new RouteListCache(list));
    }
    if (metrics) instrumentRoutes(routes, raw.routes as unknown[], name, metrics);
    const errors = optObject(raw, "errors", where);
    let errorChain: Next | null = null;
    if (errors) {
      checkFields(errors, ["routes"], `${where}.errors`);
      const errRoutes = await provisionRoutes(errors.routes, ctx, `${where}.errors.routes`);
      if (errRoutes.length) errorChain = compileRoutes(errRoutes, emptyHandler);
    }
    const logsRaw = optObject(raw, "logs", where);
    const logs = logsRaw ? parseLogConfig(logsRaw as Raw, `${where}.logs`) : null;
    const trustedRaw = optObject(raw, "trusted_proxies", where);
    const trusted = trustedRaw
      ? await ctx.loadModule<IPRangeSource>("http.ip_sources", "source", trustedRaw)
      : null;
    const policies =
      raw.tls_connection_policies === undefined || raw.tls_connection_policies === null
        ? null
        : parseConnectionPolicies(raw.tls_connection_policies, `${where}.tls_connection_policies`);
    const server = new HttpServer(
      name,
      addresses,
      compileRoutes(routes, emptyHandler),
      errorChain,
      logs,
      ctx,
      trusted,
      optStrings(raw, "client_ip_headers", where) ?? ["X-Forwarded-For"],
      strictProxies(raw, where),
    );
    const clientAuth = policies
      ? await provisionPolicyClientAuth(policies, `${where}.tls_connection_policies`, ctx)
      : null;
    const tls = policies !== null;
    const options = await parseServerOptions(raw, where, ctx, {
      listenCount: listen.length,
      tls,
      clientAuth: clientAuth !== null,
    });
    server.options = options;
    server.listenIndex = listenIndex;
    // client authentication and inherited sockets run on the node engine, chosen automatically
    server.engine = chooseEngine(
      optString(raw, "listener_engine", where),
      options,
      where,
      tls,
      clientAuth !== null,
      addresses.some((a) => a.network === "fd"),
    );
    server.clientAuth = clientAuth;
    server.trustedUnix = optBool(raw, "trusted_proxies_unix", where) ?? false;
    server.aliases = HeaderAliasFilter.parse(raw, where, ctx.logger("http"));
    server.namedRoutes = named;
    server.tlsPolicies = policies;
    if (policies) server.hostNames = routeHostNames(raw.routes);
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

  /** The listener at `address` must refuse HTTP/2 requests (its protocols lack h2 / h2c). */
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
    if (
      this.#noHttp2.size !== 0 && !info.http3 && isHttp2(request, info) &&
      this.#noHttp2.has(info.localAddress)
    ) {
      return new Response("505 HTTP Version Not Supported: HTTP/2 is not enabled here\n", {
        status: 505,
      });
    }
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
    const loggers = accessLoggers(cfg, this.#accessLogger, c);
    // A taken-over connection answered with what `accept` sent, not with the placeholder.
    const sent = c.info.upgrade?.sent;
    const logged = sent ? { status: sent.status, headers: new Headers(sent.headers) } : res;
    const emit = (size: number) =>
      logHandledRequest(
        loggers,
        c,
        logged,
        size,
        performance.now() - c.start,
        cfg.shouldLogCredentials,
      );
    if (res.body === null || c.method === "HEAD" || sent) {
      emit(0);
      return res;
    }
    let size = 0;
    let done = false;
    const finish = () => {
      if (!done) {
        done = true;
        emit(size);
      }
    };
    const counted = res.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, ctl) {
          size += chunk.byteLength;
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
  try {
    if (!h.has("server") && c.serverHeader) h.set("server", "Gatehouse");
  } catch {
    res = new Response(res.body, { status: res.status, statusText: res.statusText, headers: h });
    h = res.headers;
    if (!h.has("server") && c.serverHeader) h.set("server", "Gatehouse");
  }
  const pre = c.respHeaders;
  if (pre !== null) {
    const present = new Set<string>();
    for (const [k] of h) present.add(k);
    for (const [k, v] of pre) {
      if (k === "set-cookie") h.append(k, v);
      else if (!present.has(k)) h.set(k, v);
    }
  }
  return res;
}
