/**
 * The `tracing` handler (`http.handlers.tracing`), as Caddy's: each request through it is a
 * server span named `span` (placeholders allowed; default `handler`), a child of the trace
 * context the request carries (`traceparent`), whose context is written back into the request
 * headers so a `reverse_proxy` later in the chain carries it upstream. The trace and span ids
 * are the variables `trace_id` and `span_id` and the access log fields `traceID` and `spanID`.
 * Attributes follow the HTTP semantic conventions (method, scheme, path, server and client
 * address, user agent, protocol version, response status); `span_attributes` adds more
 * (placeholders allowed, rendered when the response is ready). A 5xx marks the span as an
 * error. The span ends when a streamed response body has been sent (with the head when the
 * body's length is known).
 *
 * @module
 */
import {
  type Attributes,
  context as otelContext,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import type { ModuleDefinition } from "../module/mod.ts";
import { Decoder } from "../config/decode.ts";
import type { RequestContext } from "../http/context.ts";
import { responseError } from "../http/errors.ts";
import type { HttpHandler } from "../http/handler.ts";
import { compileTemplate, type Template } from "../http/replacer.ts";
import { acquireTracing, releaseTracing } from "./provider.ts";
import { requestProto } from "../module/listener.ts";

const getter = {
  get: (h: Headers, key: string) => h.get(key) ?? undefined,
  keys: (h: Headers) => [...h.keys()],
};
const setter = { set: (h: Headers, key: string, value: string) => h.set(key, value) };

function requestAttributes(c: RequestContext): Attributes {
  const [host, port] = [c.hostname, c.host.slice(c.hostname.length).replace(/^\]?:/, "")];
  const a: Attributes = {
    "http.request.method": c.method,
    "url.scheme": c.scheme,
    "url.path": c.path,
    "server.address": host,
    "network.protocol.version": ({ "HTTP/3.0": "3", "HTTP/2.0": "2", "HTTP/1.1": "1.1" })[
      requestProto(c.info)
    ],
    "client.address": c.clientIP,
  };
  if (port) a["server.port"] = Number(port);
  if (c.query) a["url.query"] = c.query;
  if (c.remoteHost) {
    a["network.peer.address"] = c.remoteHost;
    a["network.peer.port"] = Number(c.remotePort);
  }
  const ua = c.headers.get("user-agent");
  if (ua) a["user_agent.original"] = ua;
  return a;
}

/** Registry entry. */
export const tracingModule: ModuleDefinition<HttpHandler> = {
  id: "http.handlers.tracing",
  async create(config, ctx) {
    const d = new Decoder(config, "http.handlers.tracing").fields([
      "handler",
      "span",
      "span_attributes",
    ]);
    const spanName = compileTemplate(d.string("span") || "handler");
    const attrs: [string, Template][] = [];
    const spanAttributes: Decoder = d.object("span_attributes") ??
      new Decoder({}, d.at("span_attributes"));
    for (const [k, v] of Object.entries(spanAttributes.raw)) {
      if (typeof v !== "string") spanAttributes.failAt(k, "must be a string");
      attrs.push([k, compileTemplate(v)]);
    }
    if (ctx.validating) return { serveHTTP: (c, next) => next(c) };
    const tracing = await acquireTracing();
    let released = false;
    return {
      async serveHTTP(c, next) {
        const parent = tracing.propagator.extract(ROOT_CONTEXT, c.headers, getter);
        const span = tracing.tracer.startSpan(
          spanName.render(c),
          { kind: SpanKind.SERVER, attributes: requestAttributes(c) },
          parent,
        );
        const spanCtx = trace.setSpan(parent, span);
        tracing.propagator.inject(spanCtx, c.mutableHeaders(), setter);
        const { traceId, spanId } = span.spanContext();
        c.setVar("trace_id", traceId);
        c.setVar("span_id", spanId);
        (c.logFields ??= []).push(["traceID", traceId], ["spanID", spanId]);
        const finish = (status: number, error?: string) => {
          for (const [k, t] of attrs) span.setAttribute(k, t.render(c));
          span.setAttribute("http.response.status_code", status);
          if (status >= 500 || error) {
            span.setStatus({ code: SpanStatusCode.ERROR, message: error });
          }
          span.end();
        };
        let res: Response;
        try {
          res = await otelContext.with(spanCtx, () => next(c));
        } catch (e) {
          const status = (e as { status?: number })?.status ?? 500;
          finish(status, (e as Error)?.message ?? String(e));
          throw e;
        }
        const err = responseError(res);
        const length = Number(res.headers.get("content-length") ?? NaN);
        if (err || res.body === null || Number.isSafeInteger(length)) {
          // a body of known length is sent whole: the span ends with its head
          finish(err ? err.status : res.status, err?.message);
          return res;
        }
        let ended = false;
        const end = () => {
          if (!ended) {
            ended = true;
            finish(res.status);
          }
        };
        const body = res.body.pipeThrough(
          new TransformStream<Uint8Array, Uint8Array>({ flush: end, cancel: end }),
        );
        return new Response(body, {
          status: res.status,
          statusText: res.statusText,
          headers: res.headers,
        });
      },
      async cleanup() {
        if (released) return;
        released = true;
        await releaseTracing();
      },
    };
  },
};
