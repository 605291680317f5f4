/**
 * On-demand TLS (Caddy's `apps.tls.automation.on_demand` with a policy's `on_demand: true`):
 * a certificate is obtained during the first TLS handshake for a name no certificate covers,
 * when that name's automation policy has `on_demand` and the permission check allows it.
 *
 * Config (`automation.on_demand`):
 * - `ask` (Caddy 2.6): a URL; `GET <ask>?domain=<name>` answering 2xx allows the name,
 *   anything else (or no answer within 10 s) denies it.
 * - `permission` (Caddy 2.7+): `{"module": "http", "endpoint": "<url>"}`, the same check.
 * - `rate_limit`: `{"interval": <duration>, "burst": <n>}`: at most `burst` on-demand
 *   obtains per `interval` (both required together).
 *
 * Without `ask`/`permission` every name is allowed (as in Caddy 2.6, which warns): anyone who
 * can point a name at the server then makes it obtain a certificate, so a startup warning is
 * logged. A denied name gets no certificate and the handshake fails; nothing is ordered.
 *
 * @module
 */
import { durationMs } from "../config/duration.ts";
import type { Logger } from "../module/instance.ts";
import { tlsCheckFields } from "./certificates.ts";
import { ConfigError } from "../config/error.ts";

/** The decoded `on_demand` section. */
export interface OnDemandConfig {
  /** Permission endpoint (`ask` or `permission.endpoint`). */
  endpoint?: string;
  /** Rate limit of on-demand obtains. */
  rateLimit?: { intervalMs: number; burst: number };
}

type Raw = Record<string, unknown>;

function checkUrl(v: unknown, where: string): string {
  if (typeof v !== "string" || !v) {
    throw new ConfigError("invalid_config", `${where}: must be a URL`);
  }
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new ConfigError("invalid_config", `${where}: not a URL: ${JSON.stringify(v)}`);
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") {
    throw new ConfigError("invalid_config", `${where}: must be an http or https URL`);
  }
  return v;
}

/**
 * Decodes `automation.on_demand`.
 *
 * @example
 * ```ts
 * import { decodeOnDemand } from "./on_demand.ts";
 * decodeOnDemand({ ask: "http://127.0.0.1:9000/ask" }, "tls.automation.on_demand").endpoint;
 * ```
 */
export function decodeOnDemand(raw: unknown, where: string): OnDemandConfig {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new ConfigError("invalid_config", `${where}: must be an object`);
  }
  const r = raw as Raw;
  tlsCheckFields(r, ["ask", "permission", "rate_limit"], where);
  const out: OnDemandConfig = {};
  if (r.ask !== undefined && r.permission !== undefined) {
    throw new ConfigError(
      "invalid_config",
      `${where}: ask and permission are two ways to say the same; give one`,
    );
  }
  if (r.ask !== undefined) out.endpoint = checkUrl(r.ask, `${where}.ask`);
  if (r.permission !== undefined) {
    const p = r.permission as Raw;
    if (typeof p !== "object" || p === null || Array.isArray(p)) {
      throw new ConfigError("invalid_config", `${where}.permission: must be an object`);
    }
    if (p.module !== "http") {
      throw new ConfigError(
        "unsupported",
        `${where}.permission.module: only "http" is available, got ${JSON.stringify(p.module)}`,
      );
    }
    tlsCheckFields(p, ["module", "endpoint"], `${where}.permission`);
    out.endpoint = checkUrl(p.endpoint, `${where}.permission.endpoint`);
  }
  if (r.rate_limit !== undefined) {
    const rl = r.rate_limit as Raw;
    if (typeof rl !== "object" || rl === null || Array.isArray(rl)) {
      throw new ConfigError("invalid_config", `${where}.rate_limit: must be an object`);
    }
    tlsCheckFields(rl, ["interval", "burst"], `${where}.rate_limit`);
    const intervalMs = durationMs(rl.interval, `${where}.rate_limit.interval`);
    const burst = rl.burst;
    if (!(intervalMs > 0) || typeof burst !== "number" || !Number.isInteger(burst) || burst < 1) {
      throw new ConfigError(
        "invalid_config",
        `${where}.rate_limit: interval (a positive duration) and burst (a positive integer) ` +
          `are both required`,
      );
    }
    out.rateLimit = { intervalMs, burst };
  }
  return out;
}

/** Decides whether a name may get a certificate on demand. */
export class OnDemand {
  readonly #events: number[] = [];
  readonly #inflight = new Map<string, Promise<boolean>>();

  constructor(readonly config: OnDemandConfig, readonly log: Logger) {
    if (!config.endpoint) {
      log.warn(
        "on-demand TLS has no ask or permission endpoint: any name pointed at this server " +
          "will get a certificate; set automation.on_demand.ask",
      );
    }
  }

  /** Asks the permission endpoint (and the rate limit) whether `name` may be obtained. */
  allowed(name: string): Promise<boolean> {
    let p = this.#inflight.get(name);
    if (!p) {
      p = this.#decide(name).finally(() => this.#inflight.delete(name));
      this.#inflight.set(name, p);
    }
    return p;
  }

  async #decide(name: string): Promise<boolean> {
    if (this.config.endpoint) {
      const url = new URL(this.config.endpoint);
      url.searchParams.set("domain", name);
      let status = 0;
      try {
        const res = await fetch(url, { signal: AbortSignal.timeout(10_000), redirect: "manual" });
        status = res.status;
        await res.body?.cancel();
      } catch (e) {
        this.log.error("on-demand permission endpoint failed; denying", {
          identifier: name,
          endpoint: this.config.endpoint,
          error: (e as Error).message,
        });
        return false;
      }
      if (status < 200 || status > 299) {
        this.log.info("certificate not allowed by the on-demand permission endpoint", {
          identifier: name,
          status,
        });
        return false;
      }
    }
    const rl = this.config.rateLimit;
    if (rl) {
      const now = Date.now();
      while (this.#events.length && this.#events[0] <= now - rl.intervalMs) this.#events.shift();
      if (this.#events.length >= rl.burst) {
        this.log.warn("on-demand certificate rate limit reached; denying", {
          identifier: name,
          interval_ms: rl.intervalMs,
          burst: rl.burst,
        });
        return false;
      }
      this.#events.push(now);
    }
    return true;
  }
}
