/**
 * The `reverse_proxy` handler: settled once from a {@linkcode ReverseProxyConfig} (transport,
 * upstreams and their sources, selection policy, health checks, header operations, buffering,
 * `rewrite` and `handle_response` routes), then each request picks an upstream and makes an
 * attempt, retrying on other upstreams while `try_duration` lasts (or `retries` times), every
 * `try_interval`, for dial failures and requests matched by `retry_match`.
 *
 * An attempt forwards the request's fields (forward.ts: `X-Forwarded-*`, hop-by-hop fields
 * left out, header operations), streams the body both ways (or buffers it: buffers.ts),
 * relays upgraded connections and WebSockets (streams.ts), counts passive-health failures, and
 * hands chosen upstream responses to the `handle_response` routes (handle_response.ts).
 *
 * @module
 */
import type { ProvisionContext } from "../../../module/mod.ts";
import { requestProto } from "../../../module/listener.ts";
import type { Logger } from "../../../module/instance.ts";
import { type Duration, durationMs } from "../../../config/duration.ts";
import { type IPRange, parseRanges } from "../../../net/ip.ts";
import type { ProxyFacts, RequestContext } from "../../context.ts";
import { HandlerError } from "../../errors.ts";
import type { HttpHandler, Next } from "../../handler.ts";
import type { HeaderOps, ResponseMatcher } from "../../header_ops.ts";
import type { Template } from "../../replacer.ts";
import {
  buildResponseHandlers,
  type ResponseHandler,
  selectResponseHandler,
} from "../../response_handlers.ts";
import { bufferLimit, bufferPrefix, joined } from "./buffers.ts";
import type { ReverseProxyConfig } from "./config.ts";
import { type FastCGITransport, provisionFastCGI } from "./fastcgi/mod.ts";
import {
  type Forwarded,
  forwardedFields,
  isWebSocket,
  type Outgoing,
  outgoing,
  proxiedAnswer,
  proxyHeaderOps,
  responseFields,
} from "./forward.ts";
import { handleUpstreamResponse, RoutesFailed, type UpstreamAnswer } from "./handle_response.ts";
import {
  type ActiveChecker,
  type PassiveSettings,
  passiveSettings,
  startActive,
} from "./health.ts";
import { requestPreface } from "./proxy_protocol.ts";
import { provisionRetryMatch, RetriedAnswer, type RetryMatch } from "./retry.ts";
import { CookiePolicy, type SelectionPolicy, selectionPolicy } from "./selection.ts";
import { DEFAULT_STREAM_BUFFER, Streams, switchProtocols } from "./streams.ts";
import {
  clientGone,
  DialError,
  endToEnd,
  relayedUpgrade,
  relayWebSocket,
  UpstreamTimeout,
} from "./transport.ts";
import { type TransportOptions, transportOptions } from "./transport_config.ts";
import { UpstreamClient } from "./upstream_client.ts";
import { type DynamicUpstreams, provisionDynamicUpstreams } from "./upstream_sources/mod.ts";
import {
  dialNetwork,
  type PassiveLimits,
  provisionUpstreams,
  releaseHost,
  splitDial,
  type Upstream,
} from "./upstreams.ts";
import { sleep } from "../../../module/storage.ts";

const WHERE = "http.handlers.reverse_proxy";

function ms(v: Duration | undefined): number | undefined {
  return v === undefined ? undefined : durationMs(v);
}

/**
 * True when the request has no body to send: an HTTP/1 request without `Content-Length` or
 * `Transfer-Encoding`, or any with `Content-Length: 0` (Caddy sends a body of length 0 as
 * none: `req.Body = nil`, golang/go#16036). Such a request goes upstream unframed, with
 * `Content-Length: 0` only for POST, PUT and PATCH (Go's transfer writer), never chunked.
 */
function bodiless(c: RequestContext): boolean {
  const h = c.headers;
  const length = h.get("content-length");
  if (length !== null) return length.trim() === "0";
  return requestProto(c.info) === "HTTP/1.1" && !h.has("transfer-encoding");
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

/** Everything a handler runs on, settled by {@linkcode ReverseProxy.provision}. */
interface Settled {
  transport: TransportOptions;
  client: UpstreamClient;
  fastcgi: FastCGITransport | null;
  dynamic: DynamicUpstreams | null;
  upstreams: Upstream[];
  dialTemplates: Map<Upstream, Template>;
  policy: SelectionPolicy;
  tryDuration: number;
  tryInterval: number;
  retries: number;
  retryMatch: RetryMatch | null;
  passive: PassiveSettings;
  active: ActiveChecker | null;
  trusted: IPRange[];
  reqOps: HeaderOps;
  resOps: HeaderOps;
  resRequire: ResponseMatcher | null;
  requestBuffers: number;
  responseBuffers: number;
  streams: Streams;
  rewrite: HttpHandler | null;
  responseHandlers: ResponseHandler[];
  bodyLogger: Logger;
}

/** A `reverse_proxy` handler (see the module documentation). */
export class ReverseProxy implements HttpHandler {
  readonly #transport: TransportOptions;
  readonly #client: UpstreamClient;
  readonly #fastcgi: FastCGITransport | null;
  readonly #dynamic: DynamicUpstreams | null;
  readonly #upstreams: Upstream[];
  readonly #dialTemplates: Map<Upstream, Template>;
  readonly #policy: SelectionPolicy;
  readonly #tryDuration: number;
  readonly #tryInterval: number;
  readonly #retries: number;
  readonly #retryMatch: RetryMatch | null;
  readonly #passive: PassiveSettings;
  readonly #active: ActiveChecker | null;
  readonly #trusted: IPRange[];
  readonly #reqOps: HeaderOps;
  readonly #resOps: HeaderOps;
  readonly #resRequire: ResponseMatcher | null;
  readonly #requestBuffers: number;
  readonly #responseBuffers: number;
  readonly #streams: Streams;
  readonly #rewrite: HttpHandler | null;
  readonly #responseHandlers: ResponseHandler[];
  readonly #bodyLogger: Logger;
  readonly #failTimers = new Map<ReturnType<typeof setTimeout>, Upstream>();
  /** Whether an upstream is available under the passive limits (made once). */
  readonly #avail: (u: Upstream) => boolean;

  private constructor(s: Settled) {
    this.#transport = s.transport;
    this.#client = s.client;
    this.#fastcgi = s.fastcgi;
    this.#dynamic = s.dynamic;
    this.#upstreams = s.upstreams;
    this.#dialTemplates = s.dialTemplates;
    this.#policy = s.policy;
    this.#tryDuration = s.tryDuration;
    this.#tryInterval = s.tryInterval;
    this.#retries = s.retries;
    this.#retryMatch = s.retryMatch;
    this.#passive = s.passive;
    this.#active = s.active;
    this.#trusted = s.trusted;
    this.#reqOps = s.reqOps;
    this.#resOps = s.resOps;
    this.#resRequire = s.resRequire;
    this.#requestBuffers = s.requestBuffers;
    this.#responseBuffers = s.responseBuffers;
    this.#streams = s.streams;
    this.#rewrite = s.rewrite;
    this.#responseHandlers = s.responseHandlers;
    this.#bodyLogger = s.bodyLogger;
    const limits: PassiveLimits = {
      maxFails: s.passive.failDuration > 0 ? s.passive.maxFails : 0,
      unhealthyRequestCount: s.passive.unhealthyRequestCount,
    };
    this.#avail = (u) => u.available(limits);
  }

  /**
   * Settles a handler from its decoded config: the transport (reading its trust pool), the
   * upstreams (taken from the shared pool), the selection policy, the matchers of
   * `retry_match`, active health checks (started unless only validating), the `rewrite`
   * module and the `handle_response` routes.
   */
  static async provision(c: ReverseProxyConfig, ctx: ProvisionContext): Promise<ReverseProxy> {
    const t = c.transport;
    const fastcgi = t?.protocol === "fastcgi" ? provisionFastCGI(t, ctx) : null;
    const transport = transportOptions(
      t?.protocol === "fastcgi" ? undefined : t,
      `${WHERE}.transport`,
    );
    // The HTTP/1.1 and HTTP/2 clients, chosen per upstream (upstream_client.ts).
    const client = new UpstreamClient(transport);
    const bodyLogger = ctx.logger("http.handlers.reverse_proxy");
    const dynamic = c.dynamic_upstreams
      ? provisionDynamicUpstreams(c.dynamic_upstreams, ctx)
      : null;
    const { upstreams, dialTemplates } = provisionUpstreams(c.upstreams);
    const lb = c.load_balancing ?? {};
    const policy = selectionPolicy(lb.selection_policy);
    if (policy instanceof CookiePolicy) await policy.prepare(upstreams);
    const sp = lb.selection_policy as { weights?: number[] } | undefined;
    const weights = sp?.weights ?? [];
    upstreams.forEach((u, i) => u.weight = weights[i] ?? 1);
    const retryMatch = await provisionRetryMatch(lb.retry_match, ctx, `${WHERE}.retry_match`);
    const passive = passiveSettings(c.health_checks?.passive);
    const logger = ctx.logger("http.handlers.reverse_proxy.health_checker.active");
    const active = startActive(c.health_checks?.active, upstreams.filter((u) => !u.dynamic), {
      tls: transport.tls,
      proxyProtocol: transport.proxyProtocol,
      onChange: (u, healthy) =>
        logger.info(healthy ? "host is up" : "host is down", { host: u.dial }),
      validating: ctx.validating,
    });
    const { reqOps, resOps, resRequire } = proxyHeaderOps(c.headers, `${WHERE}.headers`);
    const rewrite = c.rewrite === undefined
      ? null
      : await ctx.loadModuleByName<HttpHandler>("http.handlers", "rewrite", { ...c.rewrite });
    const responseHandlers = await buildResponseHandlers(c.handle_response, ctx, WHERE);
    return new ReverseProxy({
      transport,
      client,
      fastcgi,
      dynamic,
      upstreams,
      dialTemplates,
      policy,
      tryDuration: ms(lb.try_duration) ?? 0,
      tryInterval: ms(lb.try_interval) ?? 250,
      retries: lb.retries ?? 0,
      retryMatch,
      passive,
      active,
      trusted: parseRanges(c.trusted_proxies ?? []),
      reqOps,
      resOps,
      resRequire,
      requestBuffers: bufferLimit(c.request_buffers, c.buffer_requests, c.max_buffer_size),
      responseBuffers: bufferLimit(c.response_buffers, c.buffer_responses, c.max_buffer_size),
      streams: new Streams({
        timeoutMs: ms(c.stream_timeout) ?? 0,
        closeDelayMs: ms(c.stream_close_delay) ?? 0,
        bufferSize: c.stream_buffer_size || DEFAULT_STREAM_BUFFER,
      }),
      rewrite,
      responseHandlers,
      bodyLogger,
    });
  }

  async serveHTTP(c: RequestContext, next: Next): Promise<Response> {
    const start = performance.now();
    // FastCGI has no protocol switch: an upgrade request goes as a plain one; h2c is never
    // asked for (an HTTP/2 tunnel would carry requests past the routes)
    const fastcgi = this.#fastcgi;
    const upgrade = c.info.upgrade && !fastcgi ? relayedUpgrade(c.headers.get("upgrade")) : null;
    const ws = upgrade === null && !fastcgi && isWebSocket(c);
    const out = outgoing(c, this.#rewrite, ws, upgrade);
    if (this.#requestBuffers !== 0 && out.method !== "GET" && out.method !== "HEAD") {
      await this.#bufferRequest(c);
    }
    let tries = 0;
    let lastErr: HandlerError | null = null;
    while (true) {
      const list = this.#dynamic
        ? await this.#dynamic.upstreams(c, tries > 0, this.#upstreams)
        : this.#upstreams;
      if (this.#dynamic && this.#policy instanceof CookiePolicy) await this.#policy.prepare(list);
      const u = this.#policy.select(list, c, this.#avail);
      if (!u) {
        lastErr ??= new HandlerError(503, "no upstreams available", "reverse_proxy");
        if (!this.#mayRetry(c, start, ++tries, "dial")) throw lastErr;
        await sleep(this.#tryInterval);
        continue;
      }
      try {
        return await this.#attempt(c, next, u, out);
      } catch (e) {
        if (e instanceof RoutesFailed) throw e.error;
        if (e instanceof HandlerError) throw e;
        if (e instanceof RetriedAnswer) {
          // the upstream answered: no failure of its own, and the answer's status at the end
          lastErr = new HandlerError(e.status, e.message, "reverse_proxy");
          if (!this.#mayRetry(c, start, ++tries, "answer")) throw lastErr;
          await sleep(this.#tryInterval);
          continue;
        }
        const dial = e instanceof DialError;
        lastErr = new HandlerError(
          e instanceof UpstreamTimeout ? 504 : 502,
          (e as Error)?.message ?? String(e),
          "reverse_proxy",
        );
        this.#countFailure(u);
        if (!this.#mayRetry(c, start, ++tries, dial ? "dial" : "failure")) throw lastErr;
        await sleep(this.#tryInterval);
      }
    }
  }

  /** Stops health checks, closes streams and idle connections, gives the upstreams back. */
  cleanup(): void {
    this.#active?.stop();
    this.#streams.closeAll();
    for (const [t, u] of this.#failTimers) {
      clearTimeout(t);
      u.host.fails--;
    }
    this.#failTimers.clear();
    this.#client.close();
    this.#dynamic?.cleanup();
    for (const u of this.#upstreams) releaseHost(u.host);
  }

  /** Reads the request body up to `request_buffers` first (the whole of it: with a length). */
  async #bufferRequest(c: RequestContext): Promise<void> {
    const b = c.requestBody();
    if (!b) return;
    const buffered = await bufferPrefix(b, this.#requestBuffers);
    const whole = joined(buffered);
    c.setRequestBody(whole instanceof Uint8Array ? new Response(whole as BodyInit).body : whole);
    if (buffered.rest === null) {
      // the whole body is known: it goes with a Content-Length
      const hs = c.mutableHeaders();
      hs.delete("transfer-encoding");
      hs.set("content-length", String(buffered.bytes.length));
    }
  }

  /**
   * After `tries` failed tries: try again? As Caddy's `LoadBalancing.tryAgain`: only when
   * `try_duration` or `retries` is set, never past either; a dial failure (or no upstream
   * available) always may, and so may an answer `retry_match` sent on (retry.ts); another
   * failure (the upstream may have seen the request) only for a request `retry_match`
   * matches, or, without `retry_match`, for a GET.
   */
  #mayRetry(
    c: RequestContext,
    start: number,
    tries: number,
    kind: "dial" | "answer" | "failure",
  ): boolean {
    if (this.#tryDuration <= 0 && this.#retries <= 0) return false;
    if (this.#tryDuration > 0 && performance.now() - start >= this.#tryDuration) return false;
    if (this.#retries > 0 && tries > this.#retries) return false;
    if (kind !== "failure") return true;
    return this.#retryMatch ? this.#retryMatch.afterFailure(c) : c.method === "GET";
  }

  /** Remembers a failure of `u` for `fail_duration` (passive health checks). */
  #countFailure(u: Upstream): void {
    const failDuration = this.#passive.failDuration;
    if (failDuration <= 0) return;
    u.host.fails++;
    const t = setTimeout(() => {
      this.#failTimers.delete(t);
      u.host.fails--;
    }, failDuration);
    this.#failTimers.set(t, u);
  }

  /** One exchange with upstream `u`. */
  async #attempt(c: RequestContext, next: Next, u: Upstream, out: Outgoing): Promise<Response> {
    const dial = this.#dialTemplates.get(u)?.render(c) ?? u.dial;
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
    const fwd = this.#forwarded(c, out);
    if (out.ws) {
      if (this.#transport.proxy) {
        throw new HandlerError(
          502,
          "WebSocket upgrades through a forward proxy are not supported",
          "reverse_proxy",
        );
      }
      if (this.#transport.proxyProtocol) {
        // the deno engine's WebSocket client dials by itself, with no header before it
        throw new HandlerError(
          502,
          `WebSocket upgrades with proxy_protocol need listener_engine "node" (which relays ` +
            `the upgraded connection through the proxy's own client)`,
          "reverse_proxy",
        );
      }
      const scheme = this.#transport.tls ? "wss" : "ws";
      return await relayWebSocket(
        c.request,
        `${scheme}://${dialNetwork(dial).address}${out.uri}`,
        fwd.fields as Headers,
        (close) => this.#streams.track(close),
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
    const trip = this.#trip(c, out, dial, fwd, release);
    const res = this.#fastcgi
      ? await this.#fastcgi.roundTrip(c, trip)
      : await this.#client.roundTrip(trip);
    const { status, tunnel } = res;
    let resBody = res.body;
    if (status === 205 && resBody !== null) {
      // 205 Reset Content never has content: whatever the upstream framed is dropped.
      if (resBody instanceof ReadableStream) resBody.cancel().catch(() => {});
      resBody = null;
    }
    const resOps = this.#resOps;
    const resRequire = this.#resRequire;
    if (status === 101) {
      facts.latencyMs = performance.now() - started;
      facts.status = 101;
      return switchProtocols(
        c,
        { dial, upgrade: out.upgrade, tunnel, fields: res.headers, streams: this.#streams },
        (h) => {
          if (resOps.size && (resRequire === null || resRequire.match(101, h))) resOps.apply(h, c);
        },
      );
    }
    const latency = facts.latencyMs = performance.now() - started;
    facts.status = status;
    facts.headers = res.headers;
    const passive = this.#passive;
    if (
      passive.unhealthyStatus.some((s) =>
        s === status || (s < 10 && Math.floor(status / 100) === s)
      )
    ) {
      this.#countFailure(u);
    }
    if (passive.unhealthyLatency > 0 && latency >= passive.unhealthyLatency) {
      this.#countFailure(u);
    }
    if (this.#retryMatch?.afterAnswer(c)) {
      if (resBody instanceof ReadableStream) resBody.cancel().catch(() => {});
      throw new RetriedAnswer(status);
    }
    if (this.#responseBuffers !== 0 && resBody instanceof ReadableStream) {
      resBody = joined(await bufferPrefix(resBody, this.#responseBuffers));
    }
    const finalBody = resBody;
    const finalize = (override?: number): Response => {
      const code = override ?? status;
      const via = proxiedAnswer(c, res.proto);
      if (!resOps.size) {
        return new Response(finalBody as BodyInit | null, {
          status: code,
          headers: responseFields(c, res.headers, via),
        });
      }
      const upstream = new Headers(endToEnd(res.headers));
      if (resRequire === null || resRequire.match(code, upstream)) resOps.apply(upstream, c);
      // the operations apply to the upstream's fields, not to the Via added beside them
      const h = new Headers([via]);
      for (const [k, v] of upstream) h.append(k, v);
      return new Response(finalBody as BodyInit | null, { status: code, headers: h });
    };
    const handlers = this.#responseHandlers;
    if (handlers.length) {
      const answer: UpstreamAnswer = {
        status,
        headers: endToEnd(res.headers),
        body: finalBody,
        finalize,
      };
      const chosen = selectResponseHandler(handlers, status, new Headers(answer.headers));
      if (chosen) return await handleUpstreamResponse(c, chosen, answer, next);
    }
    return finalize();
  }

  /**
   * The request's fields as they go upstream: the forwarded ones, with the protocol switch
   * asked for, the header operations applied (on a Headers copy: always for a WebSocket) and
   * a forward proxy's credentials.
   */
  #forwarded(c: RequestContext, out: Outgoing): Forwarded {
    let forwarded = forwardedFields(c, this.#trusted);
    if (out.upgrade !== null) {
      // The connection can be taken over: ask the upstream for the same protocol switch.
      forwarded = {
        fields: [...forwarded.fields, ["connection", "Upgrade"], ["upgrade", out.upgrade]],
        contentLength: forwarded.contentLength,
      };
    }
    let fwd: Forwarded = forwarded;
    if (this.#reqOps.size || out.ws) {
      const h = new Headers(forwarded.fields);
      this.#reqOps.apply(h, c);
      fwd = { fields: h, contentLength: h.has("content-length") };
    }
    const proxy = this.#transport.proxy;
    if (proxy) {
      // through a forward proxy: the request goes to it, the target in absolute form
      const list = [...fwd.fields].filter(([k]) => k !== "proxy-authorization");
      if (proxy.authorization) list.push(["proxy-authorization", proxy.authorization]);
      fwd = { fields: list, contentLength: fwd.contentLength };
    }
    return fwd;
  }

  /** The round trip of one attempt: where it goes, its fields and body, its limits. */
  #trip(c: RequestContext, out: Outgoing, dial: string, fwd: Forwarded, onDone: () => void) {
    const body = out.method === "GET" || out.method === "HEAD" || bodiless(c)
      ? null
      : c.requestBody();
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
    const t = this.#transport;
    const logger = this.#bodyLogger;
    return {
      preface: t.proxyProtocol ? requestPreface(t.proxyProtocol, c, dial) : undefined,
      serverName: t.serverNameTemplate?.render(c),
      dial: t.proxy?.dial ?? dial,
      method: out.method,
      target: t.proxy ? `http://${dial}${out.uri}` : out.uri,
      fields: fwd.fields,
      contentLength: fwd.contentLength,
      body: countedBody,
      dialTimeout: t.dialTimeout,
      headerTimeout: t.responseHeaderTimeout,
      upgrade: out.upgrade !== null,
      clientDone: clientGone(c.request, c.info.completed),
      onDone,
      onBodyError: (e: unknown) =>
        logger.error("aborting with incomplete response", {
          upstream: dial,
          error: (e as Error)?.message ?? String(e),
        }),
    };
  }
}
