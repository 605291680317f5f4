/**
 * HTTP metrics of the `http` app (`apps.http.metrics`, or a server's `metrics`), named and
 * labelled as Caddy's: each top-level route of a server is measured as one unit, labelled
 * with the server and the route's first handler (`subroute`, `file_server`...), and with the
 * host when `per_host` is on (hosts not named by a host matcher count as `_other` unless
 * `observe_catchall_hosts`, or the request is HTTPS on a server with TLS):
 * `caddy_http_requests_in_flight`, `caddy_http_requests_total`,
 * `caddy_http_request_errors_total` (handler errors), and the histograms
 * `caddy_http_request_duration_seconds` (until the body is sent; a body of known length is
 * counted when its head is ready),
 * `caddy_http_response_duration_seconds` (until the response head), `caddy_http_request_size_bytes`
 * and `caddy_http_response_size_bytes` (labelled also with `code` and `method`).
 *
 * @module
 */
import type { RequestContext } from "../http/context.ts";
import { responseError } from "../http/errors.ts";
import type { Next } from "../http/handler.ts";
import { DEFAULT_BUCKETS, exponentialBuckets, type Labels, registry } from "./registry.ts";

/** The `metrics` object of the http app (or of a server). */
export interface MetricsConfig {
  /** Label series with the request host. */
  perHost: boolean;
  /** With per_host: hosts no host matcher names get their own label too. */
  observeCatchallHosts: boolean;
}

const METHODS = new Set([
  "GET",
  "HEAD",
  "PUT",
  "POST",
  "DELETE",
  "CONNECT",
  "OPTIONS",
  "TRACE",
  "PATCH",
]);

/** Caddy's method label: a standard method, upper case, or `OTHER`. */
export function sanitizeMethod(m: string): string {
  const up = m.toUpperCase();
  return METHODS.has(up) && (m === up || m === m.toLowerCase()) ? up : "OTHER";
}

/** Caddy's code label: 0 is 200. */
export function sanitizeCode(s: number): string {
  return s === 0 ? "200" : String(s);
}

function families(perHost: boolean) {
  const basic = perHost ? ["server", "handler", "host"] : ["server", "handler"];
  const http = perHost
    ? ["server", "handler", "code", "method", "host"]
    : ["server", "handler", "code", "method"];
  const sizes = exponentialBuckets(256, 4, 8);
  return {
    inFlight: registry.gauge(
      "caddy_http_requests_in_flight",
      "Number of requests currently handled by this server.",
      basic,
    ),
    errors: registry.counter(
      "caddy_http_request_errors_total",
      "Number of requests resulting in middleware errors.",
      basic,
    ),
    count: registry.counter(
      "caddy_http_requests_total",
      "Counter of HTTP(S) requests made.",
      basic,
    ),
    duration: registry.histogram(
      "caddy_http_request_duration_seconds",
      "Histogram of round-trip request durations.",
      http,
      DEFAULT_BUCKETS,
    ),
    reqSize: registry.histogram(
      "caddy_http_request_size_bytes",
      "Total size of the request. Includes body",
      http,
      sizes,
    ),
    resSize: registry.histogram(
      "caddy_http_response_size_bytes",
      "Size of the returned response.",
      http,
      sizes,
    ),
    ttfb: registry.histogram(
      "caddy_http_response_duration_seconds",
      "Histogram of times to first byte in response bodies.",
      http,
      DEFAULT_BUCKETS,
    ),
  };
}

/**
 * Caddy's approximate request size: the request URI, method, protocol, header fields (Go
 * keeps `Host` apart from them), host and declared body length.
 */
function requestSize(c: RequestContext): number {
  const uri = c.origQuery ? c.origRawPath.length + 1 + c.origQuery.length : c.origRawPath.length;
  let s = uri + c.origMethod.length + 8 + c.host.length;
  for (const [k, v] of c.request.headers) if (k !== "host") s += k.length + v.length;
  const cl = Number(c.request.headers.get("content-length") ?? "");
  if (Number.isFinite(cl) && cl > 0) s += cl;
  return s;
}

/** The HTTP metrics of one `http` app config. */
export class HttpMetrics {
  readonly #f: ReturnType<typeof families>;
  /**
   * @param config the merged `metrics` settings
   * @param hosts host names the servers' host matchers name (for per_host)
   * @param httpsServer whether some server has TLS
   */
  constructor(
    readonly config: MetricsConfig,
    readonly hosts: ReadonlySet<string>,
    readonly httpsServer: boolean,
  ) {
    // a config that turns per_host on or off starts the families afresh (other labels)
    this.#f = families(config.perHost);
  }

  #hostLabel(c: RequestContext): string {
    const host = c.host.toLowerCase();
    if (this.hosts.has(host) || this.hosts.has(c.hostname.toLowerCase())) return host;
    if (this.config.observeCatchallHosts || (c.scheme === "https" && this.httpsServer)) return host;
    return "_other";
  }

  /** Wraps a route's chain so each request through it is measured. */
  instrument(server: string, handler: string, next: Next): Next {
    const f = this.#f;
    const perHost = this.config.perHost;
    return async (c) => {
      const labels: Labels = { server, handler };
      if (perHost) labels.host = this.#hostLabel(c);
      const start = performance.now();
      f.inFlight.add(labels, 1);
      let res: Response;
      try {
        res = await next(c);
      } catch (e) {
        f.inFlight.add(labels, -1);
        f.count.inc(labels);
        f.errors.inc(labels);
        const status = (e as { status?: number })?.status;
        if (typeof status === "number") this.#observe(c, labels, status, start, 0);
        throw e;
      }
      const ttfb = (performance.now() - start) / 1000;
      const err = responseError(res);
      const code = sanitizeCode(err ? err.status : res.status);
      const statusLabels: Labels = { ...labels, code, method: sanitizeMethod(c.method) };
      f.ttfb.observe(statusLabels, ttfb);
      const finish = (size: number) => {
        f.inFlight.add(labels, -1);
        f.count.inc(labels);
        if (err) f.errors.inc(labels);
        f.duration.observe(statusLabels, (performance.now() - start) / 1000);
        f.reqSize.observe(statusLabels, requestSize(c));
        f.resSize.observe(statusLabels, size);
      };
      if (err || res.body === null) {
        finish(0);
        return res;
      }
      // a body of known length goes out whole: no need to count it through a stream
      const length = Number(res.headers.get("content-length") ?? NaN);
      if (Number.isSafeInteger(length) && length >= 0) {
        finish(c.method === "HEAD" ? 0 : length);
        return res;
      }
      let size = 0;
      let done = false;
      const end = () => {
        if (!done) {
          done = true;
          finish(size);
        }
      };
      const body = res.body.pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, ctl) {
            size += chunk.byteLength;
            ctl.enqueue(chunk);
          },
          flush: end,
          cancel: end,
        }),
      );
      return new Response(body, {
        status: res.status,
        statusText: res.statusText,
        headers: res.headers,
      });
    };
  }

  #observe(c: RequestContext, labels: Labels, status: number, start: number, size: number): void {
    const statusLabels: Labels = {
      ...labels,
      code: sanitizeCode(status),
      method: sanitizeMethod(c.method),
    };
    this.#f.duration.observe(statusLabels, (performance.now() - start) / 1000);
    this.#f.reqSize.observe(statusLabels, requestSize(c));
    this.#f.resSize.observe(statusLabels, size);
  }
}
