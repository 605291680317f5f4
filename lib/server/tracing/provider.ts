/**
 * The process's OpenTelemetry tracer provider for the `tracing` handler, configured the way
 * Caddy's is, from the standard environment variables: `OTEL_TRACES_EXPORTER` (`otlp`, the
 * default; `console`; `none`), `OTEL_EXPORTER_OTLP_PROTOCOL` /
 * `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL` (`http/protobuf`, the default, or `http/json`; `grpc`
 * is refused), `OTEL_EXPORTER_OTLP_ENDPOINT` / `..._TRACES_ENDPOINT` and `..._HEADERS` (read
 * by the exporter), `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_BSP_*` (batch
 * processor), `OTEL_PROPAGATORS` (`tracecontext`, `baggage`, `none`). Spans go out in
 * batches. The provider is shared by every tracing handler and shut down (flushing what is
 * left) when the last one is cleaned up. This file and the OpenTelemetry packages load only
 * when a config uses `tracing`.
 *
 * @module
 */
import type { TextMapPropagator, Tracer } from "@opentelemetry/api";
import {
  CompositePropagator,
  W3CBaggagePropagator,
  W3CTraceContextPropagator,
} from "@opentelemetry/core";
import {
  BatchSpanProcessor,
  ConsoleSpanExporter,
  type SpanExporter,
  type SpanProcessor,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import { VERSION } from "../../version.ts";
import { otelEnv as env, otelResource, otlpProtocol } from "../otel.ts";

async function exporter(): Promise<SpanExporter | null> {
  const kind = (env("OTEL_TRACES_EXPORTER") ?? "otlp").toLowerCase();
  if (kind === "none") return null;
  if (kind === "console") return new ConsoleSpanExporter();
  if (kind !== "otlp") {
    throw new Error(`OTEL_TRACES_EXPORTER=${kind} is not supported (otlp, console or none)`);
  }
  if (otlpProtocol("traces") === "http/protobuf") {
    const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-proto");
    return new OTLPTraceExporter();
  }
  const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-http");
  return new OTLPTraceExporter();
}

function propagator(): TextMapPropagator {
  const names = (env("OTEL_PROPAGATORS") ?? "tracecontext,baggage").split(",").map((s) =>
    s.trim().toLowerCase()
  ).filter(Boolean);
  const list: TextMapPropagator[] = [];
  for (const n of names) {
    if (n === "none") return new CompositePropagator({ propagators: [] });
    if (n === "tracecontext") list.push(new W3CTraceContextPropagator());
    else if (n === "baggage") list.push(new W3CBaggagePropagator());
    else throw new Error(`OTEL_PROPAGATORS: ${n} is not supported (tracecontext, baggage, none)`);
  }
  return new CompositePropagator({ propagators: list });
}

/** What tracing handlers share. */
export interface Tracing {
  tracer: Tracer;
  propagator: TextMapPropagator;
}

let shared: { provider: TracerProvider; tracing: Tracing; refs: number } | null = null;
let creating: Promise<void> | null = null;

/** Takes a reference to the shared provider (created on first use). */
export async function acquireTracing(): Promise<Tracing> {
  while (creating) await creating;
  if (shared) {
    shared.refs++;
    return shared.tracing;
  }
  let done!: () => void;
  creating = new Promise((r) => done = r);
  try {
    const exp = await exporter();
    const prop = propagator();
    const resource = otelResource();
    const num = (name: string) => {
      const v = Number(env(name));
      return Number.isFinite(v) && v > 0 ? v : undefined;
    };
    const spanProcessors: SpanProcessor[] = exp
      ? [
        new BatchSpanProcessor({
          exporter: exp,
          scheduledDelayMillis: num("OTEL_BSP_SCHEDULE_DELAY"),
          maxExportBatchSize: num("OTEL_BSP_MAX_EXPORT_BATCH_SIZE"),
          exportTimeoutMillis: num("OTEL_BSP_EXPORT_TIMEOUT"),
          maxQueueSize: num("OTEL_BSP_MAX_QUEUE_SIZE"),
        }),
      ]
      : [];
    const provider = new TracerProvider({ resource, spanProcessors });
    shared = {
      provider,
      tracing: { tracer: provider.getTracer("gatehouse/http", VERSION), propagator: prop },
      refs: 1,
    };
    return shared.tracing;
  } finally {
    creating = null;
    done();
  }
}

/** Drops a reference; the last one flushes and shuts the provider down. */
export async function releaseTracing(): Promise<void> {
  if (!shared) return;
  shared.refs--;
  if (shared.refs > 0) return;
  const { provider } = shared;
  shared = null;
  await provider.forceFlush().catch(() => {});
  await provider.shutdown().catch(() => {});
}
