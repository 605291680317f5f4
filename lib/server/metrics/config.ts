/**
 * Decoding the `metrics` objects of the `http` app and of its servers (Caddy merges them:
 * any `per_host` turns it on for the app) into the app's HttpMetrics, and starts pushing them
 * over OTLP when `otlp` is set (otlp.ts). The metrics code loads only when a config has a
 * `metrics` object.
 *
 * @module
 */
import { Decoder } from "../config/decode.ts";
import { ConfigError } from "../config/error.ts";
import type { HttpMetrics } from "./http.ts";
import type { ProvisionContext } from "../module/mod.ts";

/** The fields of a `metrics` object (the app's and each server's). */
const METRICS_FIELDS = ["per_host", "observe_catchall_hosts", "otlp"];

function host(h: string): boolean {
  return !h.includes("*") && !h.includes("{");
}

/** Collects the exact host names of the servers' top-level host matchers (for per_host). */
function matcherHosts(servers: Record<string, unknown>): { hosts: Set<string>; https: boolean } {
  const hosts = new Set<string>();
  let https = false;
  for (const raw of Object.values(servers)) {
    const s = (raw ?? {}) as { routes?: unknown; tls_connection_policies?: unknown };
    if (Array.isArray(s.tls_connection_policies)) https = true;
    for (const r of Array.isArray(s.routes) ? s.routes : []) {
      for (const set of ((r as { match?: unknown[] })?.match ?? [])) {
        const list = (set as { host?: unknown })?.host;
        if (Array.isArray(list)) {
          for (const h of list) if (typeof h === "string" && host(h)) hosts.add(h.toLowerCase());
        }
      }
    }
  }
  return { hosts, https };
}

/**
 * The app's HttpMetrics, or undefined when neither the app nor a server has `metrics`.
 *
 * @example
 * ```ts ignore
 * const metrics = await provisionMetrics(config.metrics, config.servers);
 * ```
 */
export async function provisionMetrics(
  appRaw: unknown,
  servers: Record<string, unknown>,
  ctx: ProvisionContext,
): Promise<HttpMetrics | undefined> {
  let on = appRaw !== undefined && appRaw !== null;
  let perHost = false;
  let catchall = false;
  let otlp = false;
  if (on) {
    const m = Decoder.of(appRaw, "http.metrics").fields(METRICS_FIELDS);
    perHost = m.bool("per_host") ?? false;
    catchall = m.bool("observe_catchall_hosts") ?? false;
    otlp = m.bool("otlp") ?? false;
  }
  for (const [name, raw] of Object.entries(servers)) {
    const sm = (raw as { metrics?: unknown } | null)?.metrics;
    if (sm === undefined || sm === null) continue;
    const m = Decoder.of(sm, `http.servers.${name}.metrics`).fields(METRICS_FIELDS);
    on = true;
    perHost ||= m.bool("per_host") ?? false;
    catchall ||= m.bool("observe_catchall_hosts") ?? false;
    otlp ||= m.bool("otlp") ?? false;
  }
  if (!on) return undefined;
  if (otlp && !ctx.validating) {
    const { startOtlpPush } = await import("./otlp.ts");
    let push;
    try {
      push = await startOtlpPush();
    } catch (e) {
      throw new ConfigError("invalid_config", `http.metrics.otlp: ${(e as Error).message}`);
    }
    if (push) ctx.onCleanup(() => push.stop());
  }
  const { HttpMetrics } = await import("./http.ts");
  const { hosts, https } = matcherHosts(servers);
  return new HttpMetrics({ perHost, observeCatchallHosts: catchall }, hosts, https);
}
