/**
 * Matcher configs that are not JSON objects (a list of hosts, paths or methods; a protocol
 * name), read with the messages of the shared decoder (`config/decode.ts`), which reads
 * objects.
 *
 * @module
 */
import { ConfigError } from "../../config/error.ts";

/**
 * A matcher config that must be an array of strings (`<path>: must be an array of strings`).
 *
 * @example
 * ```ts
 * import { stringList } from "./values.ts";
 * stringList(["GET"], "http.matchers.method"); // ["GET"]
 * ```
 */
export function stringList(raw: unknown, path: string): string[] {
  if (!Array.isArray(raw) || raw.some((s) => typeof s !== "string")) {
    throw new ConfigError("invalid_config", `${path}: must be an array of strings`, { path });
  }
  return raw as string[];
}

/**
 * A matcher config that must be a string (`<path>: must be a string`).
 *
 * @example
 * ```ts
 * import { stringValue } from "./values.ts";
 * stringValue("https", "http.matchers.protocol"); // "https"
 * ```
 */
export function stringValue(raw: unknown, path: string): string {
  if (typeof raw !== "string") {
    throw new ConfigError("invalid_config", `${path}: must be a string`, { path });
  }
  return raw;
}
