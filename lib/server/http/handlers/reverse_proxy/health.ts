/**
 * Health checks of `reverse_proxy`. Active: every `interval` (default 30s) each upstream gets
 * `<method> uri` (`GET` unless `method` says otherwise; on `port` if set, with `headers` and
 * `body`), healthy when the status matches
 * `expect_status` (a single digit is a class; default 2xx/3xx) and the body `expect_body`,
 * within `timeout` (default 5s); a host changes state after `passes` (healthy again) or `fails`
 * (unhealthy) checks in a row (default 1 each). Passive: failures (errors, `unhealthy_status`,
 * `unhealthy_latency`) are remembered for `fail_duration`; `max_fails` of them make a host
 * unavailable; `unhealthy_request_count` caps concurrent requests per upstream.
 *
 * @module
 */
import { type Duration, durationMs } from "../../../config/duration.ts";
import { goRegExp } from "../../regexp.ts";
import type { ActiveHealthChecksConfig, PassiveHealthChecksConfig } from "./config.ts";
import type { Upstream } from "./upstreams.ts";
import { loadNodeHttp } from "./transport.ts";

/** Milliseconds of a decoded duration (0 when absent). */
function ms(v: Duration | undefined): number {
  return v === undefined ? 0 : durationMs(v);
}

/** Passive health check settings, as the handler runs them. */
export interface PassiveSettings {
  /** How long a failure is remembered (ms); 0 disables passive checks. */
  failDuration: number;
  /** Failures that make a host unavailable. */
  maxFails: number;
  /** Concurrent requests per upstream that make it unavailable (0 = none). */
  unhealthyRequestCount: number;
  /** Statuses counted as failures. */
  unhealthyStatus: number[];
  /** Latency (ms) counted as a failure (0 = none). */
  unhealthyLatency: number;
}

/** The settings of decoded `health_checks.passive` (all off when absent). */
export function passiveSettings(c: PassiveHealthChecksConfig | undefined): PassiveSettings {
  const failDuration = ms(c?.fail_duration);
  return {
    failDuration,
    maxFails: c?.max_fails ?? (failDuration > 0 ? 1 : 0),
    unhealthyRequestCount: c?.unhealthy_request_count ?? 0,
    unhealthyStatus: c?.unhealthy_status ?? [],
    unhealthyLatency: ms(c?.unhealthy_latency),
  };
}

/** True when `status` matches `expected` (one digit = a class such as 5 for 5xx). */
export function statusMatches(status: number, expected: number): boolean {
  return expected < 10 ? Math.floor(status / 100) === expected : status === expected;
}

/** A running active health checker. */
export interface ActiveChecker {
  /** Stops the timer and in-flight checks. */
  stop(): void;
  /** Runs one round now (tests and start-up). */
  runOnce(): Promise<void>;
}

/** How active health checks run. */
export interface ActiveOptions {
  /** Whether the upstreams speak TLS. */
  tls: boolean;
  /** Called when an upstream changes state. */
  onChange: (u: Upstream, healthy: boolean) => void;
  /** Only check the config: no timer, no request. */
  validating?: boolean;
}

/** Starts active health checks for the upstreams; null when not configured. */
export function startActive(
  c: ActiveHealthChecksConfig | undefined,
  upstreams: Upstream[],
  options: ActiveOptions,
): ActiveChecker | null {
  if (!c) return null;
  const { tls, onChange } = options;
  const uri = c.uri || c.path || "";
  if (!uri) return null;
  const port = c.port ?? 0;
  const headers = c.headers ?? {};
  const interval = ms(c.interval) || 30_000;
  const timeout = ms(c.timeout) || 5_000;
  const expectStatus = c.expect_status ?? 0;
  const expectBody = c.expect_body ? goRegExp(c.expect_body) : null;
  const maxSize = c.max_size ?? 0;
  const method = (c.method || "GET").toUpperCase();
  const reqBody = c.body ?? "";
  // consecutive results needed to change a host's state (Caddy's default: 1 each)
  const passes = Math.max(1, c.passes ?? 1);
  const fails = Math.max(1, c.fails ?? 1);
  const streaks = new Map<Upstream, number>(); // > 0: passes in a row, < 0: failures in a row
  if (options.validating) return { stop() {}, runOnce: () => Promise.resolve() };
  const aborts = new Set<AbortController>();
  let stopped = false;

  const check = async (u: Upstream): Promise<boolean> => {
    const { http, https } = await loadNodeHttp();
    return await new Promise<boolean>((resolve) => {
      const host = u.dialHost;
      const p = port || (u.dialPort ? Number(u.dialPort) : 80);
      const ac = new AbortController();
      aborts.add(ac);
      const hdrs: Record<string, string> = {};
      for (const [k, v] of Object.entries(headers)) {
        hdrs[k] = Array.isArray(v) ? v.join(", ") : String(v);
      }
      let done = false;
      const finish = (ok: boolean) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        aborts.delete(ac);
        resolve(ok);
      };
      const timer = setTimeout(() => {
        ac.abort();
        finish(false);
      }, timeout);
      const req = (tls ? https : http).request({
        host,
        port: p,
        path: uri,
        method,
        headers: { host: hdrs.Host ?? hdrs.host ?? `${host}:${p}`, ...hdrs, connection: "close" },
        signal: ac.signal,
        ...(tls ? { rejectUnauthorized: false } : {}),
      }, (res) => {
        const status = res.statusCode ?? 0;
        const okStatus = expectStatus
          ? statusMatches(status, expectStatus)
          : status >= 200 && status < 400;
        if (!okStatus || !expectBody) {
          res.resume();
          res.on("end", () => finish(okStatus));
          res.on("error", () => finish(false));
          return;
        }
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (d: string) => {
          // at most max_size bytes of the body are read (Caddy's LimitReader)
          if (!maxSize || body.length < maxSize) body = (body + d).slice(0, maxSize || undefined);
        });
        res.on("end", () => finish(expectBody.test(body)));
        res.on("error", () => finish(false));
      });
      req.on("error", () => finish(false));
      req.end(reqBody || undefined);
    });
  };

  const runOnce = async () => {
    await Promise.all(upstreams.map(async (u) => {
      const ok = await check(u);
      if (stopped) return;
      const before = streaks.get(u) ?? 0;
      const streak = ok ? Math.max(0, before) + 1 : Math.min(0, before) - 1;
      streaks.set(u, streak);
      if (u.unhealthy && ok && streak >= passes) {
        u.unhealthy = false;
        onChange(u, true);
      } else if (!u.unhealthy && !ok && -streak >= fails) {
        u.unhealthy = true;
        onChange(u, false);
      }
    }));
  };

  let timer: ReturnType<typeof setTimeout> | undefined;
  const loop = () => {
    timer = setTimeout(async () => {
      await runOnce();
      if (!stopped) loop();
    }, interval);
  };
  let first: Promise<void> | null = runOnce().then(() => {
    first = null;
    if (!stopped) loop();
  });
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
      for (const ac of aborts) ac.abort();
      void first;
    },
    runOnce,
  };
}
