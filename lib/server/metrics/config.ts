/**
 * Decoding the `metrics` objects of the `http` app and of its servers (Caddy merges them:
 * any `per_host` turns it on for the app) into the app's HttpMetrics, and starts pushing them
 * over OTLP when `otlp` is set (otlp.ts). The metrics code loads only when a config has a
 * `metrics` object.
 *
 * @module
 */
import { asObject, checkFields, optBool } from "../http/config.ts";
import { ConfigError } from "../config/error.ts";
import type { HttpMetrics } from "./http.ts";
import type { ProvisionContext } from "../module/mod.ts";

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
    const m = asObject(appRaw, "http.metrics");
    checkFields(m, ["per_host", "observe_catchall_hosts", "otlp"], "http.metrics");
    perHost = optBool(m, "per_host", "http.metrics") ?? false;
    catchall = optBool(m, "observe_catchall_hosts", "http.metrics") ?? false;
    otlp = optBool(m, "otlp", "http.metrics") ?? false;
  }
  for (const [name, raw] of Object.entries(servers)) {
    const sm = (raw as { metrics?: unknown } | null)?.metrics;
    if (sm === undefined || sm === null) continue;
    const where = `http.servers.${name}.metrics`;
    const m = asObject(sm, where);
    checkFields(m, ["per_host", "observe_catchall_hosts", "otlp"], where);
    on = true;
    perHost ||= optBool(m, "per_host", where) ?? false;
    catchall ||= optBool(m, "observe_catchall_hosts", where) ?? false;
    otlp ||= optBool(m, "otlp", where) ?? false;
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
