/**
 * Upstreams and the global upstream pool. A `Host` (one per dial address, shared by every
 * proxy handler and surviving config reloads while referenced) counts `num_requests` and
 * passive-health `fails`; an `Upstream` is one handler's view of a host with its own active
 * health state and `max_requests`. `GET /reverse_proxy/upstreams` lists the pool.
 *
 * @module
 */
import type { AdminRoute } from "../../../module/mod.ts";
import type { RequestContext } from "../../context.ts";
import { compileTemplate, type Template } from "../../replacer.ts";

/**
 * Splits a dial address (`host:port`, `[v6]:port`) into host and port; the port is "" when
 * the address has none (and for `unix/` paths, which come back whole as the host).
 *
 * @example
 * ```ts
 * import { splitDial } from "./upstreams.ts";
 * splitDial("[::1]:8080"); // { host: "::1", port: "8080" }
 * ```
 */
export function splitDial(dial: string): { host: string; port: string } {
  const m = /^\[?([^\]]*?)\]?:(\d+)$/.exec(dial);
  return m ? { host: m[1], port: m[2] } : { host: dial, port: "" };
}

/** Shared per-address counters. */
export class Host {
  /** Dial address. */
  readonly address: string;
  /** Requests in flight. */
  numRequests = 0;
  /** Remembered failures (passive health checks). */
  fails = 0;
  /** References from provisioned handlers. */
  refs = 0;
  /** Creates a host. */
  constructor(address: string) {
    this.address = address;
  }
}

const pool = new Map<string, Host>();

/** Takes a reference to the pooled host for an address. */
export function acquireHost(address: string): Host {
  let h = pool.get(address);
  if (!h) pool.set(address, h = new Host(address));
  h.refs++;
  return h;
}

/** Drops a reference; the host leaves the pool when unreferenced. */
export function releaseHost(host: Host): void {
  host.refs--;
  if (host.refs <= 0 && pool.get(host.address) === host) pool.delete(host.address);
}

/** The upstream record of the admin API. */
export interface UpstreamRecord {
  /** Dial address. */
  address: string;
  /** Active requests. */
  num_requests: number;
  /** Remembered failures. */
  fails: number;
}

/** Every host of the pool as admin API records. */
export function upstreamRecords(): UpstreamRecord[] {
  return [...pool.values()].map((h) => ({
    address: h.address,
    num_requests: h.numRequests,
    fails: h.fails,
  }));
}

/** The admin route serving `GET /reverse_proxy/upstreams`. */
export const upstreamsAdminRoute: AdminRoute = {
  pattern: "/reverse_proxy/upstreams",
  handle(request) {
    if (request.method !== "GET") {
      return new Response(JSON.stringify({ error: "method not allowed" }) + "\n", {
        status: 405,
        headers: { "content-type": "application/json", allow: "GET" },
      });
    }
    return new Response(JSON.stringify(upstreamRecords()) + "\n", {
      headers: { "content-type": "application/json" },
    });
  },
};

/** Passive health check limits that decide availability. */
export interface PassiveLimits {
  /** Fails at which a host is unavailable (0 = not counted). */
  maxFails: number;
  /** Whole-proxy concurrent request limit per upstream (0 = none). */
  unhealthyRequestCount: number;
}

/** True when a dial address holds placeholders only known per request (not `env.`/`system.`). */
export function dialIsDynamic(dial: string): boolean {
  for (const m of dial.matchAll(/\{([^}]+)\}/g)) {
    if (!m[1].startsWith("env.") && !m[1].startsWith("system.")) return true;
  }
  return false;
}

/** One static upstream. */
export type UpstreamConfig = {
  /**
   * The network address dialed (`host:port`, `unix//path`); placeholders allowed: `env.` and
   * `system.` ones are resolved at load, others per request.
   */
  dial?: string;
  /** Requests at once to this upstream (overrides `unhealthy_request_count`; 0: no limit). */
  max_requests?: number;
};

/** One handler's upstream. */
export class Upstream {
  /**
   * Dial address as configured: `env.`/`system.` placeholders are resolved at provision;
   * others (a `map` output, a regexp capture...) per request, when `dynamic` is true.
   */
  readonly dial: string;
  /** True when the dial address is only known per request. */
  readonly dynamic: boolean;
  /** Pooled counters. */
  readonly host: Host;
  /** Per-upstream concurrent request limit (0 = none). */
  readonly maxRequests: number;
  /** Marked unhealthy by active health checks. */
  unhealthy = false;
  /** Weight for weighted_round_robin. */
  weight = 1;
  /** Host part of the dial address (`{http.reverse_proxy.upstream.host}`). */
  readonly dialHost: string;
  /** Port part of the dial address, "" when it has none. */
  readonly dialPort: string;

  /** Creates an upstream bound to the pooled host. */
  constructor(dial: string, maxRequests: number) {
    this.dial = dial;
    this.dynamic = dialIsDynamic(dial);
    const { host, port } = splitDial(dial);
    this.dialHost = host;
    this.dialPort = port;
    this.host = acquireHost(dial);
    this.maxRequests = maxRequests;
  }

  /** Available under the given passive limits: healthy and not full. */
  available(limits: PassiveLimits): boolean {
    if (this.unhealthy) return false;
    if (limits.maxFails > 0 && this.host.fails >= limits.maxFails) return false;
    const max = this.maxRequests || limits.unhealthyRequestCount;
    if (max > 0 && this.host.numRequests >= max) return false;
    return true;
  }
}

/**
 * The upstreams of decoded `upstreams`: each `dial` with `env.`/`system.` placeholders
 * resolved now, others (request placeholders) kept as templates rendered per request.
 */
export function provisionUpstreams(
  list: readonly UpstreamConfig[] | undefined,
): { upstreams: Upstream[]; dialTemplates: Map<Upstream, Template> } {
  const upstreams: Upstream[] = [];
  for (const u of list ?? []) {
    let dial = u.dial ?? "";
    if (!dialIsDynamic(dial)) dial = compileTemplate(dial).render({} as RequestContext);
    upstreams.push(new Upstream(dial, u.max_requests ?? 0));
  }
  const dialTemplates = new Map(
    upstreams.filter((x) => x.dynamic).map((x) => [x, compileTemplate(x.dial)] as const),
  );
  return { upstreams, dialTemplates };
}
