/**
 * The config of `http.handlers.rate_limit`, field by field as the `Handler`, `RateLimit` and
 * `DistributedRateLimiting` structs of github.com/mholt/caddy-ratelimit (`handler.go`,
 * `ratelimit.go`, `distributed.go`), and its decoder. The JSON decoder, the `rate_limit`
 * directive (`caddyfile.ts`) and the writer (`writer.ts`) make or read this type.
 *
 * @module
 */
import { Decoder, type Raw } from "../../../config/decode.ts";
import { durationMs } from "../../../config/duration.ts";

/** A JSON duration: a Go duration string (`"1m"`) or an integer of nanoseconds. */
export type JsonDuration = string | number;

/** One rate limit zone (`RateLimit`): a number of events per sliding window, per key. */
export interface ZoneConfig {
  /** Matcher sets (OR of ANDs) choosing the requests the zone counts; all when absent. */
  match?: Record<string, unknown>[];
  /**
   * What tells rate limiters of the zone apart (placeholders allowed): a constant key makes
   * one limiter for every request, `{http.request.remote.host}` one per client address.
   */
  key?: string;
  /** Events allowed in the window (at least 1). */
  max_events?: number;
  /** The sliding window (greater than zero). */
  window?: JsonDuration;
  /** Group IPv4 keys by this many leading bits (`24`: one limiter per /24); 0 = each address. */
  ipv4_prefix?: number;
  /** Group IPv6 keys by this many leading bits (`64`: one limiter per /64); 0 = each address. */
  ipv6_prefix?: number;
}

/** Distributed rate limiting (`DistributedRateLimiting`): counts shared through storage. */
export interface DistributedConfig {
  /** How often this instance writes its counts to storage (default 5s). */
  write_interval?: JsonDuration;
  /** How often the other instances' counts are read from storage (default 5s). */
  read_interval?: JsonDuration;
  /** Other instances' state files older than this are deleted (default: never). */
  purge_age?: JsonDuration;
}

/** `http.handlers.rate_limit`. */
export type RateLimitConfig = {
  /** The module name. */
  handler: "rate_limit";
  /** The zones by name; a name is global: handlers naming the same zone share its state. */
  rate_limits?: Record<string, ZoneConfig>;
  /** Random extra on `Retry-After`, as a fraction of the wait (`0.2`: up to 20% more). */
  jitter?: number;
  /** How often limiters whose events all left their window are dropped (default 1m). */
  sweep_interval?: JsonDuration;
  /** Share counts with every instance using the same storage. */
  distributed?: DistributedConfig;
  /** The storage counts are shared through (a `caddy.storage.*` module); the config's own when absent. */
  storage?: Raw;
  /** Log the key of a limit that was exceeded (off by default: keys may be personal data). */
  log_key?: boolean;
  /** No metrics for this handler (rate_limit exports none; accepted for configs that set it). */
  disable_metrics?: boolean;
};

/** The fields of {@linkcode RateLimitConfig}. */
export const RATE_LIMIT_FIELDS: readonly (keyof RateLimitConfig)[] = [
  "handler",
  "rate_limits",
  "jitter",
  "sweep_interval",
  "distributed",
  "storage",
  "log_key",
  "disable_metrics",
];

const ZONE_FIELDS: readonly (keyof ZoneConfig)[] = [
  "match",
  "key",
  "max_events",
  "window",
  "ipv4_prefix",
  "ipv6_prefix",
];

const DISTRIBUTED_FIELDS: readonly (keyof DistributedConfig)[] = [
  "write_interval",
  "read_interval",
  "purge_age",
];

/**
 * Most events one zone may allow per window: each limiter keeps one timestamp per event in
 * its window, so a limiter of a zone allowing N events holds up to N numbers.
 */
export const MAX_EVENTS_LIMIT = 10_000_000;

/** The default of `sweep_interval` and of both distributed intervals, in ms. */
export const DEFAULT_SWEEP_MS = 60_000;
/** The default distributed read and write interval, in ms. */
export const DEFAULT_SYNC_MS = 5_000;
/** Shortest distributed interval and sweep interval accepted, in ms. */
export const MIN_INTERVAL_MS = 10;

function positiveDuration(d: Decoder, key: string, what: string): JsonDuration | undefined {
  const v = d.value(key);
  if (v === undefined || v === null) return undefined;
  const ms = durationMs(v, d.at(key));
  if (!(ms > 0)) d.failAt(key, `${what} must be greater than zero`);
  return v as JsonDuration;
}

function interval(d: Decoder, key: string): JsonDuration | undefined {
  const v = positiveDuration(d, key, key);
  if (v !== undefined && durationMs(v) < MIN_INTERVAL_MS) {
    d.failAt(key, `must be at least ${MIN_INTERVAL_MS}ms`);
  }
  return v;
}

function prefix(z: Decoder, key: "ipv4_prefix" | "ipv6_prefix", max: number): number | undefined {
  const v = z.number(key);
  if (v === undefined) return undefined;
  if (!Number.isInteger(v) || v < 0 || v > max) z.failAt(key, `must be between 0 and ${max}`);
  return v;
}

function decodeZone(z: Decoder): ZoneConfig {
  z.fields(ZONE_FIELDS);
  const out: ZoneConfig = {};
  const match = z.array("match");
  if (match) {
    match.forEach((m, i) => Decoder.of(m, `${z.at("match")}[${i}]`));
    out.match = match as Record<string, unknown>[];
  }
  const key = z.string("key");
  if (key !== undefined) out.key = key;
  const window = positiveDuration(z, "window", "window");
  if (window === undefined) z.fail("window must be greater than zero");
  out.window = window;
  const events = z.number("max_events");
  if (events === undefined || !Number.isInteger(events) || events < 1) {
    z.failAt("max_events", "must be a whole number of at least 1");
  }
  if (events > MAX_EVENTS_LIMIT) {
    z.failAt("max_events", `must be at most ${MAX_EVENTS_LIMIT.toLocaleString("en")}`);
  }
  out.max_events = events;
  const v4 = prefix(z, "ipv4_prefix", 32);
  if (v4 !== undefined) out.ipv4_prefix = v4;
  const v6 = prefix(z, "ipv6_prefix", 128);
  if (v6 !== undefined) out.ipv6_prefix = v6;
  return out;
}

/**
 * Decodes and checks a `rate_limit` config (types, known fields, each zone's window and
 * events, the intervals, the jitter); matchers and the storage module are provisioned later.
 *
 * @example
 * ```ts
 * import { decodeRateLimit } from "./config.ts";
 * const c = decodeRateLimit({
 *   handler: "rate_limit",
 *   rate_limits: { per_ip: { key: "{http.request.remote.host}", window: "1m", max_events: 100 } },
 * });
 * c.rate_limits?.per_ip.max_events; // 100
 * ```
 */
export function decodeRateLimit(raw: Raw): RateLimitConfig {
  const d = new Decoder(raw, "http.handlers.rate_limit").fields(RATE_LIMIT_FIELDS);
  const out: RateLimitConfig = { handler: "rate_limit" };
  const zones = d.object("rate_limits");
  if (zones) {
    out.rate_limits = {};
    for (const name of Object.keys(zones.raw)) {
      if (name === "") zones.fail("a zone needs a name");
      const z = zones.object(name);
      if (z) out.rate_limits[name] = decodeZone(z);
    }
  }
  const jitter = d.number("jitter");
  if (jitter !== undefined) {
    if (jitter < 0) d.failAt("jitter", "jitter must be at least zero");
    out.jitter = jitter;
  }
  const sweep = interval(d, "sweep_interval");
  if (sweep !== undefined) out.sweep_interval = sweep;
  const dist = d.object("distributed");
  if (dist) {
    dist.fields(DISTRIBUTED_FIELDS);
    const o: DistributedConfig = {};
    const w = interval(dist, "write_interval");
    if (w !== undefined) o.write_interval = w;
    const r = interval(dist, "read_interval");
    if (r !== undefined) o.read_interval = r;
    const p = positiveDuration(dist, "purge_age", "purge_age");
    if (p !== undefined) o.purge_age = p;
    out.distributed = o;
  }
  const storage = d.rawObject("storage");
  if (storage) {
    if (typeof storage.module !== "string" || storage.module === "") {
      d.failAt("storage", 'needs a "module" naming a caddy.storage module');
    }
    if (!dist) d.failAt("storage", "is where distributed counts are shared: set distributed too");
    out.storage = storage;
  }
  const logKey = d.bool("log_key");
  if (logKey !== undefined) out.log_key = logKey;
  const noMetrics = d.bool("disable_metrics");
  if (noMetrics !== undefined) out.disable_metrics = noMetrics;
  return out;
}
