/**
 * Gatehousefile syntax of `rate_limit`, as caddy-ratelimit's `UnmarshalCaddyfile`
 * (`caddyfile.go`), with the plugin's messages. Durations become nanoseconds, as `caddy adapt`
 * writes a `caddy.Duration`. The directive's place in the default order is the plugin's:
 * before `basic_auth` (`lib/server/caddyfile/registry.ts`).
 *
 * ```
 * rate_limit [<matcher>] {
 *     zone <name> {
 *         match { <matchers> }
 *         key         <string>
 *         window      <duration>
 *         events      <max_events>
 *         ipv4_prefix <bits>
 *         ipv6_prefix <bits>
 *     }
 *     distributed { read_interval <duration>; write_interval <duration>; purge_age <duration> }
 *     log_key
 *     disable_metrics
 *     storage <module...>
 *     jitter <percent>
 *     sweep_interval <duration>
 * }
 * ```
 *
 * @module
 */
import type { Dispenser } from "../../../caddyfile/dispenser.ts";
import type { Helper } from "../../../caddyfile/helper.ts";
import { type SyntaxSet, unmarshalModule } from "../../../caddyfile/registry.ts";
import { parseNestedMatcherSet } from "../../matchers/caddyfile.ts";
import { durationText } from "../../../config/duration.ts";
import {
  type DistributedConfig,
  RATE_LIMIT_FIELDS,
  type RateLimitConfig,
  type ZoneConfig,
} from "./config.ts";

/** Go's `strconv.Atoi` message for text that is no integer. */
function atoi(d: Dispenser, what: string): number {
  const v = d.val();
  if (!/^[+-]?\d+$/.test(v) || !Number.isSafeInteger(Number(v))) {
    throw d.err(`invalid ${what} integer '${v}': strconv.Atoi: parsing "${v}": invalid syntax`);
  }
  return Number(v);
}

function zone(d: Dispenser): ZoneConfig {
  const z: ZoneConfig = {};
  let events = 0;
  let window = 0;
  for (const n = d.nesting(); d.nextBlock(n);) {
    switch (d.val()) {
      case "key":
        if (!d.nextArg()) throw d.argErr();
        if (z.key) throw d.err(`zone key already specified: ${z.key}`);
        z.key = d.val();
        break;
      case "window":
        if (!d.nextArg()) throw d.argErr();
        if (window !== 0) throw d.err(`zone window already specified: ${durationText(window)}`);
        window = d.duration((t, r) => `invalid window duration '${t}': ${r}`);
        z.window = window;
        break;
      case "events":
        if (!d.nextArg()) throw d.argErr();
        if (events !== 0) throw d.err(`zone max events already specified: ${events}`);
        events = atoi(d, "max events");
        z.max_events = events;
        break;
      case "ipv4_prefix":
      case "ipv6_prefix": {
        const k = d.val() as "ipv4_prefix" | "ipv6_prefix";
        if (!d.nextArg()) throw d.argErr();
        if (z[k]) throw d.err(`zone ${k} already specified: ${z[k]}`);
        const v = atoi(d, k);
        if (v !== 0) z[k] = v;
        break;
      }
      case "match": {
        let set: Record<string, unknown>;
        try {
          set = parseNestedMatcherSet(d);
        } catch (e) {
          throw d.err(`failed to parse match: ${(e as Error).message}`);
        }
        z.match = [...(z.match ?? []), set];
        break;
      }
      default:
        throw d.err(`unrecognized subdirective '${d.val()}'`);
    }
  }
  if (window === 0 || events === 0) {
    throw d.err("a rate limit zone requires both a window and maximum events");
  }
  return z;
}

function distributed(d: Dispenser): DistributedConfig {
  const o: DistributedConfig = {};
  const set = (k: keyof DistributedConfig, what: string) => {
    if (!d.nextArg()) throw d.argErr();
    if (o[k] !== undefined) {
      throw d.err(`${what} already specified: ${durationText(o[k])}`);
    }
    o[k] = d.duration((t, r) => `invalid ${what} '${t}': ${r}`);
  };
  for (const n = d.nesting(); d.nextBlock(n);) {
    switch (d.val()) {
      case "read_interval":
        set("read_interval", "read interval");
        break;
      case "write_interval":
        set("write_interval", "write interval");
        break;
      case "purge_age":
        set("purge_age", "purge age");
        break;
      default:
        throw d.err(`unrecognized subdirective '${d.val()}'`);
    }
  }
  return o;
}

/** `rate_limit`: see the module documentation. */
export function parseRateLimit(h: Helper): RateLimitConfig {
  const out: RateLimitConfig = { handler: "rate_limit" };
  while (h.next()) {
    if (h.nextArg()) throw h.argErr();
    for (const n = h.nesting(); h.nextBlock(n);) {
      switch (h.val()) {
        case "zone": {
          if (!h.nextArg()) throw h.argErr();
          const name = h.val();
          (out.rate_limits ??= {})[name] = zone(h);
          break;
        }
        case "distributed":
          out.distributed = distributed(h);
          break;
        case "log_key":
          if (h.nextArg()) throw h.argErr();
          out.log_key = true;
          break;
        case "disable_metrics":
          if (h.nextArg()) throw h.argErr();
          out.disable_metrics = true;
          break;
        case "storage": {
          if (!h.nextArg()) throw h.argErr();
          const name = h.val();
          const s = unmarshalModule(h, `caddy.storage.${name}`) as Record<string, unknown>;
          out.storage = { ...s, module: name };
          break;
        }
        case "jitter": {
          if (!h.nextArg()) throw h.argErr();
          if (out.jitter) throw h.err(`jitter already specified: ${out.jitter}`);
          const v = h.val();
          const f = Number(v);
          if (v.trim() === "" || v !== v.trim() || !Number.isFinite(f)) {
            throw h.err(
              `invalid jitter percentage '${v}': strconv.ParseFloat: parsing "${v}": invalid syntax`,
            );
          }
          if (f !== 0) out.jitter = f;
          break;
        }
        case "sweep_interval":
          if (!h.nextArg()) throw h.argErr();
          if (out.sweep_interval) {
            throw h.err(
              `sweep interval already specified: ${durationText(out.sweep_interval)}`,
            );
          }
          out.sweep_interval = h.duration((t, r) => `invalid sweep interval '${t}': ${r}`);
          break;
        default:
          throw h.err(`unrecognized subdirective '${h.val()}'`);
      }
    }
  }
  // the plugin's field order, as `caddy adapt` writes the struct
  const ordered: RateLimitConfig = { handler: "rate_limit" };
  for (const k of RATE_LIMIT_FIELDS) {
    if (out[k] !== undefined) (ordered as Record<string, unknown>)[k] = out[k];
  }
  return ordered;
}

/** The Gatehousefile syntax of `rate_limit`. */
export const syntax: SyntaxSet = {
  handlerDirectives: { rate_limit: parseRateLimit },
};
