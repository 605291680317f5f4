/**
 * Process metrics as Prometheus' standard names have them: `process_cpu_seconds_total`,
 * `process_resident_memory_bytes`, `process_start_time_seconds`, plus the JavaScript heap
 * (`deno_heap_used_bytes`, `deno_heap_total_bytes`), refreshed at each scrape.
 *
 * @module
 */
import process from "node:process";
import { registry } from "./registry.ts";

let installed = false;

/** Registers the process metrics once. */
export function installProcessMetrics(): void {
  if (installed) return;
  installed = true;
  const start = Date.now() / 1000 - performance.now() / 1000;
  const cpu = registry.gauge(
    "process_cpu_seconds_total",
    "Total user and system CPU time spent in seconds.",
  );
  const rss = registry.gauge("process_resident_memory_bytes", "Resident memory size in bytes.");
  const started = registry.gauge(
    "process_start_time_seconds",
    "Start time of the process since unix epoch in seconds.",
  );
  const heapUsed = registry.gauge("deno_heap_used_bytes", "JavaScript heap in use, in bytes.");
  const heapTotal = registry.gauge("deno_heap_total_bytes", "JavaScript heap size, in bytes.");
  registry.onCollect(() => {
    const u = process.cpuUsage();
    cpu.set({}, (u.user + u.system) / 1e6);
    const m = Deno.memoryUsage();
    rss.set({}, m.rss);
    heapUsed.set({}, m.heapUsed);
    heapTotal.set({}, m.heapTotal);
    started.set({}, Math.round(start));
  });
}
