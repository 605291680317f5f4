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
import {
  checkFields,
  optDuration,
  optNumber,
  optObject,
  optString,
  type Raw,
} from "../../config.ts";
import { goRegExp } from "../../regexp.ts";
import { ConfigError } from "../../../config/error.ts";
import type { Upstream } from "./upstreams.ts";
import { loadNodeHttp } from "./transport.ts";

/** Parsed passive health check settings. */
export interface PassiveConfig {
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

/** Parses `health_checks.passive`. */
export function parsePassive(raw: Raw | undefined, where: string): PassiveConfig {
  if (!raw) {
    return {
      failDuration: 0,
      maxFails: 0,
      unhealthyRequestCount: 0,
      unhealthyStatus: [],
      unhealthyLatency: 0,
    };
  }
  checkFields(raw, [
    "fail_duration",
    "max_fails",
    "unhealthy_request_count",
    "unhealthy_status",
    "unhealthy_latency",
  ], where);
  const failDuration = optDuration(raw, "fail_duration", where) ?? 0;
  return {
    failDuration,
    maxFails: optNumber(raw, "max_fails", where) ?? (failDuration > 0 ? 1 : 0),
    unhealthyRequestCount: optNumber(raw, "unhealthy_request_count", where) ?? 0,
    unhealthyStatus: (raw.unhealthy_status as number[] | undefined) ?? [],
    unhealthyLatency: optDuration(raw, "unhealthy_latency", where) ?? 0,
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
  /** Config path for error messages. */
  where: string;
  /** Whether the upstreams speak TLS. */
  tls: boolean;
  /** Called when an upstream changes state. */
  onChange: (u: Upstream, healthy: boolean) => void;
  /** Only check the config: no timer, no request. */
  validating?: boolean;
}

/** Starts active health checks for the upstreams; null when not configured. */
export function startActive(
  raw: Raw | undefined,
  upstreams: Upstream[],
  options: ActiveOptions,
): ActiveChecker | null {
  if (!raw) return null;
  const { where, tls, onChange } = options;
  checkFields(raw, [
    "uri",
    "path",
    "port",
    "headers",
    "method",
    "body",
    "interval",
    "timeout",
    "max_size",
    "expect_status",
    "expect_body",
    "passes",
    "fails",
  ], where);
  const uri = optString(raw, "uri", where) || optString(raw, "path", where) || "";
  if (!uri) return null;
  const port = optNumber(raw, "port", where) ?? 0;
  const headers = (optObject(raw, "headers", where) ?? {}) as Record<string, string[]>;
  const interval = optDuration(raw, "interval", where) || 30_000;
  const timeout = optDuration(raw, "timeout", where) || 5_000;
  const expectStatus = optNumber(raw, "expect_status", where) ?? 0;
  const bodyRaw = optString(raw, "expect_body", where);
  const expectBody = bodyRaw ? goRegExp(bodyRaw) : null;
  const maxSize = optNumber(raw, "max_size", where) ?? 0;
  const method = (optString(raw, "method", where) || "GET").toUpperCase();
  if (!/^[A-Z0-9!#$%&'*+.^_`|~-]+$/.test(method)) {
    throw new ConfigError("invalid_config", `${where}.method: not a method: ${method}`);
  }
  const reqBody = optString(raw, "body", where) ?? "";
  // consecutive results needed to change a host's state (Caddy's default: 1 each)
  const passes = Math.max(1, optNumber(raw, "passes", where) ?? 1);
  const fails = Math.max(1, optNumber(raw, "fails", where) ?? 1);
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
