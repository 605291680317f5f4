/**
 * The one duration parser of the server, for JSON values and Gatehousefile arguments alike:
 * Caddy's `caddy.ParseDuration` (Go's `time.ParseDuration` plus `d` for days), exact to Go's
 * rules and error messages, in nanoseconds; {@linkcode durationMs} reads a JSON value (an
 * integer of nanoseconds or a duration string, as Caddy's `Duration.UnmarshalJSON`) into the
 * milliseconds the server runs on.
 *
 * @module
 */
import { ConfigError } from "./error.ts";
import { goParseFloat, goQuote } from "./go_values.ts";

const UNIT_NS: Record<string, bigint> = {
  ns: 1n,
  us: 1000n,
  "µs": 1000n,
  "μs": 1000n,
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

/**
 * Go's `time.ParseDuration`, in nanoseconds; throws a `ConfigError` with Go's message.
 *
 * @example
 * ```ts
 * import { goParseDuration } from "./duration.ts";
 * goParseDuration("1.5s"); // 1500000000
 * ```
 */
export function goParseDuration(orig: string): number {
  const bad = () => new ConfigError("invalid_config", `time: invalid duration ${goQuote(orig)}`);
  let s = orig;
  let neg = false;
  if (s !== "" && (s[0] === "-" || s[0] === "+")) {
    neg = s[0] === "-";
    s = s.slice(1);
  }
  if (s === "0") return 0;
  if (s === "") throw bad();
  let total = 0n;
  while (s !== "") {
    const m = /^(\d*)(?:\.(\d*))?/.exec(s)!;
    const intPart = m[1], frac = m[2];
    if (intPart === "" && (frac === undefined || frac === "")) throw bad();
    s = s.slice(m[0].length);
    const u = /^[^\d.]*/.exec(s)![0];
    if (u === "") {
      throw new ConfigError("invalid_config", `time: missing unit in duration ${goQuote(orig)}`);
    }
    const unit = UNIT_NS[u];
    if (unit === undefined) {
      throw new ConfigError(
        "invalid_config",
        `time: unknown unit ${goQuote(u)} in duration ${goQuote(orig)}`,
      );
    }
    s = s.slice(u.length);
    let v = BigInt(intPart || "0") * unit;
    if (frac) v += (BigInt(frac) * unit) / 10n ** BigInt(frac.length);
    total += v;
    if (total > 9223372036854775807n) throw bad();
  }
  return Number(neg ? -total : total);
}

/** Go's `strconv.FormatFloat(f, 'f', -1, 64)` for ordinary values. */
function formatFloat(f: number): string {
  if (Number.isInteger(f)) return f.toFixed(0);
  return String(f).includes("e") ? f.toFixed(20).replace(/0+$/, "") : String(f);
}

/**
 * Caddy's `ParseDuration`: Go durations plus days (`1d12h`), in nanoseconds; throws a
 * `ConfigError` with Caddy's and Go's messages.
 *
 * @example
 * ```ts
 * import { parseDuration } from "./duration.ts";
 * parseDuration("1m30s"); // 90000000000
 * parseDuration("1d"); // 86400000000000
 * ```
 */
export function parseDuration(s: string): number {
  if (s.length > 1024) {
    throw new ConfigError("invalid_config", "parsing duration: input string too long");
  }
  let inNumber = false;
  let numStart = 0;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    if (ch === "d") {
      const days = goParseFloat(s.slice(numStart, i));
      const hours = formatFloat(days * 24);
      s = s.slice(0, numStart) + hours + "h" + s.slice(i + 1);
      i--;
      continue;
    }
    if (!inNumber) numStart = i;
    inNumber = (ch >= "0" && ch <= "9") || ch === "." || ch === "-" || ch === "+";
  }
  return goParseDuration(s);
}

/** A duration as a JSON config holds it: an integer of nanoseconds or a duration string. */
export type Duration = number | string;

/**
 * A duration in a JSON config, in milliseconds: an integer is nanoseconds, a string is read by
 * {@linkcode parseDuration} (Caddy's `Duration.UnmarshalJSON`). Throws a `ConfigError` that
 * names `path`.
 *
 * @example
 * ```ts
 * import { durationMs } from "./duration.ts";
 * durationMs("1m30s", "x.timeout"); // 90000
 * durationMs(1_000_000, "x.timeout"); // 1
 * ```
 */
export function durationMs(v: unknown, path = "duration"): number {
  if (typeof v === "number" && Number.isFinite(v)) return v / 1e6;
  if (typeof v !== "string") {
    throw new ConfigError(
      "invalid_config",
      `${path}: duration must be a string or nanoseconds`,
      { path },
    );
  }
  try {
    return parseDuration(v) / 1e6;
  } catch (e) {
    throw new ConfigError("invalid_config", `${path}: invalid duration ${JSON.stringify(v)}`, {
      path,
      cause: e,
    });
  }
}

const TEXT_UNITS: [string, number][] = [
  ["h", 3_600_000_000_000],
  ["m", 60_000_000_000],
  ["s", 1_000_000_000],
  ["ms", 1_000_000],
  ["us", 1_000],
  ["ns", 1],
];

/**
 * The Gatehousefile text of a JSON duration (the inverse of {@linkcode parseDuration}): a
 * string as it is, nanoseconds in the largest unit that divides them evenly (`90s`, `1500ms`);
 * undefined when the value is not a duration.
 *
 * @example
 * ```ts
 * import { durationText } from "./duration.ts";
 * durationText(90_000_000_000); // "90s"
 * ```
 */
export function durationText(v: unknown): string | undefined {
  if (typeof v === "string") return v;
  if (typeof v !== "number" || !Number.isInteger(v)) return undefined;
  if (v === 0) return "0s";
  if (v < 0) return "-" + durationText(-v);
  for (const [u, n] of TEXT_UNITS) if (v % n === 0) return `${v / n}${u}`;
  return `${v}ns`;
}

/** `whole.frac` as Go prints a fraction (`digits` places, trailing zeros dropped). */
function goFraction(whole: bigint, frac: bigint, digits: number): string {
  const f = frac.toString().padStart(digits, "0").replace(/0+$/, "");
  return f ? `${whole}.${f}` : `${whole}`;
}

/**
 * Go's `time.Duration.String` of `ms` milliseconds (what Caddy's messages print):
 * `168h0m0s`, `1.5s`, `250ms`, `0s`.
 *
 * @example
 * ```ts
 * import { goDurationString } from "./duration.ts";
 * goDurationString(7 * 24 * 3_600_000); // "168h0m0s"
 * goDurationString(1500); // "1.5s"
 * ```
 */
export function goDurationString(ms: number): string {
  let ns = BigInt(Math.trunc(ms)) * 1_000_000n + BigInt(Math.round((ms % 1) * 1e6));
  const sign = ns < 0n ? "-" : "";
  if (ns < 0n) ns = -ns;
  if (ns === 0n) return "0s";
  if (ns < 1000n) return `${sign}${ns}ns`;
  if (ns < 1_000_000n) return `${sign}${goFraction(ns / 1000n, ns % 1000n, 3)}µs`;
  if (ns < 1_000_000_000n) return `${sign}${goFraction(ns / 1_000_000n, ns % 1_000_000n, 6)}ms`;
  const h = ns / 3_600_000_000_000n;
  const m = (ns / 60_000_000_000n) % 60n;
  const s = goFraction((ns / 1_000_000_000n) % 60n, ns % 1_000_000_000n, 9);
  return `${sign}${h > 0n ? `${h}h${m}m` : m > 0n ? `${m}m` : ""}${s}s`;
}
