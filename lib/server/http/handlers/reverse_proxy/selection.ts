/**
 * Load-balancing selection policies (`http.reverse_proxy.selection_policies.*`): `random`,
 * `random_choose`, `least_conn`, `round_robin`, `weighted_round_robin`, `first`, `ip_hash`,
 * `client_ip_hash`, `uri_hash`, `query`, `header`, `cookie`. Hash policies use rendezvous
 * hashing so a key keeps its upstream while that upstream stays available.
 *
 * @module
 */
import type { RequestContext } from "../../context.ts";
import type { SelectionPolicyConfig } from "./config.ts";
import type { Upstream } from "./upstreams.ts";

/** Picks an upstream among the available ones; may add response headers (cookie policy). */
export interface SelectionPolicy {
  /** Returns the chosen upstream or null. `avail` tests availability. */
  select(pool: Upstream[], c: RequestContext, avail: (u: Upstream) => boolean): Upstream | null;
}

/** FNV-1a 32-bit hash. */
export function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

function hashSelect(
  pool: Upstream[],
  key: string,
  avail: (u: Upstream) => boolean,
): Upstream | null {
  let best: Upstream | null = null;
  let bestScore = -1;
  for (const u of pool) {
    if (!avail(u)) continue;
    const score = fnv1a(`${key}\u0000${u.dial}`);
    if (score > bestScore) {
      bestScore = score;
      best = u;
    }
  }
  return best;
}

function randomAvail(pool: Upstream[], avail: (u: Upstream) => boolean): Upstream | null {
  let chosen: Upstream | null = null;
  let count = 0;
  for (const u of pool) {
    if (!avail(u)) continue;
    count++;
    if (Math.random() * count < 1) chosen = u;
  }
  return chosen;
}

function leastConn(pool: Upstream[], avail: (u: Upstream) => boolean): Upstream | null {
  let best: Upstream | null = null;
  let ties = 0;
  for (const u of pool) {
    if (!avail(u)) continue;
    if (best === null || u.host.numRequests < best.host.numRequests) {
      best = u;
      ties = 1;
    } else if (u.host.numRequests === best.host.numRequests) {
      ties++;
      if (Math.random() * ties < 1) best = u;
    }
  }
  return best;
}

async function hmacHex(secret: string, data: string): Promise<string> {
  const enc = new TextEncoder();
  if (!secret) {
    const d = await crypto.subtle.digest("SHA-256", enc.encode(data));
    return [...new Uint8Array(d)].map((b) => b.toString(16).padStart(2, "0")).join("");
  }
  const key = await crypto.subtle.importKey(
    "raw",
    enc.encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    [
      "sign",
    ],
  );
  const sig = await crypto.subtle.sign("HMAC", key, enc.encode(data));
  return [...new Uint8Array(sig)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function cookieValue(c: RequestContext, name: string): string | null {
  const h = c.headers.get("cookie");
  if (!h) return null;
  for (const part of h.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

/** Cookie policy: sticky sessions through a cookie holding an HMAC of the upstream. */
export class CookiePolicy implements SelectionPolicy {
  readonly #name: string;
  readonly #secret: string;
  #hashes = new Map<string, string>();
  /** Creates the policy; call `prepare` with the pool before use. */
  constructor(name: string, secret: string) {
    this.#name = name || "lb";
    this.#secret = secret;
  }
  /** Precomputes the cookie value of each upstream. */
  async prepare(pool: Upstream[]): Promise<void> {
    for (const u of pool) {
      if (!this.#hashes.has(u.dial)) this.#hashes.set(u.dial, await hmacHex(this.#secret, u.dial));
    }
  }
  /** Selects by cookie, else randomly, setting the cookie. */
  select(pool: Upstream[], c: RequestContext, avail: (u: Upstream) => boolean): Upstream | null {
    const v = cookieValue(c, this.#name);
    if (v) {
      for (const u of pool) if (this.#hashes.get(u.dial) === v && avail(u)) return u;
    }
    const u = randomAvail(pool, avail);
    if (u) {
      c.responseHeaders().append(
        "set-cookie",
        `${this.#name}=${this.#hashes.get(u.dial)}; Path=/`,
      );
    }
    return u;
  }
}

/**
 * Builds a selection policy from a decoded `{"policy": "...", ...}` config.
 *
 * @example
 * ```ts
 * import { selectionPolicy } from "./selection.ts";
 * const p = selectionPolicy({ policy: "round_robin" });
 * ```
 */
export function selectionPolicy(config: SelectionPolicyConfig | undefined): SelectionPolicy {
  // the options are read as given (not type-checked), as they always were
  const raw = config as Record<string, unknown> | undefined;
  const name = config?.policy ?? "random";
  switch (name) {
    case "random":
      return { select: (pool, _c, avail) => randomAvail(pool, avail) };
    case "random_choose": {
      const n = Number(raw?.choose ?? 2);
      return {
        select(pool, _c, avail) {
          const candidates = pool.filter(avail).sort(() => Math.random() - 0.5).slice(0, n);
          return leastConn(candidates, () => true);
        },
      };
    }
    case "least_conn":
      return { select: (pool, _c, avail) => leastConn(pool, avail) };
    case "round_robin": {
      let i = 0;
      return {
        select(pool, _c, avail) {
          for (let k = 0; k < pool.length; k++) {
            const u = pool[i++ % pool.length];
            if (avail(u)) return u;
          }
          return null;
        },
      };
    }
    case "weighted_round_robin": {
      const weights = (raw?.weights as number[] | undefined) ?? [];
      let i = 0;
      return {
        select(pool, _c, avail) {
          const seq: Upstream[] = [];
          pool.forEach((u, k) => {
            for (let w = 0; w < (weights[k] ?? 1); w++) seq.push(u);
          });
          for (let k = 0; k < seq.length; k++) {
            const u = seq[i++ % seq.length];
            if (avail(u)) return u;
          }
          return null;
        },
      };
    }
    case "first":
      return { select: (pool, _c, avail) => pool.find(avail) ?? null };
    case "ip_hash":
      return { select: (pool, c, avail) => hashSelect(pool, c.remoteHost, avail) };
    case "client_ip_hash":
      return { select: (pool, c, avail) => hashSelect(pool, c.clientIP, avail) };
    case "uri_hash":
      return { select: (pool, c, avail) => hashSelect(pool, c.uri, avail) };
    case "query": {
      const key = String(raw?.key ?? "");
      return {
        select(pool, c, avail) {
          const v = new URLSearchParams(c.query).getAll(key).join(",");
          return v ? hashSelect(pool, v, avail) : randomAvail(pool, avail);
        },
      };
    }
    case "header": {
      const field = String(raw?.field ?? "").toLowerCase();
      return {
        select(pool, c, avail) {
          const v = field === "host" ? c.host : c.headers.get(field);
          return v ? hashSelect(pool, v, avail) : randomAvail(pool, avail);
        },
      };
    }
    case "cookie":
      return new CookiePolicy(String(raw?.name ?? "lb"), String(raw?.secret ?? ""));
  }
}
