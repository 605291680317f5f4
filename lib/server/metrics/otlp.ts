/**
 * Pushing the metrics registry over OTLP (`apps.http.metrics.otlp`), configured as Caddy's
 * from the standard variables: `OTEL_METRICS_EXPORTER` (`otlp`, the default, or `none`),
 * `OTEL_EXPORTER_OTLP_METRICS_PROTOCOL` / `OTEL_EXPORTER_OTLP_PROTOCOL` (`http/protobuf`, the
 * default, or `http/json`; `grpc` is refused), `OTEL_EXPORTER_OTLP_ENDPOINT` /
 * `..._METRICS_ENDPOINT` / `..._HEADERS` (read by the exporter), `OTEL_METRIC_EXPORT_INTERVAL`
 * (default 60 s), `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`. Counters go out as
 * cumulative monotonic sums, gauges as gauges, histograms as explicit-bucket histograms. A
 * last export runs when the config is unloaded. Loaded only when `otlp` is set.
 *
 * @module
 */
import { type Attributes, ValueType } from "@opentelemetry/api";
import {
  AggregationTemporality,
  DataPointType,
  type MetricData,
  type PushMetricExporter,
  type ResourceMetrics,
} from "@opentelemetry/sdk-metrics";
import { VERSION } from "../../version.ts";
import { otelEnv as env, otelResource, otlpProtocol } from "../otel.ts";
import { registry } from "./registry.ts";

async function exporter(): Promise<PushMetricExporter | null> {
  const kind = (env("OTEL_METRICS_EXPORTER") ?? "otlp").toLowerCase();
  if (kind === "none") return null;
  if (kind !== "otlp") {
    throw new Error(`OTEL_METRICS_EXPORTER=${kind} is not supported (otlp or none)`);
  }
  if (otlpProtocol("metrics") === "http/protobuf") {
    const { OTLPMetricExporter } = await import("@opentelemetry/exporter-metrics-otlp-proto");
    return new OTLPMetricExporter();
  }
  const { OTLPMetricExporter } = await import("@opentelemetry/exporter-metrics-otlp-http");
  return new OTLPMetricExporter();
}

type HrTime = [number, number];
const hr = (ms: number): HrTime => [Math.floor(ms / 1000), Math.round((ms % 1000) * 1e6)];

/** The registry as OTLP metric data. */
function metricData(start: HrTime, now: HrTime): MetricData[] {
  const out: MetricData[] = [];
  for (const f of registry.snapshot()) {
    if (f.series.length === 0) continue;
    const descriptor = {
      name: f.name,
      description: f.help,
      unit: "",
      valueType: ValueType.DOUBLE,
    };
    const point = <T>(labels: Attributes, value: T) => ({
      startTime: start,
      endTime: now,
      attributes: labels,
      value,
    });
    if (f.type === "histogram") {
      out.push({
        descriptor,
        aggregationTemporality: AggregationTemporality.CUMULATIVE,
        dataPointType: DataPointType.HISTOGRAM,
        dataPoints: f.series.map((s) =>
          point(s.labels, {
            buckets: { boundaries: s.histogram!.bounds, counts: s.histogram!.counts },
            sum: s.histogram!.sum,
            count: s.histogram!.count,
          })
        ),
      });
    } else if (f.type === "counter") {
      out.push({
        descriptor,
        aggregationTemporality: AggregationTemporality.CUMULATIVE,
        dataPointType: DataPointType.SUM,
        isMonotonic: true,
        dataPoints: f.series.map((s) => point(s.labels, s.value!)),
      });
    } else {
      out.push({
        descriptor,
        aggregationTemporality: AggregationTemporality.CUMULATIVE,
        dataPointType: DataPointType.GAUGE,
        dataPoints: f.series.map((s) => point(s.labels, s.value!)),
      });
    }
  }
  return out;
}

/** A running push loop. */
export interface OtlpPush {
  /** Exports once more, then stops. */
  stop(): Promise<void>;
}

const started = Date.now();

/**
 * Starts pushing the registry every `OTEL_METRIC_EXPORT_INTERVAL`; null when the exporter is
 * `none`.
 *
 * @example
 * ```ts ignore
 * const push = await startOtlpPush();
 * await push?.stop();
 * ```
 */
export async function startOtlpPush(): Promise<OtlpPush | null> {
  const exp = await exporter();
  if (!exp) return null;
  const resource = otelResource();
  const interval = Number(env("OTEL_METRIC_EXPORT_INTERVAL")) || 60_000;
  const push = () =>
    new Promise<void>((resolve) => {
      const rm: ResourceMetrics = {
        resource,
        scopeMetrics: [{
          scope: { name: "gatehouse/http", version: VERSION },
          metrics: metricData(hr(started), hr(Date.now())),
        }],
      };
      exp.export(rm, () => resolve());
    });
  let pending: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    pending = pending.then(push);
  }, interval);
  Deno.unrefTimer(timer);
  return {
    async stop() {
      clearInterval(timer);
      await pending;
      await push();
      await exp.shutdown().catch(() => {});
    },
  };
}
