/**
 * A small Prometheus registry: counter, gauge and histogram families with label sets, written
 * in the Prometheus text exposition format (0.0.4) or OpenMetrics 1.0 (`# EOF`, counters
 * typed without their `_total`). One registry serves the whole process, so counters keep
 * counting across config reloads, as scrapers expect.
 *
 * @module
 */

/** Label names to values. */
export type Labels = Record<string, string>;

/** One series of a family as data (for exporters). */
export interface SeriesSnapshot {
  /** Label names to values. */
  labels: Labels;
  /** Counter or gauge value. */
  value?: number;
  /** Histogram: per-bucket (not cumulative) counts, one more than the bounds (the +Inf one). */
  histogram?: { bounds: number[]; counts: number[]; sum: number; count: number };
}

/** A family as data. */
export interface FamilySnapshot {
  name: string;
  help: string;
  type: "counter" | "gauge" | "histogram";
  series: SeriesSnapshot[];
}

/** What every metric family has. */
interface Family {
  readonly name: string;
  readonly help: string;
  readonly type: "counter" | "gauge" | "histogram";
  /** Sample lines of this family (without HELP/TYPE). */
  samples(openMetrics: boolean): string[];
  /** The series as data. */
  snapshot(): SeriesSnapshot[];
}

function escapeLabel(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}

function escapeHelp(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

function labelText(names: readonly string[], values: readonly string[], extra = ""): string {
  const parts = names.map((n, i) => `${n}="${escapeLabel(values[i])}"`);
  if (extra) parts.push(extra);
  return parts.length ? `{${parts.join(",")}}` : "";
}

/**
 * A sample value as Go's `strconv.FormatFloat(v, 'g', -1, 64)` writes it (what Prometheus'
 * client prints): shortest digits, exponent form below 1e-4 and from 1e6 on.
 */
export function formatValue(v: number): string {
  if (v === Infinity) return "+Inf";
  if (v === -Infinity) return "-Inf";
  if (Number.isNaN(v)) return "NaN";
  if (v === 0) return "0";
  const [mant, e] = v.toExponential().split("e");
  const exp = Number(e);
  if (exp < -4 || exp >= 6) {
    return `${mant}e${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
  }
  return String(v);
}

const num = formatValue;

/** A family whose series are keyed by their label values. */
abstract class Vec<S> implements Family {
  abstract readonly type: "counter" | "gauge" | "histogram";
  readonly #series = new Map<string, { values: string[]; s: S }>();
  constructor(readonly name: string, readonly help: string, readonly labelNames: string[]) {}
  protected abstract create(): S;
  /** The series for a label set (created at zero on first use). */
  protected series(labels: Labels): S {
    const values = this.labelNames.map((n) => labels[n] ?? "");
    const key = values.join("\u0000");
    let e = this.#series.get(key);
    if (!e) this.#series.set(key, e = { values, s: this.create() });
    return e.s;
  }
  protected entries(): { values: string[]; s: S }[] {
    return [...this.#series.values()];
  }
  protected labelsOf(values: string[]): Labels {
    return Object.fromEntries(this.labelNames.map((n, i) => [n, values[i]]));
  }
  abstract samples(openMetrics: boolean): string[];
  abstract snapshot(): SeriesSnapshot[];
}

/** A counter family. */
export class CounterVec extends Vec<{ v: number }> {
  readonly type = "counter" as const;
  protected create(): { v: number } {
    return { v: 0 };
  }
  /** Adds to the series of `labels` (default 1). */
  inc(labels: Labels = {}, by = 1): void {
    this.series(labels).v += by;
  }
  /** The current value of a series. */
  get(labels: Labels = {}): number {
    return this.series(labels).v;
  }
  snapshot(): SeriesSnapshot[] {
    return this.entries().map((e) => ({ labels: this.labelsOf(e.values), value: e.s.v }));
  }
  samples(): string[] {
    const base = this.name.endsWith("_total") ? this.name : `${this.name}_total`;
    return this.entries().map((e) =>
      `${base}${labelText(this.labelNames, e.values)} ${num(e.s.v)}`
    );
  }
}

/** A gauge family. */
export class GaugeVec extends Vec<{ v: number }> {
  readonly type = "gauge" as const;
  protected create(): { v: number } {
    return { v: 0 };
  }
  /** Sets a series. */
  set(labels: Labels, v: number): void {
    this.series(labels).v = v;
  }
  /** Adds to a series (negative to subtract). */
  add(labels: Labels, by: number): void {
    this.series(labels).v += by;
  }
  snapshot(): SeriesSnapshot[] {
    return this.entries().map((e) => ({ labels: this.labelsOf(e.values), value: e.s.v }));
  }
  samples(): string[] {
    return this.entries().map((e) =>
      `${this.name}${labelText(this.labelNames, e.values)} ${num(e.s.v)}`
    );
  }
}

interface HistogramSeries {
  counts: number[];
  sum: number;
  count: number;
}

/** A histogram family with fixed upper bounds (a `+Inf` bucket is implied). */
export class HistogramVec extends Vec<HistogramSeries> {
  readonly type = "histogram" as const;
  constructor(name: string, help: string, labelNames: string[], readonly buckets: number[]) {
    super(name, help, labelNames);
  }
  protected create(): HistogramSeries {
    return { counts: this.buckets.map(() => 0), sum: 0, count: 0 };
  }
  /** Records one observation. */
  observe(labels: Labels, v: number): void {
    const s = this.series(labels);
    for (let i = 0; i < this.buckets.length; i++) if (v <= this.buckets[i]) s.counts[i]++;
    s.sum += v;
    s.count++;
  }
  snapshot(): SeriesSnapshot[] {
    return this.entries().map((e) => {
      // stored counts are cumulative (le); exporters want each bucket's own count
      const counts = e.s.counts.map((c, i) => c - (i ? e.s.counts[i - 1] : 0));
      counts.push(e.s.count - (e.s.counts.at(-1) ?? 0));
      return {
        labels: this.labelsOf(e.values),
        histogram: { bounds: [...this.buckets], counts, sum: e.s.sum, count: e.s.count },
      };
    });
  }
  samples(): string[] {
    const out: string[] = [];
    for (const e of this.entries()) {
      this.buckets.forEach((b, i) =>
        out.push(
          `${this.name}_bucket${labelText(this.labelNames, e.values, `le="${num(b)}"`)} ${
            e.s.counts[i]
          }`,
        )
      );
      out.push(
        `${this.name}_bucket${labelText(this.labelNames, e.values, 'le="+Inf"')} ${e.s.count}`,
      );
      out.push(`${this.name}_sum${labelText(this.labelNames, e.values)} ${num(e.s.sum)}`);
      out.push(`${this.name}_count${labelText(this.labelNames, e.values)} ${e.s.count}`);
    }
    return out;
  }
}

/** Prometheus' default duration buckets (seconds). */
export const DEFAULT_BUCKETS: readonly number[] = [
  0.005,
  0.01,
  0.025,
  0.05,
  0.1,
  0.25,
  0.5,
  1,
  2.5,
  5,
  10,
];

/** `count` buckets starting at `start`, each `factor` times the previous. */
export function exponentialBuckets(start: number, factor: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => start * factor ** i);
}

/** Content type of the Prometheus text format. */
export const TEXT_FORMAT = "text/plain; version=0.0.4; charset=utf-8";
/** Content type of OpenMetrics. */
export const OPENMETRICS_FORMAT = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/**
 * A registry of metric families.
 *
 * @example
 * ```ts
 * import { Registry } from "./registry.ts";
 * const r = new Registry();
 * r.counter("jobs_total", "Jobs done.", ["kind"]).inc({ kind: "a" });
 * console.log(r.expose(false));
 * ```
 */
export class Registry {
  readonly #families = new Map<string, Family>();
  readonly #collectors: (() => void)[] = [];

  #add<F extends Family & { labelNames?: string[] }>(f: F): F {
    const had = this.#families.get(f.name) as (F & { labelNames?: string[] }) | undefined;
    // the same family is kept (and keeps counting); other labels start it afresh
    if (
      had && had.type === f.type &&
      (had.labelNames ?? []).join(",") === (f.labelNames ?? []).join(",")
    ) return had;
    this.#families.set(f.name, f);
    return f;
  }

  /** A counter family (the existing one when the name is taken). */
  counter(name: string, help: string, labels: string[] = []): CounterVec {
    return this.#add(new CounterVec(name, help, labels));
  }

  /** A gauge family. */
  gauge(name: string, help: string, labels: string[] = []): GaugeVec {
    return this.#add(new GaugeVec(name, help, labels));
  }

  /** A histogram family. */
  histogram(
    name: string,
    help: string,
    labels: string[],
    buckets: readonly number[],
  ): HistogramVec {
    return this.#add(new HistogramVec(name, help, labels, [...buckets]));
  }

  /** Runs before every exposition (to refresh gauges such as process memory). */
  onCollect(fn: () => void): void {
    this.#collectors.push(fn);
  }

  /** Every family as data (collectors run first). */
  snapshot(): FamilySnapshot[] {
    for (const fn of this.#collectors) fn();
    return [...this.#families.values()].map((f) => ({
      name: f.name,
      help: f.help,
      type: f.type,
      series: f.snapshot(),
    }));
  }

  /** The registry in the text format, or OpenMetrics. */
  expose(openMetrics: boolean): string {
    for (const fn of this.#collectors) fn();
    const lines: string[] = [];
    for (const f of [...this.#families.values()].sort((a, b) => a.name < b.name ? -1 : 1)) {
      const samples = f.samples(openMetrics);
      if (samples.length === 0) continue;
      const typeName = openMetrics && f.type === "counter" ? f.name.replace(/_total$/, "") : f.name;
      lines.push(`# HELP ${typeName} ${escapeHelp(f.help)}`);
      lines.push(`# TYPE ${typeName} ${f.type}`);
      lines.push(...samples);
    }
    if (openMetrics) lines.push("# EOF");
    return lines.join("\n") + "\n";
  }
}

/** The registry of this process. */
export const registry: Registry = new Registry();

/**
 * Answers a scrape: OpenMetrics when allowed and the client's `Accept` asks for it, else the
 * text format.
 */
export function scrapeResponse(request: Request, allowOpenMetrics: boolean): Response {
  const accept = request.headers.get("accept") ?? "";
  const om = allowOpenMetrics && accept.includes("application/openmetrics-text");
  return new Response(registry.expose(om), {
    headers: { "content-type": om ? OPENMETRICS_FORMAT : TEXT_FORMAT },
  });
}
