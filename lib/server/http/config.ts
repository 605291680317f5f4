/**
 * Small decoders for module configs: each module parses its raw JSON once at provision time
 * with these and fails with a typed HttpConfigError on anything unexpected.
 *
 * @module
 */
import { HttpConfigError } from "./errors.ts";

/** A raw JSON object. */
export type Raw = Record<string, unknown>;

let recorder: ((where: string, allowed: readonly string[]) => void) | null = null;

/**
 * Calls `fn` with the field list of every `checkFields` from now on (null stops it): the field
 * audit (tests/server/fields/audit.test.ts) learns from it which fields each decoder accepts.
 *
 * @example
 * ```ts
 * import { checkFields, recordAcceptedFields } from "./config.ts";
 * const seen: string[] = [];
 * recordAcceptedFields((where, allowed) => seen.push(`${where}: ${allowed.join(",")}`));
 * checkFields({}, ["a"], "x");
 * recordAcceptedFields(null);
 * ```
 */
export function recordAcceptedFields(
  fn: ((where: string, allowed: readonly string[]) => void) | null,
): void {
  recorder = fn;
}

/**
 * Tells the field audit (see {@link recordAcceptedFields}) the fields a decoder with a
 * field check of its own accepts at `where`.
 *
 * @example
 * ```ts
 * import { noteAcceptedFields } from "./config.ts";
 * noteAcceptedFields("tls.automation", ["policies"]);
 * ```
 */
export function noteAcceptedFields(where: string, allowed: readonly string[]): void {
  recorder?.(where, allowed);
}

/** Throws when `config` has a field not in `allowed` (Caddy decodes strictly). */
export function checkFields(config: Raw, allowed: readonly string[], where: string): void {
  recorder?.(where, allowed);
  for (const k of Object.keys(config)) {
    if (k === "@id" || allowed.includes(k)) continue;
    throw new HttpConfigError("unknown_field", `${where}: unknown field "${k}"`);
  }
}

function bad(where: string, what: string): never {
  throw new HttpConfigError("invalid_config", `${where}: ${what}`);
}

/** An optional string field. */
export function optString(config: Raw, key: string, where: string): string | undefined {
  const v = config[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") bad(where, `"${key}" must be a string`);
  return v;
}

/** An optional boolean field. */
export function optBool(config: Raw, key: string, where: string): boolean | undefined {
  const v = config[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "boolean") bad(where, `"${key}" must be a boolean`);
  return v;
}

/** An optional number field. */
export function optNumber(config: Raw, key: string, where: string): number | undefined {
  const v = config[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number" || !Number.isFinite(v)) bad(where, `"${key}" must be a number`);
  return v;
}

/** An optional array of strings. */
export function optStrings(config: Raw, key: string, where: string): string[] | undefined {
  const v = config[key];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((s) => typeof s !== "string")) {
    bad(where, `"${key}" must be an array of strings`);
  }
  return v as string[];
}

/** An optional object field. */
export function optObject(config: Raw, key: string, where: string): Raw | undefined {
  const v = config[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "object" || Array.isArray(v)) bad(where, `"${key}" must be an object`);
  return v as Raw;
}

/** An optional array field (elements unchecked). */
export function optArray(config: Raw, key: string, where: string): unknown[] | undefined {
  const v = config[key];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) bad(where, `"${key}" must be an array`);
  return v;
}

/** Asserts a value is a JSON object. */
export function asObject(v: unknown, where: string): Raw {
  if (typeof v !== "object" || v === null || Array.isArray(v)) bad(where, "must be an object");
  return v as Raw;
}

/** A map of header name to string list (`http.Header` JSON). */
export function optHeaderMap(
  config: Raw,
  key: string,
  where: string,
): Record<string, string[]> | undefined {
  const o = optObject(config, key, where);
  if (!o) return undefined;
  const out: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(o)) {
    if (!Array.isArray(v) || v.some((s) => typeof s !== "string")) {
      bad(where, `"${key}.${k}" must be an array of strings`);
    }
    out[k] = v as string[];
  }
  return out;
}

const UNITS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  "µs": 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/**
 * Parses a Caddy duration into milliseconds: an integer of nanoseconds, or a Go duration
 * string such as `"1m30s"`, `"250ms"`, `"2d"`.
 *
 * @example
 * ```ts
 * import { parseDuration } from "./config.ts";
 * parseDuration("1m30s"); // 90000
 * ```
 */
export function parseDuration(v: unknown, where = "duration"): number {
  if (typeof v === "number") return v / 1e6;
  if (typeof v !== "string") bad(where, "duration must be a string or nanoseconds");
  let s = v.trim();
  // Go's time.ParseDuration takes a sign: "-1s" (Caddy reads negative values as "off")
  const sign = s.startsWith("-") ? -1 : 1;
  if (s.startsWith("-") || s.startsWith("+")) s = s.slice(1);
  if (s === "0") return 0;
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h|d)/gy;
  let total = 0;
  let pos = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(s)) !== null) {
    total += parseFloat(m[1]) * UNITS[m[2]];
    pos = re.lastIndex;
  }
  if (pos !== s.length || s.length === 0) bad(where, `invalid duration ${JSON.stringify(v)}`);
  return sign * total;
}

/** An optional duration field in milliseconds. */
export function optDuration(config: Raw, key: string, where: string): number | undefined {
  const v = config[key];
  if (v === undefined || v === null) return undefined;
  return parseDuration(v, `${where}.${key}`);
}
