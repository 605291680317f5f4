/**
 * Small decoders for module configs: each module parses its raw JSON once at provision time
 * with these and fails with a typed ConfigError on anything unexpected.
 *
 * @module
 */
import { ConfigError } from "../config/error.ts";
import { durationMs } from "../config/duration.ts";
import { noteAcceptedFields } from "../config/decode.ts";

/** A raw JSON object. */
export type Raw = Record<string, unknown>;

/** Throws when `config` has a field not in `allowed` (Caddy decodes strictly). */
export function checkFields(config: Raw, allowed: readonly string[], where: string): void {
  noteAcceptedFields(where, allowed);
  for (const k of Object.keys(config)) {
    if (k === "@id" || allowed.includes(k)) continue;
    throw new ConfigError("unknown_field", `${where}: unknown field "${k}"`);
  }
}

function bad(where: string, what: string): never {
  throw new ConfigError("invalid_config", `${where}: ${what}`);
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

/** An optional duration field in milliseconds. */
export function optDuration(config: Raw, key: string, where: string): number | undefined {
  const v = config[key];
  if (v === undefined || v === null) return undefined;
  return durationMs(v, `${where}.${key}`);
}
