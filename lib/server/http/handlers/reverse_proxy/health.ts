/**
 * Health checks of `reverse_proxy`. Active: every `interval` (default 30s) each upstream gets
 * `<method> uri` (`GET` unless `method` says otherwise; on `port` if set, with `headers` and
 * `body`; a `unix//path` upstream over its socket with Host `localhost`, and no `port`), healthy when the status matches
 * `expect_status` (a single digit is a class; default 2xx/3xx) and the body `expect_body`,
 * within `timeout` (default 5s); a host changes state after `passes` (healthy again) or `fails`
 * (unhealthy) checks in a row (default 1 each); with the transport's `proxy_protocol`, each
 * check's connection starts with the header of a connection relaying no client. Passive: failures (errors, `unhealthy_status`,
 * `unhealthy_latency`) are remembered for `fail_duration`; `max_fails` of them make a host
 * unavailable; `unhealthy_request_count` caps concurrent requests per upstream.
 *
 * @module
 */
import { type Duration, durationMs } from "../../../config/duration.ts";
import { goRegExp } from "../../../config/regexp.ts";
import type { ActiveHealthChecksConfig, PassiveHealthChecksConfig } from "./config.ts";
import { dialNetwork, type Upstream } from "./upstreams.ts";
import { ConfigError } from "../../../config/error.ts";
import { loadNodeHttp } from "./transport.ts";
import { H1Pool } from "./h1client.ts";
import { proxyProtocolLocal, type ProxyProtocolVersion } from "./proxy_protocol.ts";

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
  /**
   * The transport's `proxy_protocol`: each check's connection starts with the header of a
   * connection that relays no client (proxy_protocol.ts `proxyProtocolLocal`), sent by the
   * proxy's own HTTP/1.1 client.
   */
  proxyProtocol?: ProxyProtocolVersion;
}

/** One check's request, as `checkOnce` sends it. */
interface CheckRequest {
  dial: string;
  method: string;
  uri: string;
  fields: [string, string][];
  body: string;
  timeout: number;
  maxSize: number;
}

/**
 * One check over the proxy's HTTP/1.1 client (for `proxy_protocol`, whose header node:http
 * cannot send first): the status, and the body (up to `maxSize` bytes, 0: all) when `read`.
 */
async function checkOnce(
  pool: H1Pool,
  r: CheckRequest,
  preface: Uint8Array,
  read: boolean,
  signal: AbortSignal,
): Promise<{ status: number; body: string }> {
  const gone = new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve()));
  const body = r.body ? new Blob([r.body]).stream() : null;
  const fields = body ? [...r.fields, ["content-length", String(new Blob([r.body]).size)]] : [
    ...r.fields,
  ];
  const res = await pool.roundTrip({
    dial: r.dial,
    method: r.method,
    target: r.uri,
    fields: fields as [string, string][],
    contentLength: body !== null,
    body,
    dialTimeout: r.timeout,
    headerTimeout: r.timeout,
    clientDone: gone,
    onDone() {},
    preface: { bytes: preface, key: r.dial },
  });
  let text = "";
  if (res.body instanceof Uint8Array) text = new TextDecoder().decode(res.body);
  else if (res.body) {
    if (!read) await res.body.cancel();
    else {
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      while (!r.maxSize || text.length < r.maxSize) {
        const { done, value } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
      await reader.cancel().catch(() => {});
    }
  }
  return { status: res.status, body: r.maxSize ? text.slice(0, r.maxSize) : text };
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
  const socket = upstreams.find((u) => u.dial.startsWith("unix/"));
  if (port && socket) {
    const where = "http.handlers.reverse_proxy.health_checks.active.port";
    throw new ConfigError(
      "invalid_config",
      `${where}: upstream ${socket.dial} is a unix socket, which has no port to check`,
      { path: where },
    );
  }
  if (options.validating) return { stop() {}, runOnce: () => Promise.resolve() };
  const aborts = new Set<AbortController>();
  let stopped = false;
  const version = options.proxyProtocol;
  // a connection per check, as node:http's `connection: close`
  const pool = version
    ? new H1Pool(tls ? { insecure: true } : null, {}, { keepAlive: false })
    : null;

  /** A check with the PROXY header first (see `checkOnce`). */
  const checkProxied = async (u: Upstream, p: number, host: string): Promise<boolean> => {
    const socket = u.dial.startsWith("unix/");
    const { network } = dialNetwork(u.dial);
    const at = host.includes(":") ? `[${host}]:${p}` : `${host}:${p}`;
    const fields: [string, string][] = [];
    let hostField = socket ? "localhost" : at;
    for (const [k, v] of Object.entries(headers)) {
      const value = Array.isArray(v) ? v.join(", ") : String(v);
      if (k.toLowerCase() === "host") hostField = value;
      else fields.push([k.toLowerCase(), value]);
    }
    const ac = new AbortController();
    aborts.add(ac);
    const timer = setTimeout(() => ac.abort(), timeout);
    try {
      const res = await checkOnce(
        pool!,
        {
          dial: socket ? u.dial : network === "tcp" ? at : `${network}/${at}`,
          method,
          uri,
          fields: [["host", hostField], ...fields, ["connection", "close"]],
          body: reqBody,
          timeout,
          maxSize,
        },
        proxyProtocolLocal(version!),
        expectBody !== null,
        ac.signal,
      );
      const okStatus = expectStatus
        ? statusMatches(res.status, expectStatus)
        : res.status >= 200 && res.status < 400;
      return okStatus && (!expectBody || expectBody.test(res.body));
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
      aborts.delete(ac);
    }
  };

  const check = async (u: Upstream): Promise<boolean> => {
    if (pool) {
      const host = u.dialHost;
      return await checkProxied(u, port || (u.dialPort ? Number(u.dialPort) : 80), host);
    }
    const { http, https } = await loadNodeHttp();
    return await new Promise<boolean>((resolve) => {
      // a unix socket upstream is checked over its socket, as "localhost" (Caddy's Host)
      const socketPath = u.dial.startsWith("unix/") ? u.dial.slice(5) : null;
      const host = socketPath === null ? u.dialHost : "localhost";
      const p = port || (u.dialPort ? Number(u.dialPort) : 80);
      const family = dialNetwork(u.dial).network === "tcp4"
        ? 4
        : dialNetwork(u.dial).network === "tcp6"
        ? 6
        : undefined;
      const secure = tls && socketPath === null;
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
      const req = (secure ? https : http).request({
        ...(socketPath === null
          ? { host, port: p, ...(family ? { family } : {}) }
          : { socketPath }),
        path: uri,
        method,
        headers: {
          host: hdrs.Host ?? hdrs.host ?? (socketPath === null ? `${host}:${p}` : host),
          ...hdrs,
          connection: "close",
        },
        signal: ac.signal,
        ...(secure ? { rejectUnauthorized: false } : {}),
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
      pool?.close();
      void first;
    },
    runOnce,
  };
}
