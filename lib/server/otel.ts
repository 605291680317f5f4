/**
 * The OpenTelemetry setup the metrics push (`metrics/otlp.ts`) and the tracer provider
 * (`tracing/provider.ts`) share, read from the standard variables as Caddy reads them: the
 * OTLP protocol of a signal (`OTEL_EXPORTER_OTLP_<SIGNAL>_PROTOCOL`, else
 * `OTEL_EXPORTER_OTLP_PROTOCOL`; `http/protobuf`, the default, or `http/json`; `grpc` and
 * anything else are refused) and the resource (the SDK's defaults, `OTEL_SERVICE_NAME` and
 * `OTEL_RESOURCE_ATTRIBUTES`, and the web engine's name and version). Loaded only with them.
 *
 * @module
 */
import {
  defaultResource,
  detectResources,
  envDetector,
  type Resource,
  resourceFromAttributes,
} from "@opentelemetry/resources";
import { VERSION } from "../version.ts";

/** An environment variable, undefined when unset, empty or not readable. */
export function otelEnv(name: string): string | undefined {
  try {
    const v = Deno.env.get(name);
    return v === undefined || v === "" ? undefined : v;
  } catch {
    return undefined;
  }
}

/**
 * The OTLP protocol of `signal`; throws for one this server does not export over.
 *
 * @example
 * ```ts
 * import { otlpProtocol } from "./otel.ts";
 * otlpProtocol("metrics"); // "http/protobuf" unless the environment says otherwise
 * ```
 */
export function otlpProtocol(signal: "metrics" | "traces"): "http/protobuf" | "http/json" {
  const protocol = otelEnv(`OTEL_EXPORTER_OTLP_${signal.toUpperCase()}_PROTOCOL`) ??
    otelEnv("OTEL_EXPORTER_OTLP_PROTOCOL") ?? "http/protobuf";
  if (protocol === "http/protobuf" || protocol === "http/json") return protocol;
  throw new Error(
    `OTLP protocol ${protocol} is not supported for ${signal} (use http/protobuf or http/json)`,
  );
}

/** The resource every exported signal carries. */
export function otelResource(): Resource {
  return defaultResource()
    .merge(detectResources({ detectors: [envDetector] }))
    .merge(resourceFromAttributes({ "webengine.name": "Gatehouse", "webengine.version": VERSION }));
}
