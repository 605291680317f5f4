/**
 * `rate_limit` → `rate_limit { zone ... }` (the inverse of `caddyfile.ts`).
 *
 * @module
 */
import type { HandlerReverser } from "../../../caddyfile/writer/context.ts";
import { nestedSetLines } from "../../../caddyfile/writer/matchers.ts";
import { childPath, Fields, isObject } from "../../../caddyfile/writer/problems.ts";
import { bare, type Line, line, word } from "../../../caddyfile/writer/tokens.ts";
import { durationText } from "../../../config/duration.ts";
import type { DistributedConfig, RateLimitConfig, ZoneConfig } from "./config.ts";

function duration<T extends Record<string, unknown>>(
  f: Fields<T>,
  key: keyof T & string,
): string | undefined {
  if (!f.has(key)) return undefined;
  const v = durationText(f.take(key));
  if (v === undefined) f.problems.add(f.at(key), "must be a duration");
  return v;
}

function zoneLines(z: Fields<ZoneConfig>): Line[] | null {
  const out: Line[] = [];
  for (const [i, set] of (z.arr("match") ?? []).entries()) {
    const lines = nestedSetLines(set, childPath(z.at("match"), i), z.problems);
    if (!lines) return null;
    out.push(line(["match"], lines));
  }
  const key = z.str("key");
  if (key !== undefined && key !== "") out.push(line(["key", key]));
  const window = duration(z, "window");
  if (window !== undefined) out.push(line(["window", window]));
  const events = z.num("max_events");
  if (events !== undefined) out.push(line(["events", String(events)]));
  for (const k of ["ipv4_prefix", "ipv6_prefix"] as const) {
    const v = z.num(k);
    if (v) out.push(line([k, String(v)]));
  }
  z.done("a rate_limit zone");
  return out;
}

/** `rate_limit` → `rate_limit { ... }`. */
export const writer: HandlerReverser<RateLimitConfig> = (f) => {
  const block: Line[] = [];
  const zones = f.obj("rate_limits") ?? {};
  for (const [name, raw] of Object.entries(zones)) {
    const at = childPath(f.at("rate_limits"), name);
    if (!isObject(raw)) {
      f.problems.add(at, "a zone must be an object");
      return null;
    }
    const lines = zoneLines(new Fields<ZoneConfig>(raw, at, f.problems));
    if (!lines) return null;
    block.push(line([bare("zone"), word(name)], lines));
  }
  const dist = f.has("distributed") ? f.fields("distributed") : undefined;
  if (dist) {
    const d = dist as unknown as Fields<DistributedConfig>;
    const lines: Line[] = [];
    for (const k of ["read_interval", "write_interval", "purge_age"] as const) {
      const v = duration(d, k);
      if (v !== undefined) lines.push(line([k, v]));
    }
    d.done("distributed rate limiting");
    block.push(line(["distributed"], lines.length ? lines : undefined));
  }
  if (f.bool("log_key") === true) block.push(line(["log_key"]));
  if (f.bool("disable_metrics") === true) block.push(line(["disable_metrics"]));
  const jitter = f.num("jitter");
  if (jitter) block.push(line(["jitter", String(jitter)]));
  const sweep = duration(f, "sweep_interval");
  if (sweep !== undefined) block.push(line(["sweep_interval", sweep]));
  if (f.has("storage")) {
    f.problems.add(
      f.at("storage"),
      "a storage of its own has no Gatehousefile form here; the global storage option is shared",
    );
    return null;
  }
  return { name: "rate_limit", args: [], block: block.length ? block : undefined };
};
