/**
 * The config of `http.handlers.reverse_proxy`, field by field as Caddy's `Handler`
 * (`modules/caddyhttp/reverseproxy/reverseproxy.go`) with its load balancing, health checks
 * (`healthchecks.go`) and upstreams (`hosts.go`), and its decoder. The transports are
 * `transport_config.ts` (`http`) and `fastcgi/config.ts`, the dynamic upstream sources
 * `upstream_sources/config.ts`. The JSON decoder, the Gatehousefile directives
 * (`reverse_proxy`, `php_fastcgi`, `forward_auth`: `caddyfile*.ts`), the JSON →
 * Gatehousefile writer (`writer.ts`) and `gatehouse reverse-proxy` all make or read this type.
 *
 * @module
 */
import { Decoder, type Raw } from "../../../config/decode.ts";
import type { Duration } from "../../../config/duration.ts";
import { ConfigError } from "../../../config/error.ts";
import type { RequestContext } from "../../context.ts";
import { parseHeaderOps, parseResponseMatcher } from "../../header_ops.ts";
import { goRegExp } from "../../../config/regexp.ts";
import { compileTemplate } from "../../replacer.ts";
import { decodeResponseHandlers, type ResponseHandlerConfig } from "../../response_handlers.ts";
import type { HeaderOps } from "../headers/caddyfile.ts";
import { decodeFastCGITransport, type FastCGITransportConfig } from "./fastcgi/config.ts";
import { decodeHttpTransport, type HttpTransportConfig } from "./transport_config.ts";
import { decodeUpstreamSource, type UpstreamSourceConfig } from "./upstream_sources/config.ts";
import { DIAL_NETWORKS, dialIsDynamic, dialNetwork, type UpstreamConfig } from "./upstreams.ts";

export type { Duration } from "../../../config/duration.ts";
export type { HttpTransportConfig } from "./transport_config.ts";
export type { UpstreamConfig } from "./upstreams.ts";
export type { FastCGITransportConfig } from "./fastcgi/config.ts";
export type { UpstreamSourceConfig } from "./upstream_sources/config.ts";
export type { ResponseHandlerConfig } from "../../response_handlers.ts";
export type { ResponseMatcherConfig } from "../../response_matcher.ts";

/** The selection policies (`http.reverse_proxy.selection_policies.<policy>`). */
export const SELECTION_POLICIES = [
  "random",
  "random_choose",
  "least_conn",
  "round_robin",
  "weighted_round_robin",
  "first",
  "ip_hash",
  "client_ip_hash",
  "uri_hash",
  "query",
  "header",
  "cookie",
] as const;

/** A selection policy: how an available upstream is chosen (`random` when absent). */
export type SelectionPolicyConfig =
  | {
    /** Policies without options. */
    policy?:
      | "random"
      | "least_conn"
      | "round_robin"
      | "first"
      | "ip_hash"
      | "client_ip_hash"
      | "uri_hash";
  }
  | {
    /** Two or more upstreams at random, then the least loaded. */
    policy: "random_choose";
    /** How many are drawn (default 2). */
    choose?: number;
  }
  | {
    /** Round robin, each upstream as often as its weight. */
    policy: "weighted_round_robin";
    /** The weight of each upstream, in the order of `upstreams` (default 1). */
    weights?: number[];
  }
  | {
    /** A hash of a query parameter (random without it). */
    policy: "query";
    /** The parameter. */
    key?: string;
    /** Written by the Gatehousefile; the policy without the parameter is random. */
    fallback?: SelectionPolicyConfig;
  }
  | {
    /** A hash of a request header (random without it). */
    policy: "header";
    /** The header field. */
    field?: string;
    /** Written by the Gatehousefile; the policy without the field is random. */
    fallback?: SelectionPolicyConfig;
  }
  | {
    /** Sticky sessions through a cookie holding an HMAC of the upstream. */
    policy: "cookie";
    /** The cookie's name (default `lb`). */
    name?: string;
    /** The HMAC secret (a plain SHA-256 when empty). */
    secret?: string;
    /** Written by the Gatehousefile; the cookie is a session cookie. */
    max_age?: Duration;
    /** Written by the Gatehousefile; a request without the cookie gets a random upstream. */
    fallback?: SelectionPolicyConfig;
  };

/** `load_balancing`: how upstreams are chosen and requests retried. */
export type LoadBalancingConfig = {
  /** How an available upstream is chosen (default random). */
  selection_policy?: SelectionPolicyConfig;
  /** Retries of a failed attempt on another upstream (0: none, unless `try_duration`). */
  retries?: number;
  /** How long to keep trying upstreams for a request (0: no time-based retries). */
  try_duration?: Duration;
  /** The wait between attempts (default 250ms). */
  try_interval?: Duration;
  /** The requests retried after an upstream answered badly (matcher sets); dial errors always are. */
  retry_match?: Raw[];
};

/** `health_checks.active`: requests of our own to each upstream on a timer. */
export type ActiveHealthChecksConfig = {
  /** Older name of `uri`. */
  path?: string;
  /** The URI requested (path and query); active checks are off without it. */
  uri?: string;
  /** Written by the Gatehousefile (`health_upstream`); refused when loading. */
  upstream?: string;
  /** The port checked (default the upstream's). */
  port?: number;
  /** Header fields of the check request. */
  headers?: Record<string, string[]>;
  /** The method (default GET). */
  method?: string;
  /** The request body. */
  body?: string;
  /** Written by the Gatehousefile (`health_follow_redirects`); refused when loading. */
  follow_redirects?: boolean;
  /** How often (default 30s). */
  interval?: Duration;
  /** How long an answer may take (default 5s). */
  timeout?: Duration;
  /** Checks passed in a row that make an unhealthy upstream healthy (default 1). */
  passes?: number;
  /** Checks failed in a row that make a healthy upstream unhealthy (default 1). */
  fails?: number;
  /** The most body bytes read for `expect_body` (0: all). */
  max_size?: number;
  /** The status expected (one digit: a class); 2xx or 3xx by default. */
  expect_status?: number;
  /** A regular expression the body must match. */
  expect_body?: string;
};

/** `health_checks.passive`: failures of proxied requests, remembered for a while. */
export type PassiveHealthChecksConfig = {
  /** How long a failure is remembered; passive checks are off without it. */
  fail_duration?: Duration;
  /** Failures within `fail_duration` that make an upstream unavailable (default 1). */
  max_fails?: number;
  /** Requests at once that make an upstream unavailable (0: no limit). */
  unhealthy_request_count?: number;
  /** Statuses counted as failures (one digit: a class). */
  unhealthy_status?: number[];
  /** A response slower than this counts as a failure. */
  unhealthy_latency?: Duration;
};

/** `health_checks`. */
export type HealthChecksConfig = {
  /** Active checks (not run on dynamic upstreams). */
  active?: ActiveHealthChecksConfig;
  /** Passive checks (counted per dial address, over every handler). */
  passive?: PassiveHealthChecksConfig;
};

/** `headers`: header operations on the upstream request and on its response. */
export type ProxyHeadersConfig = {
  /** Operations on the request sent upstream. */
  request?: HeaderOps;
  /** Operations on the response, with `require` (a response matcher); always deferred. */
  response?: HeaderOps;
};

/** `http.handlers.reverse_proxy`. */
export type ReverseProxyConfig = {
  /** The module name. */
  handler: "reverse_proxy";
  /** How requests travel (`protocol` names it): the `http` transport by default, or `fastcgi`. */
  transport?: HttpTransportConfig | FastCGITransportConfig;
  /** Refused: no circuit breaker module is available. */
  circuit_breaker?: Raw;
  /** How upstreams are chosen and requests retried. */
  load_balancing?: LoadBalancingConfig;
  /** Active and passive health checks. */
  health_checks?: HealthChecksConfig;
  /** The static upstreams; required unless `dynamic_upstreams`. */
  upstreams?: UpstreamConfig[];
  /** A source of upstreams looked up per attempt (`source` names it: `a`, `srv`, `multi`). */
  dynamic_upstreams?: UpstreamSourceConfig;
  /** Accepted: responses are flushed chunk by chunk as they arrive, within any interval. */
  flush_interval?: Duration;
  /** Peers (IP ranges, `private_ranges`) whose `X-Forwarded-*` fields are kept. */
  trusted_proxies?: string[];
  /** Header operations up and down. */
  headers?: ProxyHeadersConfig;
  /** Older form of `request_buffers`: buffer the whole body (or `max_buffer_size`). */
  buffer_requests?: boolean;
  /** Older form of `response_buffers`. */
  buffer_responses?: boolean;
  /** The limit of `buffer_requests` / `buffer_responses`. */
  max_buffer_size?: number;
  /** Bytes of the request body read before it goes upstream (-1: all). */
  request_buffers?: number;
  /** Bytes of the response body read before it goes to the client (-1: all). */
  response_buffers?: number;
  /** Close upgraded streams this long after they began (0: never). */
  stream_timeout?: Duration;
  /** Keep streams open this long after the config is unloaded (0: close at once). */
  stream_close_delay?: Duration;
  /** The bytes copied at once per direction of a tunnel (default 32 KiB). */
  stream_buffer_size?: number;
  /** Routes or a status for chosen upstream responses. */
  handle_response?: ResponseHandlerConfig[];
  /** The method and URI of the upstream request (the `rewrite` handler's config). */
  rewrite?: Raw;
  /** Written by the Gatehousefile (`verbose_logs`); refused when loading. */
  verbose_logs?: boolean;
};

/** The fields of {@linkcode ReverseProxyConfig} the handler accepts. */
export const PROXY_FIELDS: readonly (keyof ReverseProxyConfig)[] = [
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

const LB_FIELDS: readonly (keyof LoadBalancingConfig)[] = [
  "selection_policy",
  "retries",
  "try_duration",
  "try_interval",
  "retry_match",
];

const ACTIVE_FIELDS: readonly (keyof ActiveHealthChecksConfig)[] = [
  "uri",
  "path",
  "port",
  "headers",
  "method",
  "body",
  "interval",
  "timeout",
  "max_size",
  "expect_status",
  "expect_body",
  "passes",
  "fails",
];

const PASSIVE_FIELDS: readonly (keyof PassiveHealthChecksConfig)[] = [
  "fail_duration",
  "max_fails",
  "unhealthy_request_count",
  "unhealthy_status",
  "unhealthy_latency",
];

/** `d`'s value of `key` as given, when `d.duration(key)` accepts it. */
function duration(d: Decoder, key: string): Duration | undefined {
  return d.duration(key) === undefined ? undefined : d.value(key) as Duration;
}

/**
 * The static upstreams: each `dial` with `env.`/`system.` placeholders resolved must not be
 * empty; none is an error unless `dynamic`.
 */
function decodeUpstreams(d: Decoder, dynamic: boolean): UpstreamConfig[] | undefined {
  const list = d.array("upstreams");
  const out: UpstreamConfig[] = [];
  for (const v of list ?? []) {
    const u = Decoder.of(v, d.at("upstreams")).fields(["dial", "max_requests"]);
    // read at the handler's path, as they always were
    const at = new Decoder(u.raw, d.path);
    const dial = at.string("dial") ?? "";
    const resolved = dialIsDynamic(dial)
      ? dial
      : compileTemplate(dial).render({} as RequestContext);
    if (!resolved) at.fail(`upstream needs "dial"`);
    const { network } = dialNetwork(resolved);
    if (!DIAL_NETWORKS.includes(network)) {
      at.fail(
        `upstream ${JSON.stringify(dial)}: network ${network} is not supported (${
          DIAL_NETWORKS.join(", ")
        })`,
      );
    }
    const up: UpstreamConfig = { dial };
    const max = at.number("max_requests");
    if (max !== undefined) up.max_requests = max;
    out.push(up);
  }
  if (out.length === 0 && !dynamic) d.fail("no upstreams");
  return list ? out : undefined;
}

/**
 * `weighted_round_robin`'s weights: whole numbers, none negative, one at least positive (Caddy's
 * `WeightedRoundRobinSelection.Validate`, with its messages and in its order).
 */
function checkWeights(sp: Raw, where: string): void {
  const d = new Decoder(sp, where);
  const weights = d.value("weights");
  if (weights !== undefined && weights !== null) {
    if (!Array.isArray(weights) || weights.some((w) => !Number.isInteger(w))) {
      d.failAt("weights", "must be an array of whole numbers");
    }
  }
  const list = (weights ?? []) as number[];
  if (list.reduce((a, w) => a + w, 0) <= 0) {
    d.fail("weighted_round_robin requires at least one upstream with a positive weight");
  }
  if (list.some((w) => w < 0)) d.fail("weight of an upstream cannot be negative");
}

function decodeLoadBalancing(d: Decoder): LoadBalancingConfig | undefined {
  const present = d.object("load_balancing");
  const lb = present ?? new Decoder({}, d.at("load_balancing"));
  lb.fields(LB_FIELDS);
  // read at the handler's path, as they always were
  const at = new Decoder(lb.raw, d.path);
  const out: LoadBalancingConfig = {};
  const sp = at.rawObject("selection_policy");
  if (sp) {
    const name = sp.policy ?? "random";
    if (!(SELECTION_POLICIES as readonly unknown[]).includes(name)) {
      throw new ConfigError("invalid_config", `unknown selection policy: ${name}`);
    }
    if (name === "weighted_round_robin") checkWeights(sp, lb.at("selection_policy"));
    out.selection_policy = sp as SelectionPolicyConfig;
  }
  const tryDuration = duration(at, "try_duration");
  if (tryDuration !== undefined) out.try_duration = tryDuration;
  const tryInterval = duration(at, "try_interval");
  if (tryInterval !== undefined) out.try_interval = tryInterval;
  const retries = at.number("retries");
  if (retries !== undefined) out.retries = retries;
  const rm = lb.value("retry_match");
  if (rm !== undefined && rm !== null) {
    if (!Array.isArray(rm)) at.failAt("retry_match", "must be array");
    out.retry_match = rm as Raw[];
  }
  return present ? out : undefined;
}

function decodeActive(a: Decoder): ActiveHealthChecksConfig {
  a.fields(ACTIVE_FIELDS);
  const out: ActiveHealthChecksConfig = {};
  const uri = a.string("uri");
  if (uri !== undefined) out.uri = uri;
  if (!uri) {
    const path = a.string("path");
    if (path !== undefined) out.path = path;
  }
  // without a URI active checks are off, and nothing else is read
  if (!out.uri && !out.path) return out;
  const port = a.number("port");
  if (port !== undefined) out.port = port;
  const headers = a.rawObject("headers");
  if (headers) out.headers = headers as Record<string, string[]>;
  const interval = duration(a, "interval");
  if (interval !== undefined) out.interval = interval;
  const timeout = duration(a, "timeout");
  if (timeout !== undefined) out.timeout = timeout;
  const status = a.number("expect_status");
  if (status !== undefined) out.expect_status = status;
  const body = a.string("expect_body");
  if (body) goRegExp(body);
  if (body !== undefined) out.expect_body = body;
  const maxSize = a.number("max_size");
  if (maxSize !== undefined) out.max_size = maxSize;
  const method = a.string("method");
  const upper = (method || "GET").toUpperCase();
  if (!/^[A-Z0-9!#$%&'*+.^_`|~-]+$/.test(upper)) a.failAt("method", `not a method: ${upper}`);
  if (method !== undefined) out.method = method;
  const reqBody = a.string("body");
  if (reqBody !== undefined) out.body = reqBody;
  const passes = a.number("passes");
  if (passes !== undefined) out.passes = passes;
  const fails = a.number("fails");
  if (fails !== undefined) out.fails = fails;
  return out;
}

function decodePassive(p: Decoder): PassiveHealthChecksConfig {
  p.fields(PASSIVE_FIELDS);
  const out: PassiveHealthChecksConfig = {};
  const failDuration = duration(p, "fail_duration");
  if (failDuration !== undefined) out.fail_duration = failDuration;
  const maxFails = p.number("max_fails");
  if (maxFails !== undefined) out.max_fails = maxFails;
  const count = p.number("unhealthy_request_count");
  if (count !== undefined) out.unhealthy_request_count = count;
  // the statuses are read as given, as they always were
  const status = p.value("unhealthy_status");
  if (status !== undefined && status !== null) out.unhealthy_status = status as number[];
  const latency = duration(p, "unhealthy_latency");
  if (latency !== undefined) out.unhealthy_latency = latency;
  return out;
}

function decodeHealthChecks(d: Decoder): HealthChecksConfig | undefined {
  const present = d.object("health_checks");
  const hc = present ?? new Decoder({}, d.at("health_checks"));
  hc.fields(["active", "passive"]);
  // the two objects are read at the handler's path, as they always were
  const at = new Decoder(hc.raw, d.path);
  const out: HealthChecksConfig = {};
  const passive = at.rawObject("passive");
  if (passive) out.passive = decodePassive(new Decoder(passive, hc.at("passive")));
  const active = at.rawObject("active");
  if (active) out.active = decodeActive(new Decoder(active, hc.at("active")));
  return present ? out : undefined;
}

function decodeHeaders(d: Decoder): ProxyHeadersConfig | undefined {
  const v = d.value("headers");
  const h = Decoder.of(v ?? {}, d.at("headers")).fields(["request", "response"]);
  const out: ProxyHeadersConfig = {};
  const request = h.rawObject("request");
  parseHeaderOps(request, h.at("request"));
  if (request) out.request = request as HeaderOps;
  const response = h.rawObject("response");
  if (response) {
    const { require, deferred: _deferred, ...ops } = response;
    parseHeaderOps(ops, h.at("response"));
    if (require) {
      parseResponseMatcher(Decoder.of(require, h.path).raw, `${h.at("response")}.require`);
    }
    out.response = response as HeaderOps;
  }
  return v === undefined || v === null ? undefined : out;
}

/**
 * Decodes and checks a `reverse_proxy` config: types, known fields, the transport, the
 * upstreams and their sources, load balancing, health checks, header operations, buffering and
 * streams, and the shape of `rewrite` and `handle_response` (whose modules and routes are
 * provisioned with the handler); nothing is read from disk or the network here.
 *
 * @example
 * ```ts
 * import { decodeReverseProxy } from "./config.ts";
 * decodeReverseProxy({ handler: "reverse_proxy", upstreams: [{ dial: "127.0.0.1:8080" }] })
 *   .upstreams; // [{ dial: "127.0.0.1:8080" }]
 * ```
 */
export function decodeReverseProxy(raw: Raw): ReverseProxyConfig {
  const d = new Decoder(raw, "http.handlers.reverse_proxy").fields(PROXY_FIELDS);
  const out: ReverseProxyConfig = { handler: "reverse_proxy" };
  if (d.has("circuit_breaker")) {
    d.failAt(
      "circuit_breaker",
      "no circuit breaker module is available (http.reverse_proxy.circuit_breakers.*)",
    );
  }
  const transport = d.rawObject("transport");
  if (transport) {
    out.transport = transport.protocol === "fastcgi"
      ? decodeFastCGITransport(transport, d.at("transport"))
      : decodeHttpTransport(transport, d.at("transport"));
  }
  if (d.has("dynamic_upstreams")) {
    out.dynamic_upstreams = decodeUpstreamSource(
      d.value("dynamic_upstreams"),
      d.at("dynamic_upstreams"),
    );
  }
  const upstreams = decodeUpstreams(d, out.dynamic_upstreams !== undefined);
  if (upstreams) out.upstreams = upstreams;
  const lb = decodeLoadBalancing(d);
  if (lb) out.load_balancing = lb;
  const hc = decodeHealthChecks(d);
  if (hc) out.health_checks = hc;
  const trusted = d.strings("trusted_proxies");
  d.ipRanges("trusted_proxies");
  if (trusted) out.trusted_proxies = trusted;
  const headers = decodeHeaders(d);
  if (headers) out.headers = headers;
  const flush = duration(d, "flush_interval");
  if (flush !== undefined) out.flush_interval = flush;
  const maxBuffer = d.number("max_buffer_size");
  if (maxBuffer !== undefined) out.max_buffer_size = maxBuffer;
  const requestBuffers = d.number("request_buffers");
  if (requestBuffers !== undefined) out.request_buffers = requestBuffers;
  const bufferRequests = d.bool("buffer_requests");
  if (bufferRequests !== undefined) out.buffer_requests = bufferRequests;
  const responseBuffers = d.number("response_buffers");
  if (responseBuffers !== undefined) out.response_buffers = responseBuffers;
  const bufferResponses = d.bool("buffer_responses");
  if (bufferResponses !== undefined) out.buffer_responses = bufferResponses;
  const streamBuffer = d.number("stream_buffer_size");
  if ((streamBuffer ?? 0) < 0 || !Number.isInteger(streamBuffer ?? 0)) {
    d.failAt("stream_buffer_size", "must be >= 0");
  }
  if (streamBuffer !== undefined) out.stream_buffer_size = streamBuffer;
  const streamTimeout = duration(d, "stream_timeout");
  if (streamTimeout !== undefined) out.stream_timeout = streamTimeout;
  const closeDelay = duration(d, "stream_close_delay");
  if (closeDelay !== undefined) out.stream_close_delay = closeDelay;
  if (d.has("rewrite")) out.rewrite = Decoder.of(d.value("rewrite"), d.at("rewrite")).raw;
  const handleResponse = decodeResponseHandlers(d.value("handle_response"), d.path);
  if (handleResponse) out.handle_response = handleResponse;
  return out;
}
