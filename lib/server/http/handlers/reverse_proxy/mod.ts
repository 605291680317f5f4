/**
 * `reverse_proxy`: forwards requests to `upstreams` (`dial`, `max_requests`) chosen by
 * `load_balancing.selection_policy`, retrying other upstreams while `try_duration` lasts (or
 * `retries` times), every `try_interval`, for dial failures and requests matched by
 * `retry_match`. Health checks (active and passive) take upstreams out. Sets
 * `X-Forwarded-For/Proto/Host` (trusting incoming ones only from `trusted_proxies`), applies
 * `headers.request`/`headers.response` operations, strips hop-by-hop headers, streams bodies
 * both ways and relays WebSockets. `flush_interval` is accepted: responses always stream.
 *
 * @module
 */
import type { ModuleDefinition, ProvisionContext, Tunnel } from "../../../module.ts";
import {
  asObject,
  checkFields,
  optArray,
  optBool,
  optDuration,
  optNumber,
  optObject,
  optString,
  optStrings,
  type Raw,
} from "../../config.ts";
import type { ProxyFacts, RequestContext } from "../../context.ts";
import { HandlerError, HttpConfigError } from "../../errors.ts";
import type { HttpHandler } from "../../handler.ts";
import { parseHeaderOps, parseResponseMatcher, type ResponseMatcher } from "../../header_ops.ts";
import { ipInRanges, parseIP, parseRanges } from "../../ip.ts";
import { compileTemplate } from "../../replacer.ts";
import { compileMatcherSets, provisionMatcherSets } from "../../routes.ts";
import { parsePassive, startActive } from "./health.ts";
import { CookiePolicy, selectionPolicy } from "./selection.ts";
import {
  connectionNames,
  DialError,
  endToEnd,
  forwardedValue,
  relayWebSocket,
  type TransportOptions,
  UpstreamTimeout,
} from "./transport.ts";
import { releaseHost, Upstream, upstreamsAdminRoute } from "./upstreams.ts";
import { H1Pool } from "./h1client.ts";
import { provisionFastCGI } from "./fastcgi/mod.ts";
import { provisionDynamicUpstreams } from "./upstream_sources/mod.ts";

const registeredAdmin = new WeakSet<ProvisionContext>();

/** A forwarded request's header fields and whether they carry a Content-Length. */
interface Forwarded {
  fields: Iterable<[string, string]>;
  contentLength: boolean;
}

const PROXY_FIELDS = [
  "handler",
  "transport",
  "circuit_breaker",
  "load_balancing",
  "health_checks",
  "upstreams",
  "dynamic_upstreams",
  "flush_interval",
  "trusted_proxies",
  "headers",
  "buffer_requests",
  "buffer_responses",
  "max_buffer_size",
  "request_buffers",
  "response_buffers",
  "stream_timeout",
  "stream_close_delay",
  "handle_response",
  "rewrite",
];

function parseTransport(raw: Raw | undefined, where: string): TransportOptions {
  const t: TransportOptions = {
    tls: false,
    insecure: false,
    dialTimeout: 3000,
    responseHeaderTimeout: 0,
  };
  if (!raw) return t;
  const protocol = optString(raw, "protocol", where) ?? "http";
  if (protocol !== "http") {
    throw new HttpConfigError(
      "invalid_config",
      `${where}: unsupported transport protocol ${protocol}`,
    );
  }
  const tls = optObject(raw, "tls", where);
  if (tls) {
    t.tls = true;
    t.insecure = optBool(tls, "insecure_skip_verify", where) ?? false;
    t.serverName = optString(tls, "server_name", where);
  }
  t.dialTimeout = optDuration(raw, "dial_timeout", where) ?? 3000;
  t.responseHeaderTimeout = optDuration(raw, "response_header_timeout", where) ?? 0;
  return t;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function isWebSocket(c: RequestContext): boolean {
  return (c.headers.get("upgrade") ?? "").toLowerCase() === "websocket" &&
    (c.headers.get("connection") ?? "").toLowerCase().includes("upgrade");
}

/**
 * Relays bytes both ways between a taken-over client connection and an upstream connection
 * until both directions end; an error on either side closes both.
 */
function relay(client: Tunnel, upstream: Tunnel): void {
  const closeBoth = () => {
    client.close();
    upstream.close();
  };
  Promise.all([
    client.readable.pipeTo(upstream.writable),
    upstream.readable.pipeTo(client.writable),
  ]).then(closeBoth, closeBoth);
}

/** Registry entry. */
export const reverseProxyModule: ModuleDefinition<HttpHandler> = {
  id: "http.handlers.reverse_proxy",
  async create(config, ctx) {
    const where = "http.handlers.reverse_proxy";
    checkFields(config, PROXY_FIELDS, where);
    for (const f of ["handle_response", "circuit_breaker", "rewrite"]) {
      if (config[f] !== undefined && config[f] !== null) {
        throw new HttpConfigError("invalid_config", `${where}: "${f}" is not supported`);
      }
    }
    const rawTransport = optObject(config, "transport", where);
    const fastcgi = provisionFastCGI(rawTransport, ctx, `${where}.transport`);
    const transport = parseTransport(fastcgi ? undefined : rawTransport, `${where}.transport`);
    // One strict HTTP/1.1 client for plain and TLS upstreams.
    const h1 = new H1Pool(
      transport.tls ? { insecure: transport.insecure, serverName: transport.serverName } : null,
    );
    const bodyLogger = ctx.logger("http.handlers.reverse_proxy");
    const upstreams: Upstream[] = [];
    for (const u of optArray(config, "upstreams", where) ?? []) {
      const o = asObject(u, `${where}.upstreams`);
      checkFields(o, ["dial", "max_requests", "lookup_srv"], `${where}.upstreams`);
      const dial = compileTemplate(optString(o, "dial", where) ?? "").render(
        {} as RequestContext,
      );
      if (!dial) throw new HttpConfigError("invalid_config", `${where}: upstream needs "dial"`);
      upstreams.push(new Upstream(dial, optNumber(o, "max_requests", where) ?? 0));
    }
    const dynamic = provisionDynamicUpstreams(
      config.dynamic_upstreams,
      ctx,
      `${where}.dynamic_upstreams`,
    );
    if (upstreams.length === 0 && !dynamic) {
      throw new HttpConfigError("invalid_config", `${where}: no upstreams`);
    }
    const lb = optObject(config, "load_balancing", where) ?? {};
    checkFields(
      lb,
      ["selection_policy", "retries", "try_duration", "try_interval", "retry_match"],
      `${where}.load_balancing`,
    );
    const policy = selectionPolicy(optObject(lb, "selection_policy", where));
    if (policy instanceof CookiePolicy) await policy.prepare(upstreams);
    const weights = (optObject(lb, "selection_policy", where)?.weights as number[] | undefined) ??
      [];
    upstreams.forEach((u, i) => u.weight = weights[i] ?? 1);
    const tryDuration = optDuration(lb, "try_duration", where) ?? 0;
    const tryInterval = optDuration(lb, "try_interval", where) ?? 250;
    const retries = optNumber(lb, "retries", where) ?? 0;
    const retryMatch = compileMatcherSets(
      await provisionMatcherSets(lb.retry_match, ctx, `${where}.retry_match`),
    );

    const hc = optObject(config, "health_checks", where) ?? {};
    checkFields(hc, ["active", "passive"], `${where}.health_checks`);
    const passive = parsePassive(optObject(hc, "passive", where), `${where}.health_checks.passive`);
    const limits = {
      maxFails: passive.failDuration > 0 ? passive.maxFails : 0,
      unhealthyRequestCount: passive.unhealthyRequestCount,
    };
    const logger = ctx.logger("http.handlers.reverse_proxy.health_checker.active");
    const active = startActive(
      optObject(hc, "active", where),
      upstreams,
      `${where}.health_checks.active`,
      transport.tls,
      (u, healthy) => logger.info(healthy ? "host is up" : "host is down", { host: u.dial }),
    );
    const failTimers = new Map<ReturnType<typeof setTimeout>, Upstream>();

    const trusted = parseRanges(optStrings(config, "trusted_proxies", where) ?? []);
    const headersCfg = optObject(config, "headers", where) ?? {};
    checkFields(headersCfg, ["request", "response"], `${where}.headers`);
    const reqOps = parseHeaderOps(
      optObject(headersCfg, "request", where),
      `${where}.headers.request`,
    );
    const resRaw = optObject(headersCfg, "response", where);
    let resOps = parseHeaderOps(undefined, "");
    let resRequire: ResponseMatcher | null = null;
    if (resRaw) {
      const { require, deferred: _d, ...ops } = resRaw;
      resOps = parseHeaderOps(ops, `${where}.headers.response`);
      if (require) {
        resRequire = parseResponseMatcher(
          asObject(require, where),
          `${where}.headers.response.require`,
        );
      }
    }
    optDuration(config, "flush_interval", where);

    if (!registeredAdmin.has(ctx)) {
      registeredAdmin.add(ctx);
      ctx.registerAdminRoute(upstreamsAdminRoute);
    }

    const avail = (u: Upstream) => u.available(limits);

    function countFailure(u: Upstream): void {
      if (passive.failDuration <= 0) return;
      u.host.fails++;
      const t = setTimeout(() => {
        failTimers.delete(t);
        u.host.fails--;
      }, passive.failDuration);
      failTimers.set(t, u);
    }

    /**
     * The forwarded request's header fields, straight from the request headers: hop-by-hop
     * ones and those `Connection` names left out, `X-Forwarded-For/Proto/Host` set (kept
     * from a trusted proxy), `Host` the request host. Also whether a Content-Length is among
     * them.
     */
    function forwardedFields(c: RequestContext): Forwarded & { fields: [string, string][] } {
      const hs = c.headers;
      const named = connectionNames(hs.get("connection"));
      const remote = c.remoteHost;
      const ip = trusted.length > 0 ? parseIP(remote) : null;
      const isTrusted = ip !== null && ipInRanges(ip, trusted);
      const fields: [string, string][] = [["host", c.host]];
      let contentLength = false;
      let xff: string | null = null;
      let xfp: string | null = null;
      let xfh: string | null = null;
      for (const pair of hs) {
        const k = pair[0];
        if (k.charCodeAt(0) === 120 /* x */) {
          if (k === "x-forwarded-for") {
            xff = pair[1];
            continue;
          }
          if (k === "x-forwarded-proto") {
            xfp = pair[1];
            continue;
          }
          if (k === "x-forwarded-host") {
            xfh = pair[1];
            continue;
          }
        }
        // Host is the one settled request host (c.host), never a raw field.
        if (k === "host") continue;
        const v = forwardedValue(k, pair[1], named);
        if (v === null) continue;
        if (k === "content-length") contentLength = true;
        fields.push(v === pair[1] ? pair : [k, v]);
      }
      fields.push(["x-forwarded-for", isTrusted && xff ? `${xff}, ${remote}` : remote]);
      fields.push(["x-forwarded-proto", isTrusted && xfp !== null ? xfp : c.scheme]);
      fields.push(["x-forwarded-host", isTrusted && xfh !== null ? xfh : c.host]);
      return { fields, contentLength };
    }

    /** The upstream's end-to-end response fields, plus `Server` when due. */
    function responseFields(c: RequestContext, raw: [string, string][]): [string, string][] {
      const out = endToEnd(raw);
      // With no headers waiting to be merged, the response is complete here.
      if (c.respHeaders === null) {
        if (c.serverHeader && !out.some((f) => f[0] === "server")) {
          out.push(["server", "Gatehouse"]);
        }
        c.headersFinal = true;
      }
      return out;
    }

    function proxyFacts(u: Upstream): ProxyFacts {
      return {
        dial: u.dial,
        host: u.dialHost,
        port: u.dialPort,
        requests: u.host.numRequests,
        maxRequests: u.maxRequests,
        fails: u.host.fails,
        latencyMs: -1,
        status: 0,
      };
    }

    async function attempt(
      c: RequestContext,
      u: Upstream,
      ws: boolean,
      upgrade: string | null,
    ): Promise<Response> {
      const facts = c.proxy = proxyFacts(u);
      // Header operations work on a Headers copy; without them the fields go as they are.
      let forwarded = forwardedFields(c);
      if (upgrade !== null) {
        // The connection can be taken over: ask the upstream for the same protocol switch.
        forwarded = {
          fields: [...forwarded.fields, ["connection", "Upgrade"], ["upgrade", upgrade]],
          contentLength: forwarded.contentLength,
        };
      }
      let fwd: Forwarded = forwarded;
      let h: Headers | null = null;
      if (reqOps.size || ws) {
        h = new Headers(forwarded.fields);
        reqOps.apply(h, c);
        fwd = { fields: h, contentLength: h.has("content-length") };
      }
      const path = c.uri;
      if (ws) {
        const scheme = transport.tls ? "wss" : "ws";
        return await relayWebSocket(c.request, `${scheme}://${u.dial}${path}`, h!);
      }
      u.host.numRequests++;
      let released = false;
      const release = () => {
        if (!released) {
          released = true;
          u.host.numRequests--;
        }
      };
      const started = performance.now();
      const body = c.method === "GET" || c.method === "HEAD" ? null : c.requestBody();
      let countedBody = body;
      if (body) {
        countedBody = body.pipeThrough(
          new TransformStream<Uint8Array, Uint8Array>({
            transform(chunk, ctl) {
              c.bytesRead += chunk.byteLength;
              ctl.enqueue(chunk);
            },
          }),
        );
      }
      const trip = {
        dial: u.dial,
        method: c.method,
        target: path,
        fields: fwd.fields,
        contentLength: fwd.contentLength,
        body: countedBody,
        dialTimeout: transport.dialTimeout,
        headerTimeout: transport.responseHeaderTimeout,
        upgrade: upgrade !== null,
        clientDone: c.info.completed,
        onDone: release,
        onBodyError: (e: unknown) =>
          bodyLogger.error("aborting with incomplete response", {
            upstream: u.dial,
            error: (e as Error)?.message ?? String(e),
          }),
      };
      const res = fastcgi ? await fastcgi.roundTrip(c, trip) : await h1.roundTrip(trip);
      const { status, tunnel } = res;
      let resBody = res.body;
      if (status === 205 && resBody !== null) {
        // 205 Reset Content never has content: whatever the upstream framed is dropped.
        if (resBody instanceof ReadableStream) resBody.cancel().catch(() => {});
        resBody = null;
      }
      if (status === 101) {
        const client = c.info.upgrade;
        if (!tunnel || !client || upgrade === null) {
          tunnel?.close();
          // Deno.serve hands out no raw connection: only WebSocket upgrades relay there.
          throw new HandlerError(
            502,
            `upstream ${u.dial} switched protocols; only WebSocket upgrades can be proxied ` +
              `on this server (listener_engine "node" relays every protocol)`,
            "reverse_proxy",
          );
        }
        facts.latencyMs = performance.now() - started;
        facts.status = 101;
        const h = new Headers(endToEnd(res.headers));
        if (resOps.size && (resRequire === null || resRequire.match(101, h))) resOps.apply(h, c);
        h.set("connection", "Upgrade");
        const switched = res.headers.find((f) => f[0] === "upgrade")?.[1];
        h.set("upgrade", switched ?? upgrade);
        relay(client.accept(101, [...h]), tunnel);
        return new Response(null, { status: 200 }); // not sent: the connection was taken over
      }
      const latency = facts.latencyMs = performance.now() - started;
      facts.status = status;
      if (
        passive.unhealthyStatus.some((s) =>
          s === status || (s < 10 && Math.floor(status / 100) === s)
        )
      ) {
        countFailure(u);
      }
      if (passive.unhealthyLatency > 0 && latency >= passive.unhealthyLatency) countFailure(u);
      if (!resOps.size) {
        return new Response(resBody as BodyInit | null, {
          status,
          headers: responseFields(c, res.headers),
        });
      }
      const out = new Headers(endToEnd(res.headers));
      if (resOps.size && (resRequire === null || resRequire.match(status, out))) {
        resOps.apply(out, c);
      }
      return new Response(resBody as BodyInit | null, { status, headers: out });
    }

    return {
      async serveHTTP(c) {
        const start = performance.now();
        // FastCGI has no protocol switch: an upgrade request goes as a plain one
        const upgrade = c.info.upgrade && !fastcgi ? c.headers.get("upgrade") : null;
        const ws = upgrade === null && !fastcgi && isWebSocket(c);
        let tries = 0;
        let lastErr: HandlerError | null = null;
        const tryAgain = (err: HandlerError, dial: boolean): boolean => {
          tries++;
          const inTime = tryDuration > 0 && performance.now() - start < tryDuration;
          const inCount = retries > 0 && tries <= retries;
          if (!inTime && !inCount) return false;
          if (!dial && !(retryMatch && retryMatch(c))) return false;
          void err;
          return true;
        };
        while (true) {
          const list = dynamic ? await dynamic.upstreams(c, tries > 0, upstreams) : upstreams;
          if (dynamic && policy instanceof CookiePolicy) await policy.prepare(list);
          const u = policy.select(list, c, avail);
          if (!u) {
            lastErr ??= new HandlerError(503, "no upstreams available", "reverse_proxy");
            if (!tryAgain(lastErr, true)) throw lastErr;
            await sleep(tryInterval);
            continue;
          }
          try {
            return await attempt(c, u, ws, upgrade);
          } catch (e) {
            if (e instanceof HandlerError) throw e;
            const dial = e instanceof DialError;
            lastErr = new HandlerError(
              e instanceof UpstreamTimeout ? 504 : 502,
              (e as Error)?.message ?? String(e),
              "reverse_proxy",
            );
            countFailure(u);
            if (!tryAgain(lastErr, dial)) throw lastErr;
            await sleep(tryInterval);
          }
        }
      },
      cleanup() {
        active?.stop();
        for (const [t, u] of failTimers) {
          clearTimeout(t);
          u.host.fails--;
        }
        failTimers.clear();
        h1.close();
        dynamic?.cleanup();
        for (const u of upstreams) releaseHost(u.host);
      },
    };
  },
};
