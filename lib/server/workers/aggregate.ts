/**
 * What the admin API answers for all workers at once: `/metrics` (the workers' Prometheus
 * texts summed sample by sample) and `/reverse_proxy/upstreams` (the workers' upstream
 * records merged by address).
 *
 * @module
 */
import { formatValue } from "../metrics/registry.ts";

/** Gauges that are no amounts: the earliest across workers, not the sum. */
const EARLIEST = new Set(["process_start_time_seconds"]);

interface Family {
  comments: string[];
  samples: Map<string, { name: string; value: number }>;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)(?:\s+-?\d+)?$/;

function parseValue(text: string): number {
  if (text === "+Inf") return Infinity;
  if (text === "-Inf") return -Infinity;
  return Number(text);
}

/**
 * Sums Prometheus text expositions sample by sample (same name and labels), as the
 * multi-process mode of Prometheus' client libraries does: counters, histogram buckets, sums
 * and counts add up; so do gauges (`process_resident_memory_bytes` is the workers' total),
 * except `process_start_time_seconds`, which is the earliest. Each family keeps its `# HELP`
 * and `# TYPE` lines (the first text's) and stays in one group, in the order first seen.
 *
 * @example
 * ```ts
 * import { sumPrometheusText } from "./aggregate.ts";
 * sumPrometheusText(["# TYPE a counter\na 1\n", "# TYPE a counter\na 2\n"]);
 * // "# TYPE a counter\na 3\n"
 * ```
 */
export function sumPrometheusText(texts: string[]): string {
  const families = new Map<string, Family>();
  const family = (name: string) => {
    let f = families.get(name);
    if (!f) families.set(name, f = { comments: [], samples: new Map() });
    return f;
  };
  for (const text of texts) {
    let open: string | undefined;
    const seen = new Set<string>();
    for (const line of text.split("\n")) {
      if (line.trim() === "") continue;
      const comment = /^#\s+(HELP|TYPE)\s+(\S+)/.exec(line);
      if (comment) {
        open = comment[2];
        const f = family(open);
        const key = `${comment[1]} ${open}`;
        if (!seen.has(key) && !f.comments.some((c) => c.startsWith(`# ${comment[1]} `))) {
          f.comments.push(line);
        }
        seen.add(key);
        continue;
      }
      if (line.startsWith("#")) continue;
      const m = SAMPLE.exec(line);
      if (!m) continue;
      const [, name, labels = "", value] = m;
      const f = family(open && name.startsWith(open) ? open : name);
      const key = name + labels;
      const v = parseValue(value);
      const had = f.samples.get(key);
      if (!had) f.samples.set(key, { name, value: v });
      else if (EARLIEST.has(name)) had.value = Math.min(had.value, v);
      else had.value += v;
    }
  }
  let out = "";
  for (const f of families.values()) {
    for (const c of f.comments) out += c + "\n";
    for (const [key, s] of f.samples) out += `${key} ${formatValue(s.value)}\n`;
  }
  return out;
}

/** One record of `GET /reverse_proxy/upstreams`. */
export interface UpstreamRecord {
  address: string;
  num_requests: number;
  fails: number;
  [field: string]: unknown;
}

/**
 * Merges the workers' upstream records by address: `num_requests` (requests in flight) and
 * `fails` (failures the passive health checks remember) are the workers' sums. Each worker
 * decides on its own counts whether an upstream is available (as each nginx worker does).
 *
 * @example
 * ```ts
 * import { mergeUpstreams } from "./aggregate.ts";
 * mergeUpstreams([[{ address: "a:1", num_requests: 1, fails: 0 }], [{
 *   address: "a:1",
 *   num_requests: 2,
 *   fails: 1,
 * }]]); // [{ address: "a:1", num_requests: 3, fails: 1 }]
 * ```
 */
export function mergeUpstreams(lists: UpstreamRecord[][]): UpstreamRecord[] {
  const by = new Map<string, UpstreamRecord>();
  for (const list of lists) {
    for (const r of list) {
      const had = by.get(r.address);
      if (!had) by.set(r.address, { ...r });
      else {
        had.num_requests += r.num_requests;
        had.fails += r.fails;
      }
    }
  }
  return [...by.values()];
}
