/**
 * Gatehousefile syntax of listener wrappers (global `servers { listener_wrappers { ... } }`):
 * `http_redirect`, `tls` (a marker for where TLS goes in the chain) and `proxy_protocol`.
 *
 * @module
 */
import type { Dispenser } from "../../caddyfile/dispenser.ts";
import type { SyntaxSet } from "../../caddyfile/registry.ts";
import { parseDuration } from "../../config/duration.ts";

const POLICIES = ["IGNORE", "USE", "REJECT", "REQUIRE", "SKIP"];

/** `proxy_protocol { timeout <d>; allow <ranges...>; deny <ranges...>; fallback_policy <p> }`. */
export function proxyProtocolWrapper(d: Dispenser): Record<string, unknown> {
  d.next();
  if (d.nextArg()) throw d.argErr();
  const w: Record<string, unknown> = {};
  for (const n = d.nesting(); d.nextBlock(n);) {
    switch (d.val()) {
      case "timeout":
        if (!d.nextArg()) throw d.argErr();
        try {
          const v = parseDuration(d.val());
          if (v !== 0) w.timeout = v;
        } catch (e) {
          throw d.err(`parsing proxy_protocol timeout duration: ${(e as Error).message}`);
        }
        break;
      case "allow":
      case "deny": {
        const k = d.val();
        const a = d.remainingArgs();
        if (a.length) w[k] = [...((w[k] as string[]) ?? []), ...a];
        break;
      }
      case "fallback_policy": {
        if (!d.nextArg()) throw d.argErr();
        const p = d.val().toUpperCase();
        if (!POLICIES.includes(p)) throw d.err(`${d.val()} is invalid policy`);
        if (p !== "IGNORE") w.fallback_policy = p;
        else delete w.fallback_policy;
        break;
      }
      default:
        throw d.argErr();
    }
  }
  return w;
}

/** The Gatehousefile syntax of the listener wrappers. */
export const syntax: SyntaxSet = {
  modules: {
    "caddy.listeners.http_redirect": () => ({}),
    "caddy.listeners.tls": () => ({}),
    "caddy.listeners.proxy_protocol": proxyProtocolWrapper,
  },
};
