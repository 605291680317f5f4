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
import { Decoder } from "../config/decode.ts";

/** The decoded `on_demand` section. */
export interface OnDemandConfig {
  /** Permission endpoint (`ask` or `permission.endpoint`). */
  endpoint?: string;
  /** Rate limit of on-demand obtains. */
  rateLimit?: { intervalMs: number; burst: number };
}

function checkUrl(d: Decoder, key: string): string {
  const v = d.value(key);
  if (typeof v !== "string" || !v) d.failAt(key, "must be a URL");
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    d.failAt(key, `not a URL: ${JSON.stringify(v)}`);
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") {
    d.failAt(key, "must be an http or https URL");
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
  const r: Decoder = Decoder.of(raw, where).fields(["ask", "permission", "rate_limit"]);
  const out: OnDemandConfig = {};
  if (r.value("ask") !== undefined && r.value("permission") !== undefined) {
    r.fail("ask and permission are two ways to say the same; give one");
  }
  if (r.value("ask") !== undefined) out.endpoint = checkUrl(r, "ask");
  if (r.value("permission") !== undefined) {
    const p: Decoder = Decoder.of(r.value("permission"), r.at("permission"));
    if (p.value("module") !== "http") {
      p.failAt(
        "module",
        `only "http" is available, got ${JSON.stringify(p.value("module"))}`,
        "unsupported",
      );
    }
    p.fields(["module", "endpoint"]);
    out.endpoint = checkUrl(p, "endpoint");
  }
  if (r.value("rate_limit") !== undefined) {
    const rl: Decoder = Decoder.of(r.value("rate_limit"), r.at("rate_limit")).fields([
      "interval",
      "burst",
    ]);
    const intervalMs = durationMs(rl.value("interval"), rl.at("interval"));
    const burst = rl.value("burst");
    if (!(intervalMs > 0) || typeof burst !== "number" || !Number.isInteger(burst) || burst < 1) {
      rl.fail(
        "interval (a positive duration) and burst (a positive integer) are both required",
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
