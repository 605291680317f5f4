/**
 * `reverse_proxy`: forwards requests to `upstreams` (`dial`, `max_requests`; a dial address
 * with request placeholders such as a `map` output is resolved per request) chosen by
 * `load_balancing.selection_policy`, retrying other upstreams while `try_duration` lasts (or
 * `retries` times), every `try_interval`, for dial failures and requests matched by
 * `retry_match`. Health checks (active and passive) take upstreams out. Sets
 * `X-Forwarded-For/Proto/Host` (forward.ts), applies `headers.request`/`headers.response`
 * operations, strips hop-by-hop headers, streams bodies both ways (or buffers them:
 * buffers.ts) and relays upgraded connections (streams.ts). `rewrite` changes the method and
 * URI of the upstream request only; `handle_response` hands chosen upstream responses to
 * routes (handle_response.ts). `flush_interval` is accepted: responses always stream.
 *
 * @module
 */
import type { ModuleDefinition } from "../../../module/mod.ts";
import {
  asObject,
  checkFields,
  optDuration,
  optNumber,
  optObject,
  optStrings,
} from "../../config.ts";
import type { ProxyFacts, RequestContext } from "../../context.ts";
import { HandlerError } from "../../errors.ts";
import { ConfigError } from "../../../config/error.ts";
import type { HttpHandler, Next } from "../../handler.ts";
import { parseRanges } from "../../../net/ip.ts";
import { provisionResponseHandlers, selectResponseHandler } from "../../response_handlers.ts";
import { compileMatcherSets, provisionMatcherSets } from "../../routes.ts";
import { bufferPrefix, joined, parseBufferLimits } from "./buffers.ts";
import {
  type Forwarded,
  forwardedFields,
  isWebSocket,
  parseProxyHeaders,
  responseFields,
  type UpstreamTarget,
  upstreamTarget,
} from "./forward.ts";
import { handleUpstreamResponse, RoutesFailed, type UpstreamAnswer } from "./handle_response.ts";
import { parsePassive, startActive } from "./health.ts";
import { UpstreamClient } from "./upstream_client.ts";
import { provisionFastCGI } from "./fastcgi/mod.ts";
import { provisionDynamicUpstreams } from "./upstream_sources/mod.ts";
import { CookiePolicy, selectionPolicy } from "./selection.ts";
import { parseStreamOptions, Streams, switchProtocols } from "./streams.ts";
import {
  clientGone,
  DialError,
  endToEnd,
  relayedUpgrade,
  relayWebSocket,
  UpstreamTimeout,
} from "./transport.ts";
import { parseTransport } from "./transport_config.ts";
import { parseUpstreams, releaseHost, splitDial, type Upstream } from "./upstreams.ts";

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
  "stream_buffer_size",
  "handle_response",
  "rewrite",
];

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Registry entry. */
export const reverseProxyModule: ModuleDefinition<HttpHandler> = {
  id: "http.handlers.reverse_proxy",
  async create(config, ctx) {
    const where = "http.handlers.reverse_proxy";
    checkFields(config, PROXY_FIELDS, where);
    if (config.circuit_breaker !== undefined && config.circuit_breaker !== null) {
      throw new ConfigError(
        "invalid_config",
        `${where}.circuit_breaker: no circuit breaker module is available (http.reverse_proxy.circuit_breakers.*)`,
      );
    }
    const rawTransport = optObject(config, "transport", where);
    const fastcgi = provisionFastCGI(rawTransport, ctx, `${where}.transport`);
    const transport = parseTransport(fastcgi ? undefined : rawTransport, `${where}.transport`);
    // The HTTP/1.1 and HTTP/2 clients, chosen per upstream (upstream_client.ts).
    const h1 = new UpstreamClient(transport);
    const bodyLogger = ctx.logger("http.handlers.reverse_proxy");
    const dynamic = provisionDynamicUpstreams(
      config.dynamic_upstreams,
      ctx,
      `${where}.dynamic_upstreams`,
    );
    const { upstreams, dialTemplates } = parseUpstreams(config.upstreams, where, dynamic !== null);
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
      upstreams.filter((u) => !u.dynamic),
      {
        where: `${where}.health_checks.active`,
        tls: transport.tls,
        onChange: (u, healthy) =>
          logger.info(healthy ? "host is up" : "host is down", { host: u.dial }),
        validating: ctx.validating,
      },
    );
    const failTimers = new Map<ReturnType<typeof setTimeout>, Upstream>();

    const trusted = parseRanges(optStrings(config, "trusted_proxies", where) ?? []);
    const { reqOps, resOps, resRequire } = parseProxyHeaders(config.headers, `${where}.headers`);
    optDuration(config, "flush_interval", where);
    const { requestBuffers, responseBuffers } = parseBufferLimits(config, where);
    const streams = new Streams(parseStreamOptions(config, where));
    const rewrite = config.rewrite === undefined || config.rewrite === null
      ? null
      : await ctx.loadModuleByName<HttpHandler>("http.handlers", "rewrite", {
        ...asObject(config.rewrite, `${where}.rewrite`),
      });
    const responseHandlers = await provisionResponseHandlers(config.handle_response, ctx, where);

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

    function proxyFacts(u: Upstream, dial: string): ProxyFacts {
      const { host, port } = splitDial(dial);
      return {
        dial,
        host,
        port,
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
      to: UpstreamTarget,
      ws: boolean,
      upgrade: string | null,
      next: Next,
    ): Promise<Response> {
      const dial = dialTemplates.get(u)?.render(c) ?? u.dial;
      if (!dial || dial.includes("{")) {
        throw new HandlerError(
          502,
          `upstream dial address ${JSON.stringify(u.dial)} resolved to ${
            JSON.stringify(dial)
          }, which is not an address`,
          "reverse_proxy",
        );
      }
      const facts = c.proxy = proxyFacts(u, dial);
      // Header operations work on a Headers copy; without them the fields go as they are.
      let forwarded = forwardedFields(c, trusted);
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
      if (transport.proxy) {
        // through a forward proxy: the request goes to it, the target in absolute form
        const list = [...fwd.fields].filter(([k]) => k !== "proxy-authorization");
        if (transport.proxy.authorization) {
          list.push(["proxy-authorization", transport.proxy.authorization]);
        }
        fwd = { fields: list, contentLength: fwd.contentLength };
      }
      if (ws) {
        if (transport.proxy) {
          throw new HandlerError(
            502,
            "WebSocket upgrades through a forward proxy are not supported",
            "reverse_proxy",
          );
        }
        const scheme = transport.tls ? "wss" : "ws";
        return await relayWebSocket(
          c.request,
          `${scheme}://${dial}${to.uri}`,
          h!,
          (close) => streams.track(close),
        );
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
      const body = to.method === "GET" || to.method === "HEAD" ? null : c.requestBody();
      if (body === null && fwd.contentLength) {
        // No body goes upstream (the listener reads and drops a GET's or HEAD's), so no
        // length is declared: a length without its bytes would make the upstream read the
        // next request on the connection as this one's body (request smuggling).
        fwd = {
          fields: [...fwd.fields].filter(([k]) => k !== "content-length"),
          contentLength: false,
        };
      }
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
        dial: transport.proxy?.dial ?? dial,
        method: to.method,
        target: transport.proxy ? `http://${dial}${to.uri}` : to.uri,
        fields: fwd.fields,
        contentLength: fwd.contentLength,
        body: countedBody,
        dialTimeout: transport.dialTimeout,
        headerTimeout: transport.responseHeaderTimeout,
        upgrade: upgrade !== null,
        clientDone: clientGone(c.request, c.info.completed),
        onDone: release,
        onBodyError: (e: unknown) =>
          bodyLogger.error("aborting with incomplete response", {
            upstream: dial,
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
        facts.latencyMs = performance.now() - started;
        facts.status = 101;
        return switchProtocols(c, { dial, upgrade, tunnel, fields: res.headers, streams }, (h) => {
          if (resOps.size && (resRequire === null || resRequire.match(101, h))) resOps.apply(h, c);
        });
      }
      const latency = facts.latencyMs = performance.now() - started;
      facts.status = status;
      facts.headers = res.headers;
      if (
        passive.unhealthyStatus.some((s) =>
          s === status || (s < 10 && Math.floor(status / 100) === s)
        )
      ) {
        countFailure(u);
      }
      if (passive.unhealthyLatency > 0 && latency >= passive.unhealthyLatency) countFailure(u);
      if (responseBuffers !== 0 && resBody instanceof ReadableStream) {
        resBody = joined(await bufferPrefix(resBody, responseBuffers));
      }
      const finalBody = resBody;
      const finalize = (override?: number): Response => {
        const code = override ?? status;
        if (!resOps.size) {
          return new Response(finalBody as BodyInit | null, {
            status: code,
            headers: responseFields(c, res.headers),
          });
        }
        const out = new Headers(endToEnd(res.headers));
        if (resRequire === null || resRequire.match(code, out)) resOps.apply(out, c);
        return new Response(finalBody as BodyInit | null, { status: code, headers: out });
      };
      if (responseHandlers.length) {
        const answer: UpstreamAnswer = {
          status,
          headers: endToEnd(res.headers),
          body: finalBody,
          finalize,
        };
        const chosen = selectResponseHandler(responseHandlers, status, new Headers(answer.headers));
        if (chosen) return await handleUpstreamResponse(c, chosen, answer, next);
      }
      return finalize();
    }

    return {
      async serveHTTP(c, next) {
        const start = performance.now();
        // FastCGI has no protocol switch: an upgrade request goes as a plain one; h2c is never
        // asked for (an HTTP/2 tunnel would carry requests past the routes)
        const upgrade = c.info.upgrade && !fastcgi
          ? relayedUpgrade(c.headers.get("upgrade"))
          : null;
        const ws = upgrade === null && !fastcgi && isWebSocket(c);
        const to = upstreamTarget(c, rewrite);
        if (requestBuffers !== 0 && to.method !== "GET" && to.method !== "HEAD") {
          const b = c.requestBody();
          if (b) {
            const buffered = await bufferPrefix(b, requestBuffers);
            const whole = joined(buffered);
            c.setRequestBody(
              whole instanceof Uint8Array ? new Response(whole as BodyInit).body : whole,
            );
            if (buffered.rest === null) {
              // the whole body is known: it goes with a Content-Length
              const hs = c.mutableHeaders();
              hs.delete("transfer-encoding");
              hs.set("content-length", String(buffered.bytes.length));
            }
          }
        }
        let tries = 0;
        let lastErr: HandlerError | null = null;
        const tryAgain = (dial: boolean): boolean => {
          tries++;
          const inTime = tryDuration > 0 && performance.now() - start < tryDuration;
          const inCount = retries > 0 && tries <= retries;
          if (!inTime && !inCount) return false;
          if (!dial && !(retryMatch && retryMatch(c))) return false;
          return true;
        };
        while (true) {
          const list = dynamic ? await dynamic.upstreams(c, tries > 0, upstreams) : upstreams;
          if (dynamic && policy instanceof CookiePolicy) await policy.prepare(list);
          const u = policy.select(list, c, avail);
          if (!u) {
            lastErr ??= new HandlerError(503, "no upstreams available", "reverse_proxy");
            if (!tryAgain(true)) throw lastErr;
            await sleep(tryInterval);
            continue;
          }
          try {
            return await attempt(c, u, to, ws, upgrade, next);
          } catch (e) {
            if (e instanceof RoutesFailed) throw e.error;
            if (e instanceof HandlerError) throw e;
            const dial = e instanceof DialError;
            lastErr = new HandlerError(
              e instanceof UpstreamTimeout ? 504 : 502,
              (e as Error)?.message ?? String(e),
              "reverse_proxy",
            );
            countFailure(u);
            if (!tryAgain(dial)) throw lastErr;
            await sleep(tryInterval);
          }
        }
      },
      cleanup() {
        active?.stop();
        streams.closeAll();
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
