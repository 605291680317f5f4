/**
 * `method` matcher: the request method is one of the listed (upper-case) methods.
 *
 * @module
 */
import type { ModuleDefinition } from "../../module/mod.ts";
import { ConfigError } from "../../config/error.ts";
import type { RequestMatcher } from "../handler.ts";

/** Builds a method matcher. */
export function methodMatcher(raw: unknown): RequestMatcher {
  if (!Array.isArray(raw) || raw.some((s) => typeof s !== "string")) {
    throw new ConfigError(
      "invalid_config",
      "http.matchers.method: must be an array of strings",
    );
  }
  const methods = new Set((raw as string[]).map((m) => m.toUpperCase()));
  if (methods.size === 1) {
    const only = [...methods][0];
    return { match: (c) => c.method === only };
  }
  return { match: (c) => methods.has(c.method) };
}

/** Registry entry. */
export const methodMatcherModule: ModuleDefinition<RequestMatcher> = {
  id: "http.matchers.method",
  create: (raw) => methodMatcher(raw),
};
